package bridge

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ElicitRequest is one server's request for input from the user, given to
// Options.OnElicitation.
//
// In form mode (Params.Mode "" or "form") Params.RequestedSchema is a flat object schema;
// answer with Action "accept" and Content, "decline" or "cancel". Content is checked against
// the schema, and defaults the schema declares for fields the user left out are filled in
// before the answer reaches the server (SEP-1034). In URL mode (Params.Mode "url") the user
// should be sent to Params.URL out of band; answer "accept" once they agreed to go there.
//
// A server may ask during a tool call. With protocol 2026-07-28 the request arrives inside
// the call's result (resultType "input_required"): the bridge answers it through
// OnElicitation and retries the call with a new request id, echoing the server's
// requestState; parallel calls keep their own requests and state. OnElicitation may be
// called concurrently, and ctx ends with the call that triggered it.
type ElicitRequest struct {
	// Server is the ID of the server asking.
	Server string
	// Params is the server's request as go-sdk decoded it.
	Params *mcp.ElicitParams
	// TaskID is set when the request is for an MCP task the call runs as (input_required):
	// the request then arrives through tasks/result (2025-11-25) or the task's inputRequests
	// (2026-07-28 extension), and ctx is the context of the call following the task.
	TaskID string
}

// elicit is the go-sdk elicitation handler of a server whose Options set OnElicitation.
func (s *Server) elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	mode := req.Params.Mode
	if mode == "" {
		mode = "form"
	}
	ctx, taskID, err := s.tasks.ElicitContext(ctx, req.Params.Meta)
	if err != nil {
		return nil, err // for a task no call of this bridge follows
	}
	s.log.Debug("server asks for user input", "mode", mode, "task", taskID)
	s.catMu.Lock()
	s.status.Elicitations++
	s.catMu.Unlock()
	return s.opts.OnElicitation(ctx, &ElicitRequest{Server: s.cfg.ID, Params: req.Params, TaskID: taskID})
}

// elicitationCapabilities is what the bridge advertises when Options.OnElicitation is set.
func elicitationCapabilities() *mcp.ElicitationCapabilities {
	return &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}
}
