package tracing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ttalk/mcpbridge/bridge"
)

// A transport failure (an HTTP 503 without a JSON-RPC body, a refused connection) is kind
// "transport" in CallEnd and in the span's error.type; only a JSON-RPC error the server sent
// has its code as kind.
func TestTransportFailureKind(t *testing.T) {
	var hs hookServer
	srv := hs.server()
	mh := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var mode sync.Map // "503" -> true while the server answers tools/call with 503
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := mode.Load("503"); ok && r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if strings.Contains(string(body), `"method":"tools/call"`) {
				http.Error(w, "upstream overloaded", http.StatusServiceUnavailable)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		mh.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	var audit auditLog
	set, err := connectSet(t, []bridge.ServerConfig{{ID: "remote", URL: ts.URL}}, &bridge.Options{Logger: discard(), AfterCall: audit.after, TracerProvider: tp})
	if err != nil || len(set.Failed()) > 0 {
		t.Fatalf("%v %v", err, set.Failed())
	}
	read := byName(t, set.Tools(), "read_file")
	check := func(what string, want bridge.Outcome) {
		t.Helper()
		_, err := read.Handler(ctxT(t, 30*time.Second), json.RawMessage(`{"path":"a"}`))
		_, end := audit.last(t)
		if err == nil || end.Outcome != want {
			t.Errorf("%s: outcome %q (err %v), want %q", what, end.Outcome, err, want)
		}
		spans := exp.GetSpans()
		if v, ok := spanAttr(spans[len(spans)-1], "error.type"); !ok || v.AsString() != string(want) {
			t.Errorf("%s: span error.type %v, want %q", what, v.AsString(), want)
		}
	}
	mode.Store("503", true)
	check("HTTP 503", bridge.OutcomeTransport)
	mode.Delete("503")
	// The connection is refused from now on. (ts.Close would wait for the client's
	// long-lived GET stream.)
	_ = ts.Listener.Close()
	ts.CloseClientConnections()
	check("connection refused", bridge.OutcomeTransport)
}
