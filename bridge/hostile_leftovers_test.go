package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/bridge"
)

// A tools/list answer nested past the depth go-sdk decodes (one inputSchema 1,001 levels
// deep) fails the listing at once with an error saying so, on stdio as over HTTP, instead of
// leaving the request to wait out the connect timeout: the error is never a timeout.
func TestHostileDeepSchemaFailsAtOnce(t *testing.T) {
	hs := &hostileServer{tools: []string{toolJSON("deep", deepSchema(deepSchemaLevels), ""), toolJSON("fine", `{"type":"object"}`, "")}}
	tests := []struct {
		name string
		cfg  bridge.ServerConfig
		want string
	}{
		{"stdio", rawConfig(t, "deep", "deepschema", newProcLog(t)), "nests deeper than 1000 levels"},
		{"http", bridge.ServerConfig{ID: "deep", URL: hs.start(t)}, "nesting depth of 1000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := quiet()
			opts.ConnectTimeout = 2 * time.Minute // a timeout would be the bug, not the machine
			set, err := connectSet(t, []bridge.ServerConfig{tt.cfg}, opts)
			if err != nil {
				t.Fatal(err)
			}
			f := set.Failed()
			if len(f) != 1 || f[0].Phase != bridge.PhaseList || errors.Is(f[0], context.DeadlineExceeded) || !strings.Contains(f[0].Error(), tt.want) {
				t.Fatalf("Failed() = %v, want a tools/list failure saying %q, not a timeout", f, tt.want)
			}
		})
	}
}

// A 2 MB tool description (256 times the default limit) reaches the model cut to
// Options.MaxDescriptionBytes (head kept, a marker saying how much was cut), with a problem
// for the operator; raising the option gives the whole description. (It was 10 MB: under
// -race on a 2-core machine at load 37 its two Connects took the context's whole 60 s,
// decoding the listing four times over; the handling is linear in the size, so 2 MB
// proves the same.)
func TestHostileHugeDescriptionIsCut(t *testing.T) {
	huge := "Does things. " + strings.Repeat("é", 1<<20) // 2 MB, two-byte runes
	hs := &hostileServer{tools: []string{
		`{"name":"verbose","description":` + strconv.Quote(huge) + `,"inputSchema":{"type":"object"}}`,
		`{"name":"terse","description":"Short.","inputSchema":{"type":"object"}}`,
	}}
	url := hs.start(t)
	for _, tt := range []struct {
		name string
		max  int
		want int // length of the description the model gets, at most
	}{
		{"default", 0, bridge.DefaultMaxDescriptionBytes + 100},
		{"raised", 32 << 20, len(huge)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts := quiet()
			opts.MaxDescriptionBytes = tt.max
			set, err := connectSet(t, []bridge.ServerConfig{{ID: "wordy", URL: url}}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if f := set.Failed(); len(f) > 0 {
				t.Fatalf("failed: %v", f)
			}
			d := byName(t, set.Tools(), "verbose").Description
			if !strings.HasPrefix(d, "Does things. é") || len(d) > tt.want || !utf8.ValidString(d) {
				t.Errorf("description: %d bytes, valid UTF-8 %v, starts %q; want at most %d, the head kept", len(d), utf8.ValidString(d), d[:min(len(d), 20)], tt.want)
			}
			var problems []string
			for _, p := range set.Servers()[0].Status().Problems {
				problems = append(problems, p.Tool+": "+p.Problem)
			}
			cut := tt.max == 0
			if cut != strings.Contains(d, "[description cut: ") || cut != (len(problems) == 1 && strings.Contains(problems[0], "verbose: description is 2097165 bytes, over Options.MaxDescriptionBytes (8192)")) {
				t.Errorf("cut %v: description ends %q, problems %q", cut, d[max(0, len(d)-60):], problems)
			}
			if got := byName(t, set.Tools(), "terse").Description; got != "Short." {
				t.Errorf("terse = %q", got)
			}
		})
	}
}

// An App's notifications/message is logged with its data cut to a couple of KiB (and its
// size), whatever it sends: a 3 MB message never reaches the log whole.
func TestHostileAppLogMessageIsCut(t *testing.T) {
	var logs syncBuffer
	var hs hookServer
	opts := &bridge.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	set, err := connectSet(t, []bridge.ServerConfig{hs.inProcess("files")}, opts)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(strings.Repeat("x", 3<<20))
	params := `{"level":"info","logger":"` + strings.Repeat("l", 1000) + `","data":` + string(data) + `}`
	if _, err := set.Proxy(ctxT(t, 30*time.Second), apps.ProxyRequest{ServerID: "files", Method: "notifications/message", Params: json.RawMessage(params)}); err != nil {
		t.Fatal(err)
	}
	got := logs.String()
	if !strings.Contains(got, "message from MCP App") || !strings.Contains(got, "dataBytes=3145730") || len(got) > 4<<10 {
		t.Errorf("log is %d bytes, want the message cut to a few KiB with its size:\n%.500s", len(got), got)
	}
}
