package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/provider"
	"github.com/ttalk/mcpbridge/bridge/skills"
	"github.com/ttalk/mcpbridge/bridge/tokens"
)

// The TypeScript SDK 2.4 skills server (testdata/skillserver, @modelcontextprotocol/server's
// ext/skills, pinned in package.json).

// skillServer is the config of testdata/skillserver/server.mjs in mode.
func skillServer(t *testing.T, mode string) bridge.ServerConfig {
	t.Helper()
	s := requireServers(t)
	if _, err := os.Stat(filepath.Join(s.dir, "node_modules", "@modelcontextprotocol", "server", "dist", "ext", "skills")); err != nil {
		msg := "@modelcontextprotocol/server 2.4 (ext/skills) is not installed: run npm ci in integration/"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bridge.ServerConfig{ID: "pdf", Type: bridge.TypeStdio, Command: s.node,
		Args: []string{filepath.Join(s.dir, "testdata", "skillserver", "server.mjs"), mode}, Dir: s.dir}
}

// scriptedModel is a model that answers from a script: each turn it gets the system prompt
// and the tools, and returns the tool calls of its next step (nil: done).
type scriptedModel struct {
	steps [][]json.RawMessage
	seen  []string // the system prompts it was given
}

func (m *scriptedModel) next(system string, tools json.RawMessage) []json.RawMessage {
	m.seen = append(m.seen, system)
	if len(m.steps) == 0 {
		return nil
	}
	step := m.steps[0]
	m.steps = m.steps[1:]
	return step
}

// README:begin (the README's Skills section shows this function's body; TestReadmeSkills
// keeps them the same)
func agentWithSkills(ctx context.Context, cfgs []bridge.ServerConfig, model *scriptedModel, approve func(skills.Request) bool) ([]string, error) {
	set, err := bridge.Connect(ctx, cfgs, &bridge.Options{
		Skills: true, // declare io.modelcontextprotocol/skills; list skills (metadata only)
		ApproveSkill: func(ctx context.Context, req skills.Request) error {
			if !approve(req) { // ask the user: req.Server, req.Skill.Name, req.Path
				return bridge.Deny("the user did not allow this skill")
			}
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	defer set.Close()
	system := "You are a helpful assistant.\n\n" +
		bridge.InstructionsPrompt(set.Servers()) +
		bridge.SkillsPrompt(set.Servers(), tokens.New().Count, 1500) // names and descriptions
	ts, err := provider.New(provider.FormatAnthropic, set.Tools(), nil) // <server>__load_skill among them
	if err != nil {
		return nil, err
	}
	defs, _ := json.Marshal(ts)
	var results []string
	for calls := model.next(system, defs); calls != nil; calls = model.next(system, defs) {
		for _, call := range calls { // tool_use blocks
			out, err := ts.Handle(ctx, call) // a verified, wrapped SKILL.md, or an error the model reads
			if err != nil {
				return nil, err
			}
			results = append(results, string(out))
		}
	}
	return results, nil
}

// README:end

func toolUse(id, name, input string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"type":"tool_use","id":%q,"name":%q,"input":%s}`, id, name, input))
}

// TestSkillsAgentLoop: a host following the README loads a skill of the TypeScript server
// into an agent loop through the load tool, with approval, then reads one of its files and
// calls the tool the skill describes.
func TestSkillsAgentLoop(t *testing.T) {
	cfg := skillServer(t, "good")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	model := &scriptedModel{steps: [][]json.RawMessage{
		{toolUse("1", "pdf__load_skill", `{"skill":"pdf-processing"}`)},
		{toolUse("2", "pdf__read_skill_file", `{"skill":"pdf-processing","path":"references/FORMS.md"}`)},
		{toolUse("3", "fill_form", `{"field":"applicant","value":"Ada"}`)},
	}}
	var approved []string
	results, err := agentWithSkills(ctx, []bridge.ServerConfig{cfg}, model, func(req skills.Request) bool {
		approved = append(approved, req.Server+"/"+req.Skill.Name+"/"+req.Path)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(model.seen[0], "- pdf-processing: Extract, fill, and assemble PDF documents") ||
		!strings.Contains(model.seen[0], "- code-review: Review a change for bugs before style") {
		t.Errorf("system prompt lacks the skill index:\n%s", model.seen[0])
	}
	if len(results) != 3 {
		t.Fatalf("results = %q", results)
	}
	for i, want := range []string{"Call fill_form once per field", "Field names: applicant, date, signature.", "filled applicant=Ada"} {
		if !strings.Contains(results[i], want) || strings.Contains(results[i], `"is_error":true`) {
			t.Errorf("result %d lacks %q: %s", i, want, results[i])
		}
	}
	if !strings.Contains(results[0], `skill-file server=\"pdf\" skill=\"pdf-processing\" path=\"SKILL.md\"`) {
		t.Errorf("SKILL.md not wrapped as the server's: %s", results[0])
	}
	if strings.Join(approved, ",") != "pdf/pdf-processing/,pdf/pdf-processing/references/FORMS.md" {
		t.Errorf("approved %v", approved)
	}

	// Denied: the model reads the reason; nothing is loaded.
	model = &scriptedModel{steps: [][]json.RawMessage{{toolUse("1", "pdf__load_skill", `{"skill":"pdf-processing"}`)}}}
	results, err = agentWithSkills(ctx, []bridge.ServerConfig{cfg}, model, func(skills.Request) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 || !strings.Contains(results[0], "the user did not allow this skill") || strings.Contains(results[0], "fill_form once") {
		t.Errorf("denied load: %q", results)
	}
}

// TestSkillsEveryFormat: the load tool works in every provider format, and through tool
// search's deferral like any other tool.
func TestSkillsEveryFormat(t *testing.T) {
	cfg := skillServer(t, "good")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	set, err := bridge.Connect(ctx, []bridge.ServerConfig{cfg}, &bridge.Options{Skills: true})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	calls := map[provider.Format]string{
		provider.FormatOpenAI:          `{"id":"c1","type":"function","function":{"name":"pdf__load_skill","arguments":"{\"skill\":\"code-review\"}"}}`,
		provider.FormatOpenAIResponses: `{"type":"function_call","call_id":"c1","name":"pdf__load_skill","arguments":"{\"skill\":\"code-review\"}"}`,
		provider.FormatAnthropic:       `{"type":"tool_use","id":"c1","name":"pdf__load_skill","input":{"skill":"code-review"}}`,
		provider.FormatGemini:          `{"functionCall":{"id":"c1","name":"pdf__load_skill","args":{"skill":"code-review"}}}`,
	}
	for format, call := range calls {
		for _, deferred := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/deferred=%v", format, deferred), func(t *testing.T) {
				var opts *provider.Options
				if deferred {
					opts = &provider.Options{Defer: &provider.Deferral{Defer: []string{"*"}}}
				}
				ts, err := provider.New(format, set.Tools(), opts)
				if err != nil {
					t.Fatal(err)
				}
				defs, _ := json.Marshal(ts)
				search := strings.Contains(string(defs), `"search_tools"`) || strings.Contains(string(defs), `"tool_search"`)
				upfront := strings.Contains(string(defs), `"name":"pdf__load_skill"`) && !strings.Contains(string(defs), `"defer_loading":true`)
				if search != deferred || upfront == deferred {
					t.Errorf("deferred=%v but the upfront tools are %s", deferred, defs)
				}
				out, err := ts.Handle(ctx, json.RawMessage(call))
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(out), "Read the diff twice.") {
					t.Errorf("result: %s", out)
				}
			})
		}
	}
}

