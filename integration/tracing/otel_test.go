package tracing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/bridge"
)

func spanAttr(s tracetest.SpanStub, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func spanNamed(t *testing.T, spans tracetest.SpanStubs, name string) tracetest.SpanStub {
	t.Helper()
	var names []string
	for _, s := range spans {
		if s.Name == name {
			return s
		}
		names = append(names, s.Name)
	}
	t.Fatalf("no span %q in %q", name, names)
	return tracetest.SpanStub{}
}

func TestTracingAndMetrics(t *testing.T) {
	for _, kind := range []string{"inprocess", "http"} {
		t.Run(kind, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			reader := sdkmetric.NewManualReader()
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
			t.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })

			var hs hookServer
			cfg := hs.inProcess("files")
			if kind == "http" {
				cfg = hs.http(t, "files")
			}
			ctx, assembly := tp.Tracer("host").Start(ctxT(t, 30*time.Second), "assemble")
			set, err := bridge.Connect(ctx, []bridge.ServerConfig{cfg}, &bridge.Options{Logger: discard(), TracerProvider: tp, MeterProvider: mp})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = set.Close() })
			assembly.End()

			ctx, turn := tp.Tracer("host").Start(ctxT(t, 30*time.Second), "agent turn")
			if _, err := byName(t, set.Tools(), "read_file").Handler(ctx, json.RawMessage(`{"path":"a"}`)); err != nil {
				t.Fatal(err)
			}
			got := hs.lastMeta()
			if _, err := byName(t, set.Tools(), "broken").Handler(ctx, nil); err == nil {
				t.Fatal("broken succeeded")
			}
			turn.End()

			spans := exp.GetSpans()
			conn := spanNamed(t, spans, "connect files")
			if conn.Parent.SpanID() != assembly.SpanContext().SpanID() {
				t.Errorf("connect span's parent = %v, want the host's assembly span", conn.Parent.SpanID())
			}
			var events []string
			for _, e := range conn.Events {
				events = append(events, e.Name)
			}
			if fmt.Sprint(events) != "[initialize tools/list]" {
				t.Errorf("connect span events = %v, want [initialize tools/list]", events)
			}

			call := spanNamed(t, spans, "tools/call read_file")
			if call.Parent.SpanID() != turn.SpanContext().SpanID() || call.SpanContext.TraceID() != turn.SpanContext().TraceID() {
				t.Errorf("call span's parent = %v, want the host's span %v", call.Parent.SpanID(), turn.SpanContext().SpanID())
			}
			for key, want := range map[string]string{
				"mcp.method.name":       "tools/call",
				"gen_ai.tool.name":      "read_file",
				"gen_ai.operation.name": "execute_tool",
				"mcpbridge.server.id":   "files",
				"mcpbridge.call.origin": "handler",
				// negotiated: in-process go-sdk servers speak 2026-07-28, its stateful HTTP handler 2025-11-25
				"mcp.protocol.version": set.Servers()[0].Status().ProtocolVersion,
			} {
				if v, ok := spanAttr(call, key); !ok || v.String() != want {
					t.Errorf("call span %s = %q, want %q", key, v.String(), want)
				}
			}
			if kind == "http" {
				if v, ok := spanAttr(call, "mcp.session.id"); !ok || v.AsString() == "" {
					t.Error("call span has no mcp.session.id")
				}
			}
			want := fmt.Sprintf("00-%s-%s-01", call.SpanContext.TraceID(), call.SpanContext.SpanID())
			if got["traceparent"] != want {
				t.Errorf("the server received traceparent %v, want %s (the call span)", got["traceparent"], want)
			}

			failed := spanNamed(t, spans, "tools/call broken")
			if v, _ := spanAttr(failed, "error.type"); failed.Status.Code != codes.Error || v.AsString() != "tool_error" {
				t.Errorf("failed call span: status %v, error.type %q", failed.Status, v.AsString())
			}

			var rm metricdata.ResourceMetrics
			if err := reader.Collect(context.Background(), &rm); err != nil {
				t.Fatal(err)
			}
			var calls uint64
			var errs int64
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					switch d := m.Data.(type) {
					case metricdata.Histogram[float64]:
						if m.Name == "mcp.client.operation.duration" && m.Unit == "s" {
							for _, p := range d.DataPoints {
								calls += p.Count
							}
						}
					case metricdata.Sum[int64]:
						if m.Name == "mcpbridge.call.errors" {
							for _, p := range d.DataPoints {
								if v, _ := p.Attributes.Value("error.type"); v.AsString() == "tool_error" {
									errs += p.Value
								}
							}
						}
					}
				}
			}
			if calls != 2 || errs != 1 {
				t.Errorf("metrics: %d calls timed, %d tool errors counted; want 2 and 1", calls, errs)
			}
		})
	}
}

