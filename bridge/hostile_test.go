package bridge_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/slack"
	"github.com/ttalk/mcpbridge/transport"
)

const mib = 1 << 20

// A server whose answer never ends (to initialize, or to one tools/call) costs the host at
// most a few copies of the per-message budget, fails with an error naming the limit, and
// leaves the host and the server's other tools working.
func TestHostileEndlessHTTPBody(t *testing.T) {
	initSrv := &hostileServer{endlessInit: true}
	callSrv := &hostileServer{
		tools: []string{
			`{"name":"endless","inputSchema":{"type":"object"}}`,
			`{"name":"fine","inputSchema":{"type":"object"}}`,
		},
		endlessTool: "endless",
	}
	opts := quiet()
	opts.MaxMessageBytes = 2 * mib
	opts.CallTimeout = 60 * time.Second
	mem := watchMemory()
	set, err := connectSet(t, []bridge.ServerConfig{
		{ID: "endless-init", URL: initSrv.start(t)},
		{ID: "endless-call", URL: callSrv.start(t)},
	}, opts)
	if err != nil {
		t.Fatal(err)
	}
	failed := set.Failed()
	if len(failed) != 1 || failed[0].Server != "endless-init" || failed[0].Phase != bridge.PhaseInitialize {
		t.Fatalf("failed = %v, want endless-init in phase initialize", failed)
	}
	if msg := failed[0].Error(); !strings.Contains(msg, "2097152 bytes") || !strings.Contains(msg, "MaxMessageBytes") {
		t.Errorf("initialize error %q does not name the limit", msg)
	}
	if !errors.Is(failed[0], transport.ErrMessageTooLarge) {
		t.Errorf("initialize error %v does not wrap ErrMessageTooLarge", failed[0])
	}

	tools := set.Tools()
	start := time.Now()
	_, err = byName(t, tools, "endless").Handler(ctxT(t, 60*time.Second), nil)
	elapsed := time.Since(start)
	growth, allocated := mem.end()
	t.Logf("peak heap growth %.1f MiB, allocated %.1f MiB, servers wrote %.1f MiB, call failed after %v",
		float64(growth)/mib, float64(allocated)/mib, float64(initSrv.written.Load()+callSrv.written.Load())/mib, elapsed.Round(time.Millisecond))
	se := asServerError(t, err)
	if se.Server != "endless-call" || se.Phase != bridge.PhaseCall || !errors.Is(err, transport.ErrMessageTooLarge) ||
		!strings.Contains(err.Error(), "MaxMessageBytes") {
		t.Fatalf("call error = %v, want a tools/call ServerError naming the limit", err)
	}
	slack.Within(t, "the endless call (CallTimeout 60s: it must be stopped by the budget, not the timeout)", elapsed, 0)
	// Two servers each sent one endless answer: the host holds a few copies of 2 MiB at most.
	if bound := uint64(64 * mib); growth > bound || allocated > 2*bound {
		t.Errorf("peak heap growth %d, allocated %d; want at most %d, %d", growth, allocated, bound, 2*bound)
	}
	if w := initSrv.written.Load() + callSrv.written.Load(); w > 256*mib {
		t.Errorf("servers wrote %d bytes before the bridge stopped reading", w)
	}

	// The host keeps running: the server's other tool works on a fresh session.
	out, err := byName(t, tools, "fine").Handler(ctxT(t, 30*time.Second), nil)
	if err != nil || out != "ok" {
		t.Fatalf("call after the overrun = %q, %v; want ok", out, err)
	}
}

