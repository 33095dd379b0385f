package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/internal/redact"
)

// elicit asks the host (Config.Ask) for the answer to an extension task's elicitation,
// checked the way go-sdk checks answers to elicitation/create: the form mode's flat schema,
// the content against it, and the schema's defaults filled in (SEP-1034).
func (c *Client) elicit(ctx context.Context, taskID string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if c.cfg.Ask == nil {
		return nil, errors.New("the task needs input from the user (elicitation), and Options.OnElicitation is not set")
	}
	mode := p.Mode
	if mode == "" {
		mode = "form"
	}
	var props map[string]elicitProp
	switch mode {
	case "form":
		var err error
		if props, err = elicitSchema(p.RequestedSchema); err != nil {
			return nil, err
		}
	case "url":
		if p.URL == "" {
			return nil, errors.New("URL elicitation without a URL")
		}
	default:
		return nil, fmt.Errorf("unsupported elicitation mode %s", redact.Quote(mode, 64))
	}
	res, err := c.cfg.Ask(ctx, taskID, p)
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, errors.New("OnElicitation returned no result")
	}
	if res.Action == "accept" && mode == "form" {
		if res.Content == nil {
			res.Content = map[string]any{}
		}
		for name, v := range res.Content {
			pr, ok := props[name]
			if !ok {
				return nil, fmt.Errorf("elicitation answer has field %q, which the requested schema does not declare", name)
			}
			if !pr.accepts(v) {
				return nil, fmt.Errorf("elicitation answer field %q is not a %s", name, pr.Type)
			}
		}
		for name, pr := range props {
			if _, ok := res.Content[name]; !ok && pr.Default != nil {
				res.Content[name] = pr.Default
			}
		}
	}
	return res, nil
}

// elicitProp is one property of a form elicitation's flat schema.
type elicitProp struct {
	Type    string `json:"type"`
	Default any    `json:"default"`
}

func (p elicitProp) accepts(v any) bool {
	if p.Type == "" {
		return true
	}
	switch v.(type) {
	case string:
		return p.Type == "string"
	case bool:
		return p.Type == "boolean"
	case float64, int, int64, json.Number:
		return p.Type == "number" || p.Type == "integer"
	case []any:
		return p.Type == "array"
	}
	return false
}

// elicitSchema reads a form elicitation's requestedSchema: an object of primitive
// properties.
func elicitSchema(schema any) (map[string]elicitProp, error) {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("requested schema: %w", err)
	}
	var s struct {
		Type       string                `json:"type"`
		Properties map[string]elicitProp `json:"properties"`
	}
	if err := json.Unmarshal(b, &s); err != nil || s.Type != "object" {
		return nil, errors.New("the requested schema is not a flat object schema")
	}
	return s.Properties, nil
}
