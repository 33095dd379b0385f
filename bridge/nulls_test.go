package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge"
)

// A null from a model for an optional property whose schema rejects null is dropped before
// validation and the call; other nulls are kept or refused.
func TestNullArguments(t *testing.T) {
	const schema = `{"type":"object","properties":{
		"name":{"type":"string"},
		"limit":{"type":"integer"},
		"note":{"type":["string","null"]},
		"tag":{"anyOf":[{"type":"string"},{"type":"null"}]},
		"mode":{"enum":["a","b"]},
		"ref":{"$ref":"#/$defs/r"},
		"any":{}
	},"required":["name"],"$defs":{"r":{"type":"string"}}}`
	var mu sync.Mutex
	var got json.RawMessage
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "t", InputSchema: json.RawMessage(schema)}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		mu.Lock()
		got = append(json.RawMessage(nil), req.Params.Arguments...)
		mu.Unlock()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	for _, validate := range []bool{true, false} {
		s := dialT(t, inProcess("s", srv), &bridge.Options{Logger: discard(), DisableValidation: !validate})
		h := s.Tools()[0].Handler
		for _, tc := range []struct {
			args, sent string // sent "" means refused without a call
		}{
			{`{"name":"x","limit":null}`, `{"name":"x"}`},
			{`{"limit":null,"name":"x","mode":null}`, `{"name":"x"}`},
			{`{"name":"x","note":null,"tag":null,"any":null}`, `{"name":"x","note":null,"tag":null,"any":null}`},
			{`{"name":"x","ref":null}`, ""}, // can't tell without resolving $ref: kept, refused by validation
			{`{"name":null}`, ""},           // required
			{`{ "b" : 1 , "name" : "x" , "limit" : null }`, `{"b":1,"name":"x"}`},
			{`{"name":"x","limit":3}`, `{"name":"x","limit":3}`},
		} {
			mu.Lock()
			got = nil
			mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, err := h(ctx, json.RawMessage(tc.args))
			cancel()
			mu.Lock()
			sent := got
			mu.Unlock()
			switch {
			case tc.sent == "" && validate:
				if !errors.Is(err, bridge.ErrInvalidArguments) || sent != nil {
					t.Errorf("validate=%v %s: err %v, sent %s; want refused", validate, tc.args, err, sent)
				}
			case tc.sent == "":
				// Without validation the null goes to the server, which may refuse it.
			case err != nil || string(compact(t, sent)) != string(compact(t, json.RawMessage(tc.sent))):
				t.Errorf("validate=%v %s: sent %s (%v), want %s", validate, tc.args, sent, err, tc.sent)
			}
		}
	}
}

func compact(t *testing.T, b json.RawMessage) []byte {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	out, _ := json.Marshal(v)
	return out
}