// A tool list that never ends stops at the listing budget (tools or bytes), long before the
// page cap, and costs only that server.
func TestHostileEndlessToolList(t *testing.T) {
	endless := func(toolBytes int) func(string) ([]string, string) {
		pad := strings.Repeat("x", toolBytes)
		return func(cursor string) ([]string, string) {
			n := 0
			fmt.Sscanf(cursor, "%d", &n)
			var tools []string
			for i := range 100 {
				tools = append(tools, fmt.Sprintf(`{"name":"t%d_%d","description":%q,"inputSchema":{"type":"object"}}`, n, i, pad))
			}
			return tools, fmt.Sprint(n + 1)
		}
	}
	tests := []struct {
		name   string
		opts   func(*bridge.Options)
		page   func(string) ([]string, string)
		reason string
	}{
		{"tool count", func(o *bridge.Options) { o.MaxListTools = 1000 }, endless(10), "more than 1000 tools (Options.MaxListTools)"},
		{"bytes", func(o *bridge.Options) { o.MaxListBytes = 4 * mib }, endless(10 << 10), "more than 4194304 bytes of tool definitions (Options.MaxListBytes)"},
		{"default tool count", func(*bridge.Options) {}, endless(10), "more than 10000 tools (Options.MaxListTools)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &hostileServer{page: tt.page}
			good := &hostileServer{tools: []string{`{"name":"fine","inputSchema":{"type":"object"}}`}}
			opts := quiet()
			tt.opts(opts)
			mem := watchMemory()
			set, err := connectSet(t, []bridge.ServerConfig{{ID: "endless", URL: srv.start(t)}, {ID: "good", URL: good.start(t)}}, opts)
			growth, allocated := mem.end()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("peak heap growth %.1f MiB, allocated %.1f MiB", float64(growth)/mib, float64(allocated)/mib)
			failed := set.Failed()
			if len(failed) != 1 || failed[0].Phase != bridge.PhaseList || !strings.Contains(failed[0].Error(), tt.reason) {
				t.Fatalf("failed = %v, want endless in tools/list: %s", failed, tt.reason)
			}
			if names := names(set.Tools()); len(names) != 1 || names[0] != "fine" {
				t.Errorf("tools = %v, want [fine]", names)
			}
			if growth > 256*mib {
				t.Errorf("peak heap growth %d bytes", growth)
			}
		})
	}
}

// allOfChain is a schema small on the wire whose validation doubles at each of n levels: each
// $defs entry allOf-s the next one twice (2^n steps).
func allOfChain(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{"x":{"$ref":"#/$defs/d0"}},"$defs":{`)
	for i := range n {
		fmt.Fprintf(&b, `"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
	}
	fmt.Fprintf(&b, `"d%d":{"type":"string"}}}`, n)
	return b.String()
}

// wideSchema is an object schema with n properties.
func wideSchema(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%d":{"type":"string"}`, i)
	}
	b.WriteString(`}}`)
	return b.String()
}

func toolJSON(name, input, output string) string {
	s := `{"name":"` + name + `","inputSchema":` + input
	if output != "" {
		s += `,"outputSchema":` + output
	}
	return s + `}`
}

