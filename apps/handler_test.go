package apps

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// recordingProxier is the test's Proxier: the real one is bridge.Tools, tested in bridge.
// It records the requests it gets and answers with a fixed result or error.
type recordingProxier struct {
	result json.RawMessage
	err    error

	mu   sync.Mutex
	reqs []ProxyRequest
}

func (p *recordingProxier) Proxy(_ context.Context, req ProxyRequest) (json.RawMessage, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reqs = append(p.reqs, req)
	return p.result, p.err
}

func (p *recordingProxier) calls() []ProxyRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ProxyRequest(nil), p.reqs...)
}

const validBody = `{"serverHash":"2637fef21d2e2f89aa11b1d288fbe14d","method":"tools/call","params":{"name":"get-time","arguments":{}}}`

func TestHandler(t *testing.T) {
	raw := json.RawMessage(`{"content":[{"type":"text","text":"hi"}],  "structuredContent":{"z":1,"a":[ 2 ]},"_meta":{"k":"<&>"}}`)
	tests := []struct {
		name        string
		method      string
		contentType string
		body        string
		result      json.RawMessage
		err         error
		wantStatus  int
		wantBody    string // exact body for 200; substring of the error message otherwise
		wantCalled  bool
		recorder    bool // serve with httptest.NewRecorder: a real server may reset the connection before the client has sent a too-large body
	}{
		{name: "success passes raw bytes", body: validBody, result: raw, wantStatus: 200, wantBody: string(raw), wantCalled: true},
		{name: "json with charset", contentType: "application/json; charset=utf-8", body: validBody, result: raw, wantStatus: 200, wantBody: string(raw), wantCalled: true},
		{name: "no content type", contentType: "-", body: validBody, wantStatus: 415, wantBody: "application/json"},
		{name: "empty result", body: `{"serverId":"s","method":"notifications/message","params":{"level":"info","data":"x"}}`, wantStatus: 200, wantBody: `{}`, wantCalled: true},
		{name: "ping without params", body: `{"serverId":"s","method":"ping"}`, result: json.RawMessage(`{}`), wantStatus: 200, wantBody: `{}`, wantCalled: true},
		{name: "GET", method: http.MethodGet, wantStatus: 405, wantBody: "use POST"},
		{name: "PUT", method: http.MethodPut, body: validBody, wantStatus: 405, wantBody: "use POST"},
		{name: "form content type", contentType: "application/x-www-form-urlencoded", body: validBody, wantStatus: 415, wantBody: "application/json"},
		{name: "text/plain", contentType: "text/plain", body: validBody, wantStatus: 415, wantBody: "application/json"},
		{name: "bad JSON", body: `{"method":`, wantStatus: 400, wantBody: "not a JSON proxy request"},
		{name: "not an object", body: `[1,2]`, wantStatus: 400, wantBody: "want a JSON object"},
		{name: "method not a string", body: `{"serverId":"s","method":5}`, wantStatus: 400, wantBody: `field "method" must be a string`},
		{name: "empty body", body: ``, wantStatus: 400, wantBody: "not a JSON proxy request"},
		{name: "missing method", body: `{"serverId":"s"}`, wantStatus: 400, wantBody: "missing method"},
		{name: "missing server", body: `{"method":"ping"}`, wantStatus: 400, wantBody: "missing serverId and serverHash"},
		{name: "params not an object", body: `{"serverId":"s","method":"tools/call","params":[1]}`, wantStatus: 400, wantBody: "not a JSON object"},
		{name: "tools/call without name", body: `{"serverId":"s","method":"tools/call","params":{}}`, wantStatus: 400, wantBody: "tools/call needs params.name"},
		{name: "resources/read with numeric uri", body: `{"serverId":"s","method":"resources/read","params":{"uri":1}}`, wantStatus: 400, wantBody: "params.uri of resources/read is not a string"},
		{name: "method not allowed before proxy", body: `{"serverId":"s","method":"tools/list"}`, wantStatus: 403, wantBody: `method not allowed for UI proxy: "tools/list"`},
		{name: "proxy bad request", body: validBody, err: fmt.Errorf("%w: arguments are not an object", ErrBadRequest), wantStatus: 400, wantBody: "bad proxy request: arguments are not an object", wantCalled: true},
		{name: "proxy method not allowed", body: validBody, err: ErrMethodNotAllowed, wantStatus: 403, wantBody: ErrMethodNotAllowed.Error(), wantCalled: true},
		{name: "tool not allowed", body: validBody, err: fmt.Errorf("server %q tool %q: %w", "s", "secret-tool", ErrToolNotAllowed), wantStatus: 403, wantBody: `server "s" tool "secret-tool": tool not callable by apps`, wantCalled: true},
		{name: "unknown server", body: validBody, err: fmt.Errorf("%w: %q", ErrUnknownServer, "abc"), wantStatus: 404, wantBody: `unknown server: "abc"`, wantCalled: true},
		{name: "ambiguous server", body: validBody, err: ErrAmbiguousServer, wantStatus: 409, wantBody: ErrAmbiguousServer.Error(), wantCalled: true},
		{name: "timeout", body: validBody, err: fmt.Errorf("tools/call: %w", context.DeadlineExceeded), wantStatus: 504, wantBody: "tools/call: context deadline exceeded", wantCalled: true},
		{name: "other error", body: validBody, err: errors.New("server s: connection refused"), wantStatus: 502, wantBody: "server s: connection refused", wantCalled: true},
		{name: "too large", body: `{"serverId":"s","method":"ping","params":{"x":"` + strings.Repeat("a", MaxRequestBytes) + `"}}`, wantStatus: 413, wantBody: "larger than", recorder: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &recordingProxier{result: tt.result, err: tt.err}
			h := NewHandler(p, nil)
			srv := httptest.NewServer(h)
			defer srv.Close()
			method := tt.method
			if method == "" {
				method = http.MethodPost
			}
			req, err := http.NewRequestWithContext(t.Context(), method, srv.URL, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			switch tt.contentType {
			case "":
				req.Header.Set("Content-Type", "application/json")
			case "-":
			default:
				req.Header.Set("Content-Type", tt.contentType)
			}
			var resp *http.Response
			if tt.recorder {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				resp = rec.Result()
			} else if resp, err = srv.Client().Do(req); err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body bytes.Buffer
			if _, err := body.ReadFrom(resp.Body); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status = %d, want %d (body %s)", resp.StatusCode, tt.wantStatus, body.String())
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q, want application/json", ct)
			}
			if tt.wantStatus == http.StatusMethodNotAllowed {
				if got := resp.Header.Get("Allow"); got != "POST" {
					t.Errorf("Allow = %q, want POST", got)
				}
			}
			if tt.wantStatus == http.StatusOK {
				if body.String() != tt.wantBody {
					t.Errorf("body = %s, want exactly %s", body.String(), tt.wantBody)
				}
			} else {
				var e struct{ Error string }
				if err := json.Unmarshal(body.Bytes(), &e); err != nil {
					t.Fatalf("error body %q is not JSON: %v", body.String(), err)
				}
				if !strings.Contains(e.Error, tt.wantBody) {
					t.Errorf("error = %q, want it to contain %q", e.Error, tt.wantBody)
				}
				if tt.err != nil && e.Error != tt.err.Error() {
					t.Errorf("error = %q, want exactly the Proxier's error text %q", e.Error, tt.err.Error())
				}
			}
			calls := p.calls()
			if got := len(calls) == 1; got != tt.wantCalled || len(calls) > 1 {
				t.Fatalf("Proxier called %d times, want called=%v", len(calls), tt.wantCalled)
			}
			if tt.wantCalled && tt.body == validBody {
				got := calls[0]
				if got.ServerHash != "2637fef21d2e2f89aa11b1d288fbe14d" || got.ServerID != "" || got.Method != "tools/call" ||
					string(got.Params) != `{"name":"get-time","arguments":{}}` {
					t.Errorf("Proxier got %+v (params %s), want the request as sent", got, got.Params)
				}
			}
		})
	}
}