// TestSkillsTypeScriptTampered: the SDK's own entries, SKILL.md changed after listing: the
// load fails naming server, skill and file, and nothing is loaded.
func TestSkillsTypeScriptTampered(t *testing.T) {
	cfg := skillServer(t, "tampered")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := bridge.Dial(ctx, cfg, &bridge.Options{Skills: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Skills().Load(ctx, "pdf-processing")
	var se *skills.Error
	if !errors.As(err, &se) || se.Server != "pdf" || se.Skill != "pdf-processing" || se.File != "SKILL.md" {
		t.Fatalf("load of a tampered skill: %v", err)
	}
	if !errors.Is(err, skills.ErrSize) && !errors.Is(err, skills.ErrDigest) && !strings.Contains(err.Error(), "resources/read") {
		t.Errorf("err = %v", err)
	}
	t.Logf("refused: %v", err)
	if _, err := s.Skills().Load(ctx, "code-review"); err != nil {
		t.Errorf("the untouched skill: %v", err)
	}
}

// TestSkillsTypeScriptLying: a TypeScript SkillSource whose manifest lies about SKILL.md's
// digest: the bridge's own verification refuses it, naming server, skill and file.
func TestSkillsTypeScriptLying(t *testing.T) {
	cfg := skillServer(t, "lying")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	set, err := bridge.Connect(ctx, []bridge.ServerConfig{cfg}, &bridge.Options{Skills: true})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	ts, err := provider.New(provider.FormatAnthropic, set.Tools(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ts.Handle(ctx, toolUse("1", "pdf__load_skill", `{"skill":"pdf-processing"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `skills: server \"pdf\" load skill \"pdf-processing\" file \"SKILL.md\": digest mismatch`
	if !strings.Contains(string(out), want) || strings.Contains(string(out), "fill_form once") || !strings.Contains(string(out), `"is_error":true`) {
		t.Errorf("the model got %s, want an error containing %s", out, want)
	}
}

// TestReadmeSkills keeps the README's Skills example the body of agentWithSkills.
func TestReadmeSkills(t *testing.T) {
	src, err := os.ReadFile("skills_test.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	code := string(src)
	code = code[strings.Index(code, "func agentWithSkills"):strings.Index(code, "// README:end")]
	body := code[strings.Index(code, "{\n")+2 : strings.LastIndex(code, "}")]
	var lines []string
	for l := range strings.SplitSeq(strings.TrimRight(body, "\n"), "\n") {
		lines = append(lines, strings.TrimPrefix(l, "\t"))
	}
	if want := strings.Join(lines, "\n"); !strings.Contains(string(readme), want) {
		t.Errorf("README.md's Skills section does not show agentWithSkills' body; it should read:\n%s", want)
	}
}
