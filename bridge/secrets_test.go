package bridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/oauthtest"
	"github.com/ttalk/mcpbridge/results"
)

// quotingServer is a Streamable HTTP server (stateless, JSON answers) that quotes the
// credentials each request carried back in its answers: in a JSON-RPC error (HTTP 200), in
// a JSON-RPC error with HTTP 403, in a tool's isError result, and in an ordinary result.
func quotingServer(t *testing.T) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		body, _ := io.ReadAll(r.Body)
		if json.Unmarshal(body, &req) != nil || len(req.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		auth := r.Header.Get("Authorization")
		quote, _ := json.Marshal("you sent Authorization=" + auth + " (token " + strings.TrimPrefix(auth, "Bearer ") +
			") and X-Api-Key=" + r.Header.Get("X-Api-Key"))
		answer := func(status int, msg string) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,`+msg+`}`)
		}
		switch req.Method {
		case "initialize":
			if r.Header.Get("X-Refuse") != "" {
				answer(200, `"error":{"code":-32042,"message":`+string(quote)+`}`)
				return
			}
			answer(200, `"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"quoting","version":"1"}}`)
		case "tools/list":
			answer(200, `"result":{"tools":[`+
				`{"name":"rpc_error","inputSchema":{"type":"object"}},`+
				`{"name":"forbidden","inputSchema":{"type":"object"}},`+
				`{"name":"tool_error","inputSchema":{"type":"object"}}]}`)
		case "tools/call":
			switch req.Params.Name {
			case "rpc_error":
				answer(200, `"error":{"code":-32001,"message":`+string(quote)+`,"data":`+string(quote)+`}`)
			case "forbidden":
				answer(403, `"error":{"code":-32042,"message":`+string(quote)+`}`)
			default:
				answer(200, `"result":{"isError":true,"content":[{"type":"text","text":`+string(quote)+`}]}`)
			}
		default:
			answer(200, `"error":{"code":-32601,"message":"method not found"}`)
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A server that quotes the credentials it was sent (configured headers, per-call headers)
// back in its errors never gets them shown: not in the Handler's error or text, not in
// CallEnd.Err, not in a log line. The error keeps its kind (the server's JSON-RPC code).
func TestSecretsQuotedBackByAServerAreMasked(t *testing.T) {
	const cfgToken, cfgKey, userKey = "cfg-token-do-not-show", "cfg-key-do-not-show", "user-key-do-not-show"
	const initToken = "init-token-do-not-show"
	var logs syncBuffer
	var audit auditLog
	opts := &bridge.Options{
		Logger:    slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		AfterCall: audit.after,
	}
	var statuses []bridge.ServerStatus
	var mu sync.Mutex
	opts.OnStatus = func(_ context.Context, st bridge.ServerStatus) {
		mu.Lock()
		statuses = append(statuses, st)
		mu.Unlock()
	}
	url := quotingServer(t)
	set, err := connectSet(t, []bridge.ServerConfig{
		{ID: "quoting", Type: "http", URL: url, Headers: map[string]string{"Authorization": "Bearer " + cfgToken, "X-Api-Key": cfgKey}},
		{ID: "refusing", Type: "http", URL: url, Headers: map[string]string{"Authorization": "Bearer " + initToken, "X-Refuse": "1"}},
	}, opts)
	if err != nil {
		t.Fatal(err)
	}
	// The server that refused initialize, quoting its token: the error in Set.Failed, in
	// OnStatus and in the log shows the mask.
	failed := set.Failed()
	if len(failed) != 1 || failed[0].Server != "refusing" || !strings.Contains(failed[0].Error(), "Authorization=***") {
		t.Fatalf("Set.Failed() = %v, want the refusing server's error, masked", failed)
	}
	mu.Lock()
	for _, st := range statuses {
		if st.Err != nil && strings.Contains(st.Err.Error(), initToken) {
			t.Errorf("OnStatus: %v", st.Err)
		}
	}
	mu.Unlock()
	if !strings.Contains(logs.String(), "Authorization=***") {
		t.Errorf("the log does not show the refusal, masked:\n%s", logs.String())
	}
	tests := []struct {
		tool        string
		perCall     bool
		wantOutcome bridge.Outcome
	}{
		{"rpc_error", false, "-32001"},
		{"rpc_error", true, "-32001"},
		{"forbidden", false, "-32042"},
		{"forbidden", true, "-32042"},
		{"tool_error", false, bridge.OutcomeToolError},
		{"tool_error", true, bridge.OutcomeToolError},
	}
	for _, tt := range tests {
		ctx := ctxT(t, 30*time.Second)
		secrets := []string{cfgToken, cfgKey}
		if tt.perCall {
			ctx = bridge.WithCallHeaders(ctx, http.Header{"X-Api-Key": {userKey}})
			secrets = append(secrets, userKey)
		}
		text, err := byName(t, set.Tools(), tt.tool).Handler(ctx, nil)
		if err == nil {
			t.Fatalf("%s: no error", tt.tool)
		}
		_, end := audit.last(t)
		if end.Outcome != tt.wantOutcome {
			t.Errorf("%s (per-call %v): outcome %q, want %q (err: %v)", tt.tool, tt.perCall, end.Outcome, tt.wantOutcome, err)
		}
		if tt.wantOutcome == bridge.OutcomeToolError {
			var te *results.ToolError
			if !errors.As(err, &te) {
				t.Errorf("%s: error %v is not a *results.ToolError", tt.tool, err)
			}
		}
		if !strings.Contains(err.Error(), "you sent Authorization=***") {
			t.Errorf("%s: error %q does not show the server's text with the mask", tt.tool, err)
		}
		for _, s := range secrets {
			for what, got := range map[string]string{"Handler error": err.Error(), "Handler text": text, "CallEnd.Err": end.Err.Error()} {
				if strings.Contains(got, s) {
					t.Errorf("%s (per-call %v): %s shows %q: %s", tt.tool, tt.perCall, what, s, got)
				}
			}
		}
	}
	for _, s := range []string{cfgToken, cfgKey, userKey, initToken} {
		if strings.Contains(logs.String(), s) {
			t.Errorf("the log shows %q:\n%s", s, logs.String())
		}
	}
}

