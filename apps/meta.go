package apps

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Visibility values of _meta.ui.visibility.
const (
	VisibilityModel = "model" // the agent's model may see and call the tool
	VisibilityApp   = "app"   // an App of the same server may call the tool through the proxy
)

// LegacyResourceURIKey is the deprecated flat _meta key for a tool's UI resource, still
// written by ext-apps' registerAppTool next to _meta.ui.resourceUri.
const LegacyResourceURIKey = "ui/resourceUri"

// ToolUI is a tool's MCP Apps metadata. The zero value describes an ordinary tool: no UI
// resource, default visibility (model and app).
type ToolUI struct {
	// ResourceURI is the ui:// resource that renders the tool's results: _meta.ui.resourceUri
	// when it is a string starting with ui://, else the deprecated flat
	// _meta["ui/resourceUri"] under the same rule, else "". A tool with a ResourceURI is an
	// App tool.
	ResourceURI string
	// Visibility is _meta.ui.visibility: the string entries as the server sent them
	// (unknown values kept, non-strings dropped). nil means absent, which means the default
	// ["model","app"]; an empty non-nil slice means neither.
	Visibility []string
}

// IsApp reports whether the tool is an App tool, that is, names a UI resource.
func (u ToolUI) IsApp() bool { return u.ResourceURI != "" }

// ModelVisible reports whether the tool may be given to the model: visibility absent or
// containing "model". The spec forbids listing other tools to the agent.
func (u ToolUI) ModelVisible() bool {
	return u.Visibility == nil || slices.Contains(u.Visibility, VisibilityModel)
}

// AppCallable reports whether an App may call the tool through the proxy: visibility absent
// or containing "app". The spec requires refusing other tools to Apps.
func (u ToolUI) AppCallable() bool {
	return u.Visibility == nil || slices.Contains(u.Visibility, VisibilityApp)
}

// ParseToolUI reads a tool's MCP Apps metadata from its _meta as go-sdk decodes it
// ([mcp.Meta], nested objects as map[string]any, arrays as []any); values built in Go
// ([mcp.Meta] nested, []string) are accepted too. A nil meta is an ordinary tool.
//
// Malformed metadata never fails: ParseToolUI returns what it could read together with
// human-readable problems, for the caller to log (e.g. `_meta.ui.resourceUri is a number`,
// `resourceUri "http://x" does not start with ui://`, `visibility contains unknown value
// "foo"`). Quoted server values are cut to a bounded length. The rules for ill-formed
// values:
//   - A JSON null is treated as absent, silently.
//   - A resourceUri that is not a string or lacks the ui:// prefix is ignored; the legacy
//     flat key is then used if it is valid. When both keys are valid and differ, the nested
//     one wins and the difference is reported.
//   - A visibility that is a single string is read as a one-element list. Any other
//     non-array visibility yields an empty, non-nil Visibility: the tool is then neither
//     model-visible nor app-callable, erring on the side of hiding a tool whose server
//     tried to restrict it (as the AG-UI middleware does).
//   - Non-string visibility entries are dropped; unknown strings are kept and reported.
func ParseToolUI(meta map[string]any) (ToolUI, []string) {
	var (
		u        ToolUI
		problems []string
	)
	if meta == nil {
		return u, nil
	}
	var nested string // a valid _meta.ui.resourceUri, if any
	if rawUI, ok := meta["ui"]; ok && rawUI != nil {
		ui, isObj := asObject(rawUI)
		if !isObj {
			problems = append(problems, fmt.Sprintf("_meta.ui is %s, want an object", kindOf(rawUI)))
		} else {
			var p []string
			nested, p = readResourceURI(ui["resourceUri"], "_meta.ui.resourceUri")
			problems = append(problems, p...)
			if v, ok := ui["visibility"]; ok && v != nil {
				u.Visibility, p = readVisibility(v)
				problems = append(problems, p...)
			}
		}
	}
	flat, p := readResourceURI(meta[LegacyResourceURIKey], `_meta["`+LegacyResourceURIKey+`"]`)
	problems = append(problems, p...)
	switch {
	case nested != "":
		u.ResourceURI = nested
		if flat != "" && flat != nested {
			problems = append(problems, fmt.Sprintf("_meta.ui.resourceUri %s and _meta[%q] %s differ; using the former",
				quote(nested), LegacyResourceURIKey, quote(flat)))
		}
	case flat != "":
		u.ResourceURI = flat
	}
	return u, problems
}

// readResourceURI returns v when it is a string starting with ui://, else "" and (unless v
// is absent or null) a problem naming where.
func readResourceURI(v any, where string) (string, []string) {
	if v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", []string{fmt.Sprintf("%s is %s, want a string", where, kindOf(v))}
	}
	if !strings.HasPrefix(s, URIScheme) {
		return "", []string{fmt.Sprintf("%s %s does not start with %s", where, quote(s), URIScheme)}
	}
	return s, nil
}

// readVisibility reads a non-null _meta.ui.visibility.
func readVisibility(v any) ([]string, []string) {
	var entries []any
	switch v := v.(type) {
	case []any:
		entries = v
	case []string:
		entries = make([]any, len(v))
		for i, s := range v {
			entries[i] = s
		}
	case string:
		return checkVisibility([]string{v}, []string{fmt.Sprintf("_meta.ui.visibility is a string, want an array; read as [%s]", quote(v))})
	default:
		return []string{}, []string{fmt.Sprintf("_meta.ui.visibility is %s, want an array; the tool is hidden from model and apps", kindOf(v))}
	}
	vis := make([]string, 0, len(entries))
	var problems []string
	for i, e := range entries {
		s, ok := e.(string)
		if !ok {
			problems = append(problems, fmt.Sprintf("_meta.ui.visibility[%d] is %s, want a string; ignored", i, kindOf(e)))
			continue
		}
		vis = append(vis, s)
	}
	return checkVisibility(vis, problems)
}

// checkVisibility reports unknown values in vis.
func checkVisibility(vis, problems []string) ([]string, []string) {
	for _, s := range vis {
		if s != VisibilityModel && s != VisibilityApp {
			problems = append(problems, fmt.Sprintf("visibility contains unknown value %s", quote(s)))
		}
	}
	return vis, problems
}

// asObject returns v as a map when it is a JSON object as go-sdk or a Go caller builds one.
func asObject(v any) (map[string]any, bool) {
	switch v := v.(type) {
	case map[string]any:
		return v, true
	case mcp.Meta:
		return v, true
	}
	return nil, false
}

// kindOf names the JSON kind of a decoded value, with an article, for problem texts.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, json.Number:
		return "a number"
	case []any, []string:
		return "an array"
	case map[string]any, mcp.Meta:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}
