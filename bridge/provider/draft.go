package provider

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/ttalk/mcpbridge/internal/redact"
)

// refusingLoader keeps the meta-schema check from reading files or fetching URLs that a
// server's schema names.
type refusingLoader struct{}

func (refusingLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external reference %q not loaded", url)
}

// checkDraft202012 validates a schema against the JSON Schema 2020-12 meta-schema whatever
// its "$schema" says (Anthropic checks 2020-12). It returns "" when the schema is valid or
// the only problem is an external reference (reported by its own rule).
func checkDraft202012(root *object) string {
	c := clone(root).(*object)
	c.del("$schema")
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(encode(c)))
	if err != nil {
		return err.Error()
	}
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	comp.UseLoader(refusingLoader{})
	const loc = "urn:mcpbridge:parameters"
	if err := comp.AddResource(loc, doc); err != nil {
		return err.Error()
	}
	_, err = comp.Compile(loc)
	if err == nil {
		return ""
	}
	var sv *jsonschema.SchemaValidationError
	if errors.As(err, &sv) {
		return metaSchemaMessage(sv.Err)
	}
	return ""
}

// metaSchemaMessage reduces the validator's report to its first leaf: "at /properties/a:
// got boolean, want number".
func metaSchemaMessage(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return redact.Line(err.Error(), 200)
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	msg := ve.Error()
	if i := strings.LastIndex(msg, "\n"); i >= 0 {
		msg = msg[i+1:]
	}
	msg = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(msg), "-"))
	return redact.Line(msg, 200)
}
