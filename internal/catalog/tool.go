package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"sort"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/internal/jsonstr"
	"github.com/ttalk/mcpbridge/internal/schemaguard"
	"github.com/ttalk/mcpbridge/internal/tasks"
)

// Tool is one tool as the server listed it, with what the bridge derived from it. A Tool
// never changes once it is in the bridge's catalogue: calls read it without a lock (a tool
// that disappears is replaced by a copy marked Gone, see Merge).
type Tool struct {
	Name         string
	Label        string          // `tool "<name>"`, for errors (built once, not per call)
	Listed       *mcp.Tool       // the listing's name, title, description, annotations and icons (see NewTool)
	Schema       json.RawMessage // inputSchema as sent (plus the properties:{} fix)
	Meta         json.RawMessage
	OutputSchema json.RawMessage
	Validator    *schemaguard.Schema // nil: validation off for this tool
	OutValidator *schemaguard.Schema
	UI           apps.ToolUI
	Gone         bool                    // the server stopped offering it after a redial
	TaskSupport  string                  // execution.taskSupport as listed: "required", "optional", "forbidden" or ""
	Nulls        *schemaguard.NullPolicy // which null arguments the Handler drops
}

// NewTool keeps of t only what calls and Tool records read: go-sdk's decoded inputSchema,
// outputSchema and _meta (maps several times the size of their JSON) are dropped, since
// the bridge keeps the raw bytes instead.
func NewTool(t *mcp.Tool) *Tool {
	slim := &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, Annotations: t.Annotations, Icons: t.Icons}
	return &Tool{Name: t.Name, Label: fmt.Sprintf("tool %q", t.Name), Listed: slim, Nulls: &schemaguard.NullPolicy{}}
}

// Retryable reports whether a call that may have reached the server can be sent again.
func (t *Tool) Retryable() bool {
	a := t.Listed.Annotations
	return a != nil && (a.ReadOnlyHint || a.IdempotentHint)
}

// Same reports whether b, from a new listing, is a as it was listed before.
func Same(a, b *Tool) bool {
	return bytes.Equal(a.Schema, b.Schema) && bytes.Equal(a.Meta, b.Meta) &&
		bytes.Equal(a.OutputSchema, b.OutputSchema) && a.TaskSupport == b.TaskSupport &&
		a.Validator == b.Validator && a.OutValidator == b.OutValidator &&
		reflect.DeepEqual(a.Listed, b.Listed) && reflect.DeepEqual(a.UI, b.UI)
}

// Converted is a listing converted (Converter.Convert): its tools by name and the names
// offered to the model in listing order; AppOnly are the names only MCP Apps see. A user's
// listing is kept as one; never changed once made.
type Converted struct {
	Remote  map[string]*Tool
	Model   []string
	AppOnly []string
}

// Converter derives a server's Tools from its listings: the server's settings and the
// bridge's callbacks.
type Converter struct {
	// Include and Exclude are the server's globs (Selected).
	Include, Exclude []string
	// MaxDescriptionBytes caps a description (CapDescription).
	MaxDescriptionBytes int
	// Validate compiles the schemas (the bridge's Options.DisableValidation off).
	Validate bool
	// Schemas measures and compiles schemas; Schema gives a schema's validator, or nil and
	// a problem saying why validation is off (what: "inputSchema" or "outputSchema").
	Schemas *schemaguard.Cache
	Schema  func(ctx context.Context, raw json.RawMessage, what string) (*schemaguard.Schema, string)
	// Required says why a tool whose execution.taskSupport is "required" cannot be offered
	// ("": it can).
	Required func() string
	// Problem receives each problem found with a tool; skipped: the tool is left out.
	Problem func(tool, problem string, skipped bool)
	Log     *slog.Logger
}

