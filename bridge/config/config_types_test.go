package config

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// TestServerConfigNeverPrintsSecrets checks every way a ServerConfig is printed or logged.
// The masking rules themselves are tested in internal/redact.
func TestServerConfigNeverPrintsSecrets(t *testing.T) {
	t.Parallel()
	cfgs := []ServerConfig{
		{ID: "a", Command: "srv", Args: []string{"--x", "--api-key", "arg-secret", "--token=tok-secret"}, Env: map[string]string{"TOKEN": "env-secret"}},
		{ID: "b", URL: "https://u:pass-secret@h/mcp?k=query-secret&sk-live-bare-secret", Headers: map[string]string{"Authorization": "Bearer hdr-secret"}},
	}
	secrets := []string{"arg-secret", "tok-secret", "env-secret", "pass-secret", "query-secret", "bare-secret", "hdr-secret"}
	for _, c := range cfgs {
		var b strings.Builder
		slog.New(slog.NewTextHandler(&b, nil)).Info("cfg", "server", c)
		slog.New(slog.NewJSONHandler(&b, nil)).Info("cfg", "server", c)
		out := fmt.Sprintf("%v %+v %#v %s", c, c, c, c) + b.String()
		for _, secret := range secrets {
			if strings.Contains(out, secret) {
				t.Errorf("%s leaked in %s", secret, out)
			}
		}
		if !strings.Contains(out, c.ID) || !strings.Contains(out, "***") {
			t.Errorf("output does not name the server or show the mask: %s", out)
		}
	}
}
