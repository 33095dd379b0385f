package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge"
)

// versionServer is a Streamable HTTP server written by hand, to refuse protocol versions the
// way real servers do. initialize answers with refuse(version) when that is not "".
type versionServer struct {
	refuse func(version string) (status int, body string)
	tools  string // the tools/list result's tools array; "" lists one plain tool

	mu      sync.Mutex
	methods []string // methods received, in order
	gets    int      // GET requests (an SSE client would send one)
}

func (v *versionServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		v.mu.Lock()
		v.gets++
		v.mu.Unlock()
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &req) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	v.mu.Lock()
	v.methods = append(v.methods, req.Method)
	v.mu.Unlock()
	if len(req.ID) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	reply := func(status int, msg string) {
		w.WriteHeader(status)
		io.WriteString(w, msg)
	}
	switch req.Method {
	case "initialize":
		if status, body := v.refuse(req.Params.ProtocolVersion); body != "" {
			reply(status, strings.ReplaceAll(body, "ID", string(req.ID)))
			return
		}
		reply(http.StatusOK, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{"protocolVersion":"`+req.Params.ProtocolVersion+`","capabilities":{"tools":{}},"serverInfo":{"name":"v","version":"1"}}}`)
	case "tools/list":
		tools := v.tools
		if tools == "" {
			tools = `[{"name":"t","inputSchema":{"type":"object"}}]`
		}
		reply(http.StatusOK, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{"tools":`+tools+`}}`)
	default:
		reply(http.StatusNotFound, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"error":{"code":-32601,"message":"Method not found"}}`)
	}
}

func (v *versionServer) seen() ([]string, int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.methods...), v.gets
}

// A -32022 refusal naming the server's versions is retried with the newest one both sides
// speak; any other JSON-RPC error surfaces as itself, with no legacy SSE attempt.
func TestProtocolRefusal(t *testing.T) {
	refuse2511 := func(version string) (int, string) {
		if version == "2025-11-25" {
			return http.StatusBadRequest, `{"jsonrpc":"2.0","id":ID,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2025-06-18","2024-11-05"],"requested":"2025-11-25"}}}`
		}
		return 0, ""
	}
	t.Run("-32022 retried", func(t *testing.T) {
		vs := &versionServer{refuse: refuse2511}
		hs := httptest.NewServer(vs)
		t.Cleanup(hs.Close)
		s := dialT(t, bridge.ServerConfig{ID: "v", URL: hs.URL}, nil)
		st := s.Status()
		if st.ProtocolVersion != "2025-06-18" || st.Negotiation != "initialize after the server refused 2025-11-25 (-32022)" || st.Transport != "http" {
			t.Errorf("protocol %q (%s) over %s", st.ProtocolVersion, st.Negotiation, st.Transport)
		}
		if methods, _ := vs.seen(); countOf(methods, "initialize") != 2 {
			t.Errorf("methods %v, want two initialize requests", methods)
		}
	})
	t.Run("other errors surface", func(t *testing.T) {
		vs := &versionServer{refuse: func(string) (int, string) {
			return http.StatusBadRequest, `{"jsonrpc":"2.0","id":ID,"error":{"code":-32603,"message":"database is down"}}`
		}}
		hs := httptest.NewServer(vs)
		t.Cleanup(hs.Close)
		_, err := bridge.Dial(ctxT(t, 30*time.Second), bridge.ServerConfig{ID: "v", URL: hs.URL}, quiet())
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != -32603 || !strings.Contains(err.Error(), "database is down") {
			t.Fatalf("Dial error %v, want the server's -32603", err)
		}
		if strings.Contains(err.Error(), "sse") {
			t.Errorf("Dial error %v mentions SSE", err)
		}
		if methods, gets := vs.seen(); gets != 0 || countOf(methods, "initialize") != 1 {
			t.Errorf("methods %v, %d GETs: want one initialize and no SSE attempt", methods, gets)
		}
	})
}

// A tool whose x-mcp-header marker is invalid is dropped (SEP-2243) and reported as a problem.
func TestInvalidToolHeaderMarker(t *testing.T) {
	vs := &versionServer{
		refuse: func(string) (int, string) { return 0, "" },
		tools: `[{"name":"good","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}},
			{"name":"bad","inputSchema":{"type":"object","properties":{"obj":{"type":"object","x-mcp-header":"Obj"}}}}]`,
	}
	hs := httptest.NewServer(vs)
	t.Cleanup(hs.Close)
	s := dialT(t, bridge.ServerConfig{ID: "v", URL: hs.URL}, nil)
	if tools := s.Tools(); len(tools) != 1 || tools[0].RemoteName != "good" {
		t.Errorf("tools %v, want only good", tools)
	}
	st := s.Status()
	if len(st.Problems) != 1 || st.Problems[0].Tool != "bad" || !st.Problems[0].Skipped || !strings.Contains(st.Problems[0].Problem, "invalid x-mcp-header") {
		t.Errorf("problems %+v", st.Problems)
	}
}

// go-sdk servers speak 2026-07-28 in process; the version is what ServerStatus reports, and
// a pin is honoured; an unknown pin is a configuration error.
func TestProtocolNegotiated(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	for _, tc := range []struct {
		pin, version, how string
	}{
		{"", "2026-07-28", "server/discover"},
		{"2025-06-18", "2025-06-18", "pinned by the server's protocolVersion"},
		{"2026-07-28", "2026-07-28", "pinned by the server's protocolVersion"},
	} {
		cfg := inProcess("s", srv)
		cfg.ProtocolVersion = tc.pin
		s := dialT(t, cfg, nil)
		if st := s.Status(); st.ProtocolVersion != tc.version || st.Negotiation != tc.how {
			t.Errorf("pin %q: protocol %q (%s), want %q (%s)", tc.pin, st.ProtocolVersion, st.Negotiation, tc.version, tc.how)
		}
		if out, err := s.Tools()[0].Handler(ctxT(t, 10*time.Second), nil); err != nil || out != "ok" {
			t.Errorf("pin %q: call = %q, %v", tc.pin, out, err)
		}
	}
	cfg := inProcess("s", srv)
	cfg.ProtocolVersion = "2099-01-01"
	_, err := bridge.Dial(ctxT(t, 10*time.Second), cfg, quiet())
	var se *bridge.ServerError
	if !errors.As(err, &se) || se.Phase != bridge.PhaseConfig || !strings.Contains(err.Error(), `unsupported protocolVersion "2099-01-01"`) {
		t.Errorf("Dial with an unknown pin: %v", err)
	}
}

func countOf(list []string, s string) int {
	n := 0
	for _, e := range list {
		if e == s {
			n++
		}
	}
	return n
}
