package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/redact"
)

// Calls follows the page's tool calls while they run: what the server reports meanwhile
// (progress notifications, the status of an MCP task) and its requests for input from the
// user (elicitation, an MCP task's input_required), which the page shows and answers. The
// page names each call with an ID of its own; GET /api/calls/{id} returns the call's status
// lines and pending request, POST /api/calls/{id}/input answers it.
//
// Make one with NewCalls before connecting the servers, give its Elicit to
// bridge.Options.OnElicitation, and pass it in Options.Calls. It is safe for concurrent use.
type Calls struct {
	mu    sync.Mutex
	calls map[string]*callState
	seq   int
}

// NewCalls returns an empty Calls.
func NewCalls() *Calls { return &Calls{calls: map[string]*callState{}} }

// Bounds on what one call keeps for the page.
const (
	maxStatusLines = 50
	maxLineBytes   = 1000
	maxCallsShown  = 64 // calls followed at once
)

// callIDPattern is what the page may use as a call ID.
var callIDPattern = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)

// callState is one call in flight.
type callState struct {
	server string
	lines  []string
	input  *pendingInput
}

// pendingInput is a server's request for input waiting for the page.
type pendingInput struct {
	ID      string          `json:"id"`
	TaskID  string          `json:"taskId,omitempty"`
	Mode    string          `json:"mode"` // "form" or "url"
	Message string          `json:"message"`
	URL     string          `json:"url,omitempty"`
	Schema  json.RawMessage `json:"schema,omitempty"`
	answer  chan *mcp.ElicitResult
}

type callKey struct{}

// start follows call id of server (a page call); stop, when it returns, forgets it. ctx
// carries the ID (for Elicit) and the progress callback. ok is false when id is not usable
// or too many calls run: the call then runs unfollowed.
func (c *Calls) start(ctx context.Context, id, server string) (_ context.Context, stop func(), ok bool) {
	if c == nil || !callIDPattern.MatchString(id) {
		return ctx, func() {}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.calls[id]; dup || len(c.calls) >= maxCallsShown {
		return ctx, func() {}, false
	}
	st := &callState{server: server}
	c.calls[id] = st
	ctx = context.WithValue(ctx, callKey{}, id)
	ctx = bridge.WithProgress(ctx, func(_ context.Context, p bridge.Progress) { c.progress(st, p) })
	return ctx, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.calls, id)
	}, true
}

// progress records one status line of a call.
func (c *Calls) progress(st *callState, p bridge.Progress) {
	var line string
	if p.Status != "" {
		line = fmt.Sprintf("task %s: %s", strconv.Quote(p.TaskID), p.Status)
	} else {
		line = "progress " + strconv.FormatFloat(p.Progress, 'f', -1, 64)
		if p.Total > 0 {
			line += "/" + strconv.FormatFloat(p.Total, 'f', -1, 64)
		}
	}
	if p.Message != "" {
		line += ": " + p.Message
	}
	line = redact.Clip(line, maxLineBytes)
	c.mu.Lock()
	defer c.mu.Unlock()
	st.lines = append(st.lines, line)
	if n := len(st.lines); n > maxStatusLines {
		st.lines = append(st.lines[:0], st.lines[n-maxStatusLines:]...)
	}
}

// Elicit is a bridge.Options.OnElicitation that asks the page: the request is shown with
// the call it belongs to (the call whose context it runs under, or the only call of that
// server in flight) until the user answers or the call ends.
func (c *Calls) Elicit(ctx context.Context, req *bridge.ElicitRequest) (*mcp.ElicitResult, error) {
	p := req.Params
	in := &pendingInput{TaskID: req.TaskID, Mode: p.Mode, Message: p.Message, URL: p.URL, answer: make(chan *mcp.ElicitResult, 1)}
	if in.Mode == "" {
		in.Mode = "form"
	}
	if p.RequestedSchema != nil {
		b, err := json.Marshal(p.RequestedSchema)
		if err != nil {
			return nil, fmt.Errorf("requested schema: %w", err)
		}
		in.Schema = b
	}
	id, _ := ctx.Value(callKey{}).(string)
	c.mu.Lock()
	st := c.calls[id]
	if st == nil { // not under a page call's context: the server's only call in flight
		for _, s := range c.calls {
			if s.server == req.Server {
				if st != nil {
					st = nil
					break
				}
				st = s
			}
		}
	}
	if st == nil || st.input != nil {
		c.mu.Unlock()
		return nil, errors.New("no call on the page can take this request for input")
	}
	c.seq++
	in.ID = strconv.Itoa(c.seq)
	st.input = in
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		if st.input == in {
			st.input = nil
		}
		c.mu.Unlock()
	}()
	select {
	case res := <-in.answer:
		return res, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// callView is GET /api/calls/{id}.
type callView struct {
	Lines []string      `json:"lines"`
	Input *pendingInput `json:"input,omitempty"`
}

func (h *Host) handleCallStatus(w http.ResponseWriter, r *http.Request) {
	c := h.opts.Calls
	if c == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "calls are not followed"})
		return
	}
	c.mu.Lock()
	st := c.calls[r.PathValue("id")]
	var v callView
	if st != nil {
		v = callView{Lines: append([]string{}, st.lines...), Input: st.input}
	}
	c.mu.Unlock()
	if st == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such call in flight"})
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// inputAnswer is POST /api/calls/{id}/input.
type inputAnswer struct {
	Input   string         `json:"input"`  // pendingInput.ID
	Action  string         `json:"action"` // accept, decline, cancel
	Content map[string]any `json:"content,omitempty"`
}

func (h *Host) handleCallInput(w http.ResponseWriter, r *http.Request) {
	body, status, msg := readJSONBody(w, r)
	if status != 0 {
		writeJSON(w, status, map[string]string{"error": msg})
		return
	}
	var a inputAnswer
	if err := json.Unmarshal(body, &a); err != nil || (a.Action != "accept" && a.Action != "decline" && a.Action != "cancel") {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "want a JSON object with input, action (accept, decline or cancel) and content"})
		return
	}
	c := h.opts.Calls
	var in *pendingInput
	if c != nil {
		c.mu.Lock()
		if st := c.calls[r.PathValue("id")]; st != nil && st.input != nil && st.input.ID == a.Input {
			in, st.input = st.input, nil
		}
		c.mu.Unlock()
	}
	if in == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such request for input is waiting"})
		return
	}
	res := &mcp.ElicitResult{Action: a.Action}
	if a.Action == "accept" {
		res.Content = a.Content
	}
	in.answer <- res // buffered; the only sender, since the input was taken under the lock
	writeJSON(w, http.StatusOK, map[string]string{"ok": "answered"})
}
