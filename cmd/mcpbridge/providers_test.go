package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/config"
	"github.com/ttalk/mcpbridge/bridge/provider"
)

// tools --format prints exactly what provider.New gives for the same tools, and says on
// stderr which tools the API may still reject or were sent differently.
func TestToolsFormat(t *testing.T) {
	f := writeFixture(t, "claude_desktop.json", false)
	servers, _, err := config.Read(f.path)
	if err != nil {
		t.Fatal(err)
	}
	set, err := bridge.Connect(t.Context(), servers, &bridge.Options{Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	tests := []struct {
		args       []string
		format     provider.Format
		opts       provider.Options
		wantStderr string
	}{
		{[]string{"--format", "openai"}, provider.FormatOpenAI, provider.Options{}, "openai may still reject it: external-ref"},
		{[]string{"--format", "openai", "--strict"}, provider.FormatOpenAI, provider.Options{Strict: true}, "remote_ref: sent with strict: false"},
		{[]string{"--format", "openai-responses", "--strict"}, provider.FormatOpenAIResponses, provider.Options{Strict: true}, "sent with strict: false"},
		{[]string{"--format", "anthropic", "--adapt"}, provider.FormatAnthropic, provider.Options{Adapt: true}, "remote_ref: anthropic may still reject it"},
		{[]string{"--format", "gemini", "--gemini-parameters"}, provider.FormatGemini, provider.Options{GeminiParameters: true}, "sent with parametersJsonSchema"},
		{[]string{"--format", "anthropic", "--defer", "client"}, provider.FormatAnthropic, provider.Options{Defer: &provider.Deferral{}}, "deferred: the model reads"},
		{[]string{"--format", "openai-responses", "--defer", "hosted"}, provider.FormatOpenAIResponses, provider.Options{Defer: &provider.Deferral{Search: provider.SearchHosted}}, "deferred: the model reads"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			stdout, stderr, code := runCLI(t, append([]string{"tools", f.path}, tt.args...)...)
			if code != 2 { // the fixture's broken servers
				t.Errorf("exit code = %d, want 2\nstderr:\n%s", code, stderr)
			}
			checkNoSecrets(t, stdout, stderr)
			ts, err := provider.New(tt.format, set.Tools(), &tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(ts)
			if got := strings.TrimSuffix(stdout, "\n"); got != string(want) {
				t.Errorf("stdout =\n%s\nwant =\n%s", got, want)
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr does not say %q:\n%s", tt.wantStderr, stderr)
			}
		})
	}
	for _, bad := range [][]string{{"--format", "llama"}, {"--format", "anthropic", "--strict"}, {"--format", "openai", "--gemini-parameters"},
		{"--format", "openai", "--defer", "hosted"}, {"--format", "anthropic", "--defer", "semantic"}, {"--defer", "client"}} {
		_, stderr, code := runCLI(t, append([]string{"tools", f.path}, bad...)...)
		if code != exitUsage {
			t.Errorf("tools %v: exit code %d, want %d (usage)\n%s", bad, code, exitUsage, stderr)
		}
	}
}

// probe --json lists per target the tools rejected as sent and what is left after adapting.
func TestProbeProvidersJSON(t *testing.T) {
	f := writeFixture(t, "claude_desktop.json", false)
	stdout, _, _ := runCLI(t, "probe", "--json", f.path)
	var rep probeReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	basic := rep.Servers[0]
	if len(basic.Providers) != len(provider.Targets()) {
		t.Fatalf("providers = %+v, want one entry per target", basic.Providers)
	}
	byTarget := map[string]targetReport{}
	for _, tr := range basic.Providers {
		byTarget[tr.Target] = tr
	}
	anth := byTarget["anthropic"]
	if anth.Rejected != 2 || anth.LeftAfterAdapting != 1 {
		t.Errorf("anthropic = %+v, want pick (top-level anyOf, adaptable) and remote_ref (external $ref, not) rejected", anth)
	}
	var pick *toolLint
	for i := range anth.Tools {
		if anth.Tools[i].Tool == "pick" {
			pick = &anth.Tools[i]
		}
	}
	if pick == nil || len(pick.Findings) == 0 || pick.Findings[0].Rule != provider.RuleRootCombinator || len(pick.Remaining) != 0 {
		t.Errorf("anthropic pick = %+v, want root-combinator, nothing left after adapting", pick)
	}
}
