package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestProbeNeverPrintsSecrets probes servers whose secrets sit where the CLI is most
// tempted to print them: a bare query key (the whole secret is the key), credential
// arguments, a credential-named environment variable that the server echoes on stderr
// together with its arguments, and a dead endpoint whose query is in the config row and
// in the error, an OAuth client secret. Human, JSON and verbose (debug log) output are checked.
func TestProbeNeverPrintsSecrets(t *testing.T) {
	f := writeFixture(t, "secrets.yaml", true)
	secrets := []string{
		"arg-secret-do-not-print", "flag-secret-do-not-print", "env-secret-do-not-print",
		"bare-secret-do-not-print", "dead-value-secret-do-not-print", testToken,
		"cc-secret-do-not-print",
	}
	for _, args := range [][]string{
		{"probe", f.path},
		{"probe", f.path, "--json"},
		{"probe", f.path, "-v"},
		{"tools", f.path, "-v"},
	} {
		t.Run(strings.Join(args[2:], " "), func(t *testing.T) {
			stdout, stderr, code := runCLI(t, append([]string{args[0], f.path}, args[2:]...)...)
			if args[0] == "probe" && code != 2 {
				t.Errorf("exit code %d, want 2 (three servers fail)\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			for _, s := range secrets {
				if strings.Contains(stdout+stderr, s) {
					t.Errorf("%q printed:\nstdout:\n%s\nstderr:\n%s", s, stdout, stderr)
				}
			}
			if args[0] != "probe" {
				return
			}
			if len(args) > 2 && args[2] == "--json" && !json.Valid([]byte(stdout)) {
				t.Fatalf("stdout is not JSON:\n%s", stdout)
			}
			// The masks show where the secrets were, and the echoed stderr is still there.
			for _, want := range []string{"--api-key ***", "--token=***", "?***", "the args server started with"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("output lacks %q:\n%s", want, stdout)
				}
			}
		})
	}
}

// TestServerEchoingSecretsIsMasked runs a server that echoes its arguments and environment
// on stderr while it works: call -v and probe -v (human and JSON) show the lines with every
// configured secret masked, whoever wrote them.
func TestServerEchoingSecretsIsMasked(t *testing.T) {
	f := writeFixture(t, "echoenv.yaml", false)
	secrets := []string{"arg-header-secret-do-not-print", "env-token-do-not-print", "plain-env-secret-do-not-print"}
	for _, args := range [][]string{
		{"call", f.path, "echo", `{"text":"hi"}`, "-v"},
		{"call", f.path, "env", "-v"}, // a result quoting them
		{"probe", f.path, "--json", "-v"},
		{"probe", f.path, "-v"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			stdout, stderr, code := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			if !strings.Contains(stderr, "the env server: args") {
				t.Fatalf("the server's stderr line is not in the verbose log:\n%s", stderr)
			}
			for _, s := range secrets {
				if strings.Contains(stdout+stderr, s) {
					t.Errorf("%q printed:\nstdout:\n%s\nstderr:\n%s", s, stdout, stderr)
				}
			}
		})
	}
}