// An OAuth access token (here from the client credentials grant) quoted back by the server
// is masked like a configured header: the token never shows in the error or the log.
func TestOAuthTokenQuotedBackIsMasked(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "whoami", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			auth := req.Extra.Header.Get("Authorization")
			return nil, &jsonrpc.Error{Code: -32042, Message: "you are " + auth + " (" + strings.TrimPrefix(auth, "Bearer ") + ")"}
		})
	as := oauthtest.New(srv)
	t.Cleanup(as.Close)
	as.AddClient("svc", "cc-secret-do-not-show")
	var logs debugLog
	var audit auditLog
	opts := oauthOpts(&bridge.FileTokenStore{Path: filepath.Join(t.TempDir(), "t.json")}, nil)
	opts.Logger, opts.AfterCall = logs.logger(), audit.after
	set, err := connectSet(t, []bridge.ServerConfig{{ID: "billing", URL: as.URL(),
		Auth: &bridge.AuthConfig{Type: bridge.AuthClientCredentials, ClientID: "svc", ClientSecret: "cc-secret-do-not-show"}}}, opts)
	if err != nil || len(set.Failed()) > 0 {
		t.Fatalf("%v %v", err, set.Failed())
	}
	_, err = byName(t, set.Tools(), "whoami").Handler(ctxT(t, 30*time.Second), nil)
	if err == nil || !strings.Contains(err.Error(), "you are *** (***)") {
		t.Fatalf("err = %v, want the server's text with the token masked", err)
	}
	_, end := audit.last(t)
	if end.Outcome != "-32042" {
		t.Errorf("outcome %q, want the server's code -32042", end.Outcome)
	}
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != -32042 || !strings.Contains(je.Message, "***") {
		t.Errorf("errors.As(*jsonrpc.Error) = %v, want the server's error, masked", je)
	}
	checkNoTokens(t, as, err.Error(), end.Err.Error(), je.Message, logs.String())
}