// Without a provider nothing is traced and no trace context is sent; a global provider
// installed after Connect is picked up. Runs in a child process: the global provider
// cannot be uninstalled.
func TestGlobalTracerProvider(t *testing.T) {
	const env = "MCPBRIDGE_TEST_GLOBAL_OTEL"
	if os.Getenv(env) == "" {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(ctxT(t, 120*time.Second), exe, "-test.run=^TestGlobalTracerProvider$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), env+"=1", "GORACE=atexit_sleep_ms=0")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestGlobalTracerProvider") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	var hs hookServer
	set, err := connectSet(t, []bridge.ServerConfig{hs.inProcess("files")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	read := byName(t, set.Tools(), "read_file")
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	ctx, parent := tp.Tracer("host").Start(ctxT(t, 30*time.Second), "turn") // the host's span, not installed
	if _, err := read.Handler(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if m := hs.lastMeta(); m["traceparent"] != nil {
		t.Errorf("without a provider the server got traceparent %v", m["traceparent"])
	}
	otel.SetTracerProvider(tp)
	if _, err := read.Handler(ctx, nil); err != nil {
		t.Fatal(err)
	}
	parent.End()
	call := spanNamed(t, exp.GetSpans(), "tools/call read_file")
	if call.Parent.SpanID() != parent.SpanContext().SpanID() {
		t.Error("the call span is not a child of the host's span")
	}
	if m := hs.lastMeta(); m["traceparent"] != fmt.Sprintf("00-%s-%s-01", call.SpanContext.TraceID(), call.SpanContext.SpanID()) {
		t.Errorf("with the global provider the server got traceparent %v", m["traceparent"])
	}
}

// App calls and the tools exposing prompts and resources get spans of their own kind.
func TestTracingOriginsAndExposedTools(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	var hs hookServer
	docs := inProcess("docs", docsServer(true))
	docs.Expose = []string{bridge.ExposeResources, bridge.ExposePrompts}
	set, err := connectSet(t, []bridge.ServerConfig{hs.inProcess("files"), docs}, &bridge.Options{Logger: discard(), TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t, 30*time.Second)
	if _, err := set.Proxy(ctx, apps.ProxyRequest{ServerID: "files", Method: "tools/call", Params: json.RawMessage(`{"name":"app_refresh"}`)}); err != nil {
		t.Fatal(err)
	}
	files, _ := set.Lookup("files")
	if _, err := files.CallTool(ctx, "read_file", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := byName(t, set.Tools(), "docs__get_prompt").Handler(ctx, json.RawMessage(`{"name":"review","arguments":{"lang":"Go"}}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := byName(t, set.Tools(), "docs__read_resource").Handler(ctx, json.RawMessage(`{"uri":"file:///readme.md"}`)); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	for _, c := range []struct{ span, key, want string }{
		{"tools/call app_refresh", "mcpbridge.call.origin", "app"},
		{"tools/call read_file", "mcpbridge.call.origin", "call_tool"},
		{"prompts/get review", "gen_ai.prompt.name", "review"},
		{"prompts/get review", "mcp.method.name", "prompts/get"},
		{"resources/read", "mcp.resource.uri", "file:///readme.md"},
	} {
		if v, ok := spanAttr(spanNamed(t, spans, c.span), c.key); !ok || v.String() != c.want {
			t.Errorf("span %q: %s = %q, want %q", c.span, c.key, v.String(), c.want)
		}
	}
}