// Schemas whose validation or compilation would take unbounded time are measured in one
// linear pass when listed: over budget, the tool is offered without validation and a problem
// says why; no Handler call and no Connect runs past its deadline because of them.
func TestHostileSchemas(t *testing.T) {
	// A recursion through properties that doubles at each level of the instance.
	recursiveFanout := `{"$ref":"#/$defs/n","$defs":{"n":{"type":"object","properties":{"a":{"allOf":[{"$ref":"#/$defs/n"},{"$ref":"#/$defs/n"}]}}}}}`
	// A legitimate recursive schema: a tree.
	tree := `{"type":"object","$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}}}},"properties":{"root":{"$ref":"#/$defs/node"}}}`
	structured := `{"content":[{"type":"text","text":"{\"x\":\"s\"}"}],"structuredContent":{"x":"s"}}`
	srv := &hostileServer{
		tools: []string{
			toolJSON("chain", allOfChain(40), ""),
			toolJSON("chain_out", `{"type":"object"}`, allOfChain(40)),
			toolJSON("wide", wideSchema(30_000), ""),
			toolJSON("fanout", recursiveFanout, ""),
			toolJSON("tree", tree, ""),
		},
		results: map[string]string{"chain_out": structured},
	}
	opts := quiet()
	// Compiling the 30,000-property schema alone takes about a minute; measuring all of
	// these is linear. (Generous for a loaded machine under -race.)
	opts.ConnectTimeout = 30 * time.Second
	start := time.Now()
	set, err := connectSet(t, []bridge.ServerConfig{{ID: "hostile", URL: srv.start(t)}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Connect took %v", time.Since(start).Round(time.Millisecond))
	slack.Within(t, "Connect (its connect timeout is 30s; measuring the schemas is linear)", time.Since(start), 0)
	if f := set.Failed(); len(f) != 0 {
		t.Fatalf("failed: %v", f)
	}
	st := set.Servers()[0].Status()
	problems := map[string]string{}
	for _, p := range st.Problems {
		problems[p.Tool] += p.Problem
	}
	wantProblems := map[string]string{
		"chain":     "inputSchema is over the validation budget, arguments are not validated: its worst-case validation work",
		"chain_out": "outputSchema is over the validation budget, structuredContent is not checked",
		"wide":      "more than 5000 subschemas (Options.MaxSchemaNodes)",
		"fanout":    "inputSchema is over the validation budget",
	}
	for tool, want := range wantProblems {
		if !strings.Contains(problems[tool], want) {
			t.Errorf("problem of %s = %q, want it to contain %q", tool, problems[tool], want)
		}
	}
	if p := problems["tree"]; p != "" {
		t.Errorf("tree has a problem: %s", p)
	}

	tools := set.Tools()
	call := func(name, args string) (string, time.Duration, error) {
		ctx := ctxT(t, 2*time.Minute) // a validation that ran away would end here: slack.Within catches it first
		start := time.Now()
		out, err := byName(t, tools, name).Handler(ctx, json.RawMessage(args))
		return out, time.Since(start), err
	}
	// Deep arguments for the recursive fan-out: 40 levels would be 2^40 steps to validate.
	deep := strings.Repeat(`{"a":`, 40) + `{}` + strings.Repeat(`}`, 40)
	for _, c := range []struct{ tool, args string }{
		{"chain", `{"x":"s"}`},
		{"chain_out", `{}`},
		{"wide", `{"p1":"s"}`},
		{"fanout", deep},
	} {
		out, d, err := call(c.tool, c.args)
		if err != nil || !strings.Contains(out, "ok") && !strings.Contains(out, `"x"`) {
			t.Errorf("%s: %q, %v; want the server's answer (validation off)", c.tool, out, err)
		}
		slack.Within(t, c.tool+" call", d, 0)
	}
	// The tree is validated: wrong types deep inside are found; arguments nested past the
	// depth the work bound covers are passed on unvalidated rather than risk the deadline.
	if _, _, err := call("tree", `{"root":{"kids":[{"v":"x"}]}}`); !errors.Is(err, bridge.ErrInvalidArguments) {
		t.Errorf("tree with a bad leaf: %v, want ErrInvalidArguments", err)
	}
	deepTree := strings.Repeat(`{"kids":[`, 100) + `{"v":"x"}` + strings.Repeat(`]}`, 100)
	out, d, err := call("tree", `{"root":`+deepTree+`}`)
	if err != nil || out != "ok" {
		t.Errorf("tree 100 levels deep: %q, %v after %v; want it passed on unvalidated", out, err, d)
	}
	slack.Within(t, "a call with arguments 100 levels deep", d, 0)
}

// A 200,000-property schema (5 MB on the wire) costs Connect linear decoding, never the
// quadratic compile (which took minutes), and is reported over budget whenever the listing
// finished, however loaded the machine: every schema is measured at listing. (The connect
// timeout is generous, so the listing finishes; slack.Within catches a compile.)
// hugeSchemaAllocs bounds the bytes Connect allocates for a huge schema, in multiples of its size.
const hugeSchemaAllocs = 100

func TestHostileHugeSchemaConnect(t *testing.T) {
	schema := wideSchema(200_000)
	srv := &hostileServer{tools: []string{toolJSON("huge", schema, ""), toolJSON("fine", `{"type":"object"}`, "")}}
	opts := quiet()
	opts.ConnectTimeout = 2 * time.Minute
	// The work Connect does for the schema is measured in bytes allocated, which neither the
	// machine's load nor the race detector changes (its wall time under -race on a loaded
	// 2-core machine ran from 16 s to 41 s). Work that grew faster than the schema (a
	// quadratic pass, a copy per property) would show as many times its size; today it is
	// about 60× (go-sdk decodes the listing and re-marshals each schema; 66× under -race).
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	set, err := connectSet(t, []bridge.ServerConfig{{ID: "huge", URL: srv.start(t)}}, opts)
	d := time.Since(start)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("Connect took %v and allocated %.1f MB for a %.1f MB schema (%.1f×)", d.Round(time.Millisecond), float64(alloc)/1e6, float64(len(schema))/1e6, float64(alloc)/float64(len(schema)))
	if limit := uint64(hugeSchemaAllocs * len(schema)); alloc > limit {
		t.Errorf("Connect with a %d-byte schema allocated %d bytes, more than %d× the schema", len(schema), alloc, hugeSchemaAllocs)
	}
	if f := set.Failed(); len(f) > 0 {
		t.Fatalf("failed: %v", f[0])
	}
	if n := len(set.Tools()); n != 2 {
		t.Fatalf("tools = %v, want huge and fine", names(set.Tools()))
	}
	var problem string
	for _, p := range set.Servers()[0].Status().Problems {
		problem += p.Problem
	}
	if !strings.Contains(problem, "larger than") {
		t.Errorf("problems = %q, want the huge schema over budget", problem)
	}
}

// Bytes that are not UTF-8 in a tool's name, description or schema never reach the model:
// json.Marshal of the tools is valid JSON in valid UTF-8, with U+FFFD in their place (the
// one exception to byte-exact Parameters, reported as a problem), and the tool still works.
func TestHostileInvalidUTF8(t *testing.T) {
	srv := &hostileServer{tools: []string{
		"{\"name\":\"bad\xffname\",\"description\":\"desc \xfe\xfd here\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"p\xff\":{\"type\":\"string\",\"description\":\"\xc3\"}}}}",
		`{"name":"fine","description":"ok","inputSchema":{"type":"object"}}`,
	}}
	set, err := connectSet(t, []bridge.ServerConfig{{ID: "utf8", URL: srv.start(t)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := set.Failed(); len(f) > 0 {
		t.Fatal(f)
	}
	tools := set.Tools()
	b, err := json.Marshal(tools)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b) || !utf8.Valid(b) {
		t.Fatalf("json.Marshal(tools) is not valid UTF-8 JSON: %q", b)
	}
	if len(tools) != 2 {
		t.Fatalf("tools = %v, want both", names(tools))
	}
	bad := tools[0]
	for what, s := range map[string]string{"name": bad.Name, "description": bad.Description, "parameters": string(bad.Parameters)} {
		if !utf8.ValidString(s) {
			t.Errorf("%s is not valid UTF-8: %q", what, s)
		}
	}
	if want := "{\"type\":\"object\",\"properties\":{\"p\uFFFD\":{\"type\":\"string\",\"description\":\"\uFFFD\"}}}"; string(bad.Parameters) != want {
		t.Errorf("Parameters = %s, want %s", bad.Parameters, want)
	}
	var problem string
	for _, p := range set.Servers()[0].Status().Problems {
		problem += p.Problem
	}
	if !strings.Contains(problem, "U+FFFD") {
		t.Errorf("problems %q do not report the replacement", problem)
	}
	if out, err := bad.Handler(ctxT(t, 10*time.Second), json.RawMessage(`{}`)); err != nil || out != "ok" {
		t.Errorf("call = %q, %v", out, err)
	}
}

// The App proxy mounted on a local port is reachable from every page the user opens: a
// cross-site request or a DNS-rebinding name must get 403 and never reach the server; an
// App's arguments are validated like a model's.
func TestHostileProxyRequests(t *testing.T) {
	srv := &hostileServer{tools: []string{toolJSON("count", `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`, "")}}
	opts := quiet()
	opts.ProxyAccess.AllowedOrigins = []string{"https://app.example"}
	set, err := connectSet(t, []bridge.ServerConfig{{ID: "s", URL: srv.start(t)}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(set.ProxyHandler())
	defer hs.Close()
	port := hs.URL[strings.LastIndex(hs.URL, ":")+1:]
	const good = `{"serverId":"s","method":"tools/call","params":{"name":"count","arguments":{"n":1}}}`
	tests := []struct {
		name, host, origin, body string
		status                   int
		reaches                  bool
	}{
		{"loopback, no origin", "", "", good, 200, true},
		{"localhost name and origin", "localhost:" + port, "http://localhost:" + port, good, 200, true},
		{"configured origin", "", "https://app.example", good, 200, true},
		{"DNS rebinding", "evil.example:" + port, "http://evil.example:" + port, good, 403, false},
		{"rebinding without origin", "evil.example", "", good, 403, false},
		{"cross-site page", "", "http://evil.example", good, 403, false},
		{"sandboxed frame", "", "null", good, 403, false},
		{"invalid arguments", "", "", `{"serverId":"s","method":"tools/call","params":{"name":"count","arguments":{"n":"one"}}}`, 400, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := srv.calls.Load()
			req, err := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			if tt.host != "" {
				req.Host = tt.host
			}
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("status = %d (%s), want %d", resp.StatusCode, body, tt.status)
			}
			if reached := srv.calls.Load() > before; reached != tt.reaches {
				t.Errorf("server reached = %v, want %v", reached, tt.reaches)
			}
		})
	}
}