// Convert derives the Tools of a listing: tools (decoded by go-sdk) and raw (the tool
// objects the transport captured, by name). Schemas are measured against the budgets the
// first time their bytes are seen, and compiled while ctx allows (later ones compile on
// first use). go-sdk's decoded copies are released afterwards (Release).
func (c Converter) Convert(ctx context.Context, tools []*mcp.Tool, raw map[string]json.RawMessage) Converted {
	c.Schemas.Begin()
	defer Release(tools, raw)
	defer c.Schemas.End()
	out := Converted{Remote: make(map[string]*Tool, len(tools))}
	wanted := func(name string) bool { return Selected(c.Include, c.Exclude, name) }
	for _, t := range tools {
		if t == nil || !wanted(t.Name) {
			continue
		}
		if _, dup := out.Remote[t.Name]; dup {
			c.Problem(t.Name, "listed twice; the later entry is ignored", false)
			continue
		}
		var parts struct {
			InputSchema  json.RawMessage `json:"inputSchema"`
			Meta         json.RawMessage `json:"_meta"`
			OutputSchema json.RawMessage `json:"outputSchema"`
			Execution    struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		}
		if r, ok := raw[t.Name]; ok {
			_ = json.Unmarshal(r, &parts)
		} else {
			// The transport saw no raw listing (it always should); fall back to re-encoding.
			parts.InputSchema = jsonstr.Marshal(t.InputSchema)
			if t.Meta != nil {
				parts.Meta = jsonstr.Marshal(t.Meta)
			}
			if t.OutputSchema != nil {
				parts.OutputSchema = jsonstr.Marshal(t.OutputSchema)
			}
			c.Log.Debug("raw tools/list bytes not captured; schema re-encoded", "tool", t.Name)
		}
		schema, err := schemaguard.CheckSchema(parts.InputSchema)
		if err != nil {
			c.Problem(t.Name, err.Error(), true)
			continue
		}
		if fixed, ok := schemaguard.ValidUTF8(schema); !ok {
			schema = fixed
			c.Problem(t.Name, "inputSchema is not valid UTF-8: invalid bytes replaced with U+FFFD in Parameters", false)
		}
		if parts.Execution.TaskSupport == "required" {
			// A plain tools/call is refused by the server; offering it would only fail.
			if why := c.Required(); why != "" {
				c.Problem(t.Name, why, true)
				continue
			}
		}
		rt := NewTool(t)
		if d, ok := CapDescription(rt.Listed.Description, c.MaxDescriptionBytes); !ok {
			rt.Listed.Description = d
			c.Problem(t.Name, fmt.Sprintf("description is %d bytes, over Options.MaxDescriptionBytes (%d): cut", len(t.Description), c.MaxDescriptionBytes), false)
		}
		rt.TaskSupport = parts.Execution.TaskSupport
		rt.Schema, rt.Meta, rt.OutputSchema = schema, parts.Meta, parts.OutputSchema
		var uiProblems []string
		rt.UI, uiProblems = apps.ParseToolUI(t.Meta)
		for _, p := range uiProblems {
			c.Problem(t.Name, "MCP Apps metadata: "+p, false)
		}
		if c.Validate {
			var p string
			if rt.Validator, p = c.Schema(ctx, schema, "inputSchema"); p != "" {
				c.Problem(t.Name, p, false)
			}
			if len(parts.OutputSchema) > 0 {
				if rt.OutValidator, p = c.Schema(ctx, parts.OutputSchema, "outputSchema"); p != "" {
					c.Problem(t.Name, p, false)
				}
			}
		}
		out.Remote[t.Name] = rt
		if rt.UI.ModelVisible() {
			out.Model = append(out.Model, t.Name)
		} else {
			out.AppOnly = append(out.AppOnly, t.Name)
		}
	}
	for name := range raw {
		if _, ok := out.Remote[name]; !ok && wanted(name) && !slices.ContainsFunc(tools, func(t *mcp.Tool) bool { return t != nil && t.Name == name }) {
			c.Problem(name, DroppedBySDK(raw[name]), true)
		}
	}
	return out
}

// Merge makes next, a new listing, follow prev, the catalogue it replaces: a tool listed
// again as it was keeps prev's Tool (and bytes), so that a re-listing that finds nothing
// changed holds no second copy of the catalogue; a tool of prev no longer listed is in
// next as a copy marked Gone. It returns the names that appeared and disappeared, sorted.
func Merge(prev, next map[string]*Tool) (added, removed []string) {
	for name, rt := range next {
		old := prev[name]
		switch {
		case old == nil || old.Gone:
			added = append(added, rt.Name)
		case Same(old, rt):
			next[name] = old
		}
	}
	for name, old := range prev {
		if _, ok := next[name]; !ok {
			if !old.Gone {
				removed = append(removed, name)
			}
			gone := *old
			gone.Gone = true
			next[name] = &gone
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	return added, removed
}

// TaskTools lists the tools of a catalogue that declare task support, by name.
func TaskTools(remote map[string]*Tool) []tasks.Tool {
	var out []tasks.Tool
	for name, rt := range remote {
		if !rt.Gone && (rt.TaskSupport == "required" || rt.TaskSupport == "optional") {
			out = append(out, tasks.Tool{Tool: name, Support: rt.TaskSupport})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tool < out[j].Tool })
	return out
}
