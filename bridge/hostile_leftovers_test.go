package bridge_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

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