func TestHandlerNilProxier(t *testing.T) {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/", strings.NewReader(validBody))
	req.Header.Set("Content-Type", "application/json")
	NewHandler(nil, nil).ServeHTTP(rec, req)
	if rec.Code != http.StatusBadGateway {
		t.Errorf("status = %d, want %d", rec.Code, http.StatusBadGateway)
	}
}

func TestValidateRequest(t *testing.T) {
	tests := []struct {
		name string
		req  ProxyRequest
		want error // nil, ErrBadRequest or ErrMethodNotAllowed
	}{
		{"tools/call by hash", ProxyRequest{ServerHash: "h", Method: "tools/call", Params: json.RawMessage(`{"name":"x"}`)}, nil},
		{"resources/read by id", ProxyRequest{ServerID: "s", Method: "resources/read", Params: json.RawMessage(`{"uri":"ui://a"}`)}, nil},
		{"ping null params", ProxyRequest{ServerID: "s", Method: "ping", Params: json.RawMessage(`null`)}, nil},
		{"notification", ProxyRequest{ServerID: "s", Method: "notifications/message", Params: json.RawMessage(`{"level":"info"}`)}, nil},
		{"no method", ProxyRequest{ServerID: "s"}, ErrBadRequest},
		{"disallowed method", ProxyRequest{ServerID: "s", Method: "tools/list"}, ErrMethodNotAllowed},
		{"case matters", ProxyRequest{ServerID: "s", Method: "Tools/Call"}, ErrMethodNotAllowed},
		{"ui method", ProxyRequest{ServerID: "s", Method: "ui/initialize"}, ErrMethodNotAllowed},
		{"no server", ProxyRequest{Method: "ping"}, ErrBadRequest},
		{"tools/call no params", ProxyRequest{ServerID: "s", Method: "tools/call"}, ErrBadRequest},
		{"tools/call empty name", ProxyRequest{ServerID: "s", Method: "tools/call", Params: json.RawMessage(`{"name":""}`)}, ErrBadRequest},
		{"resources/read no uri", ProxyRequest{ServerID: "s", Method: "resources/read", Params: json.RawMessage(`{}`)}, ErrBadRequest},
		{"params a string", ProxyRequest{ServerID: "s", Method: "ping", Params: json.RawMessage(`"x"`)}, ErrBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateRequest(tt.req)
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("ValidateRequest(%+v) = %v, want %v", tt.req, err, tt.want)
			}
		})
	}
}

func TestMethodAllowed(t *testing.T) {
	for _, m := range []string{"tools/call", "resources/read", "ping", "notifications/message"} {
		if !MethodAllowed(m) {
			t.Errorf("MethodAllowed(%q) = false, want true", m)
		}
	}
	for _, m := range []string{"", "tools/list", "resources/list", "initialize", "sampling/createMessage", "ui/initialize", "ping "} {
		if MethodAllowed(m) {
			t.Errorf("MethodAllowed(%q) = true, want false", m)
		}
	}
}
