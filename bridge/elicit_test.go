package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/slack"
)

// confirmServer has a tool that asks the user to confirm (with a defaulted field) and
// reports the answer, the requestState it got back and how many rounds it took.
func confirmServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "confirm", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "confirm", InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ ID string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			if r, ok := req.Params.InputResponses["ok"].(*mcp.ElicitResult); ok {
				text := fmt.Sprintf("%s %s %v state=%s", args.ID, r.Action, r.Content, req.Params.RequestState)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
			}
			return &mcp.CallToolResult{
				InputRequests: mcp.InputRequestMap{"ok": &mcp.ElicitParams{
					Message:         "sure about " + args.ID + "?",
					RequestedSchema: json.RawMessage(`{"type":"object","properties":{"yes":{"type":"boolean"},"n":{"type":"integer","default":7}}}`),
				}},
				RequestState: "state-" + args.ID,
			}, nil
		})
	return srv
}

// OnElicitation answers elicitation both ways: inside a 2026-07-28 multi-round-trip call
// (requestState echoed, parallel calls apart) and as elicitation/create on older versions.
// SEP-1034 defaults are filled in. Without a handler a call that needs input fails at once.
func TestElicitation(t *testing.T) {
	srv := confirmServer()
	for _, pin := range []string{"", "2025-11-25"} {
		t.Run("protocol "+pin, func(t *testing.T) {
			var asked atomic.Int32
			cfg := inProcess("c", srv)
			cfg.ProtocolVersion = pin
			opts := &bridge.Options{Logger: discard(), OnElicitation: func(_ context.Context, req *bridge.ElicitRequest) (*mcp.ElicitResult, error) {
				asked.Add(1)
				if req.Server != "c" || !strings.HasPrefix(req.Params.Message, "sure about ") {
					return nil, fmt.Errorf("unexpected request %+v", req)
				}
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"yes": true}}, nil
			}}
			s := dialT(t, cfg, opts)
			h := s.Tools()[0].Handler
			ids := []string{"a", "b", "c", "d"}
			outs := make([]chan string, len(ids))
			for i, id := range ids {
				outs[i] = make(chan string, 1)
				go func() {
					out, err := h(ctxT(t, 20*time.Second), json.RawMessage(`{"id":"`+id+`"}`))
					if err != nil {
						out = err.Error()
					}
					outs[i] <- out
				}()
			}
			for i, id := range ids {
				out := <-outs[i]
				want := id + " accept map[n:7 yes:true]"
				if pin == "" {
					want += " state=state-" + id
				}
				if !strings.HasPrefix(out, want) {
					t.Errorf("call %s = %q, want %q", id, out, want)
				}
			}
			if n := asked.Load(); n != int32(len(ids)) {
				t.Errorf("OnElicitation called %d times, want %d", n, len(ids))
			}
			if st := s.Status(); st.Elicitations != len(ids) {
				t.Errorf("Status().Elicitations = %d", st.Elicitations)
			}
		})
		t.Run("no handler, protocol "+pin, func(t *testing.T) {
			cfg := inProcess("c", srv)
			cfg.ProtocolVersion = pin
			s := dialT(t, cfg, nil)
			start := time.Now()
			_, err := s.Tools()[0].Handler(ctxT(t, 2*time.Minute), json.RawMessage(`{"id":"x"}`))
			if err == nil || errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("call without OnElicitation: %v after %v, want a prompt error", err, time.Since(start))
			}
			slack.Within(t, "a call needing input without OnElicitation", time.Since(start), 0)
			t.Logf("error: %v", err)
		})
	}
}
