package eino

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/schema"
	"github.com/ttalk/mcpbridge/bridge"
)

// Tool is one bridge.Tool as an Eino tool.InvokableTool. Make it with NewTool or Tools; it
// is safe for concurrent use.
type Tool struct {
	t      bridge.Tool
	info   *schema.ToolInfo
	events bool
}

var _ tool.InvokableTool = (*Tool)(nil)

// Options are the choices of NewTool and Tools; nil means all defaults.
type Options struct {
	// AgentEvents sends each progress notification of a call in flight into the event
	// stream of the ADK agent whose run called the tool (adk.SendEvent), as an
	// *adk.AgentEvent whose Output.CustomizedOutput is a bridge.Progress. It replaces a
	// bridge.WithProgress callback on the run's ctx; outside an ADK agent's run the
	// notifications are dropped. (Default: false, progress goes to bridge.WithProgress.)
	AgentEvents bool
}

// NewTool converts t. The error says which tool's inputSchema Eino cannot hold.
func NewTool(t bridge.Tool, opts *Options) (*Tool, error) {
	if t.Handler == nil {
		return nil, fmt.Errorf("eino: tool %q has no handler", t.Name)
	}
	info := &schema.ToolInfo{Name: t.Name, Desc: t.Description}
	if len(t.Parameters) > 0 {
		s, err := convertSchema(t.Parameters)
		if err != nil {
			return nil, fmt.Errorf("eino: tool %q: inputSchema: %w", t.Name, err)
		}
		info.ParamsOneOf = schema.NewParamsOneOfByJSONSchema(s)
	}
	return &Tool{t: t, info: info, events: opts != nil && opts.AgentEvents}, nil
}

// Tools converts every tool of tools, in order, for compose.ToolsNodeConfig.Tools. It
// stops at the first tool NewTool refuses.
func Tools(tools bridge.Tools, opts *Options) ([]tool.BaseTool, error) {
	out := make([]tool.BaseTool, 0, len(tools))
	for _, t := range tools {
		et, err := NewTool(t, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, et)
	}
	return out, nil
}

// Bridge returns the bridge.Tool this tool calls.
func (t *Tool) Bridge() bridge.Tool { return t.t }

// Info returns the tool's name, description and parameters. The *schema.ToolInfo is the
// tool's own: callers must not change it.
func (t *Tool) Info(context.Context) (*schema.ToolInfo, error) { return t.info, nil }

// InvokableRun calls the tool on its server with the model's JSON arguments and returns
// the text the model reads. Failures the model can act on are that text with a nil error
// (see bridge.ForModel); transport failures are errors. Eino's tool options are not used.
func (t *Tool) InvokableRun(ctx context.Context, argumentsInJSON string, _ ...tool.Option) (string, error) {
	if t.events {
		var done func()
		ctx, done = withAgentEvents(ctx)
		defer done()
	}
	text, err := t.t.Handler(ctx, json.RawMessage(argumentsInJSON))
	return bridge.ForModel(text, err)
}

// withAgentEvents routes the call's progress into the ADK agent's event stream (SendEvent
// fails, and the notification is dropped, when ctx is not an agent's run). The stream is
// only sure to be open while the agent waits for its tools (Eino panics on a send to a
// closed one), and the bridge may deliver a notification shortly after the call returned,
// so events are sent only until done is called.
func withAgentEvents(ctx context.Context) (context.Context, func()) {
	var mu sync.Mutex // guards ended; held while sending, so no send follows done
	ended := false
	ctx = bridge.WithProgress(ctx, func(cctx context.Context, p bridge.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if !ended {
			_ = adk.SendEvent(cctx, &adk.AgentEvent{Output: &adk.AgentOutput{CustomizedOutput: p}})
		}
	})
	return ctx, func() {
		mu.Lock()
		ended = true
		mu.Unlock()
	}
}
