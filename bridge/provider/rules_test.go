package provider

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ttalk/mcpbridge/bridge"
)

// captured returns one tool's schema from testdata/servers (real tools/list output).
func captured(t *testing.T, server, tool string) json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "servers", server+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var cf corpusFile
	if err := json.Unmarshal(b, &cf); err != nil {
		t.Fatal(err)
	}
	for _, tl := range cf.Tools {
		if tl.Name == tool {
			return tl.InputSchema
		}
	}
	t.Fatalf("no tool %s in testdata/servers/%s.json", tool, server)
	return nil
}

// Real schemas quoted in public bug reports, reduced to the part that matters.
const (
	// PagerDuty MCP list_schedules, github/copilot-cli#1876 (pydantic: $defs, an array without
	// items, "default": null on a string).
	pagerDutyListSchedules = `{"$defs":{"ScheduleQuery":{"properties":{"query":{"type":"string","default":null},"team_ids":{"type":"array","default":null},"limit":{"type":"integer","default":20}},"type":"object"}},"properties":{"query_model":{"$ref":"#/$defs/ScheduleQuery"}},"required":["query_model"],"type":"object"}`
	// huly-mcp update_issue, dearlordylord/huly-mcp#66: "at least one field" as a top-level anyOf.
	hulyUpdateIssue = `{"type":"object","required":["project","identifier"],"properties":{"project":{"type":"string"},"identifier":{"type":"string"},"title":{"type":"string"},"description":{"type":"string"}},"anyOf":[{"required":["title"]},{"required":["description"]}]}`
	// Higgsfield video_analysis_create, MoonshotAI/kimi-code#2328: a root that is only oneOf.
	higgsfieldVideoAnalysis = `{"oneOf":[{"required":["video_input_id"]},{"required":["youtube_url"]}],"properties":{"video_input_id":{"type":"string"},"youtube_url":{"type":"string"}}}`
	// Copilot's terminal_last_command, diegosouzapw/OmniRoute#3357: properties but no "type".
	copilotTerminalLastCommand = `{"properties":{"command":{"type":"string"}}}`
	// Snowflake MCP create_object, google-gemini/gemini-cli#13326: anyOf with a $defs reference.
	snowflakeCreateObject = `{"type":"object","properties":{"target_object":{"anyOf":[{"type":"string"},{"$ref":"#/$defs/Obj"}]}},"required":["target_object"],"$defs":{"Obj":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`
	// Notion MCP, anomalyco/opencode#11888: "properties" on a non-object type.
	notionData = `{"type":"object","properties":{"data":{"type":"string","properties":{"id":{"type":"string"}},"required":["id"]}}}`
	// mcp-server-fetch (pydantic AnyUrl): a string with format "uri".
	fetchURL = `{"type":"object","properties":{"url":{"type":"string","format":"uri","minLength":1,"description":"URL to fetch"}},"required":["url"]}`
	// A zod .nullable() field (zod-to-json-schema): a type list; with an integer enum.
	zodNullableLevel = `{"type":"object","properties":{"level":{"type":["integer","null"],"enum":[1,2,3,null]},"extra":{}}}`
	// A draft-4 schema (python jsonschema era): boolean exclusiveMinimum.
	draft4Ratio = `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"ratio":{"type":"number","minimum":0,"exclusiveMinimum":true}}}`
	// A schema pointing at a shared definition on the web.
	externalRef = `{"type":"object","properties":{"where":{"$ref":"https://schemas.example.com/geo.json#/Point"}}}`
	// A map of string → string (Kubernetes labels, HTTP headers) and an "anything" value.
	labelsMap = `{"type":"object","properties":{"labels":{"type":"object","additionalProperties":{"type":"string"}},"value":{}},"required":["labels","value"],"additionalProperties":false}`
)

// Each rule, on a real schema: what the lint reports as sent, and whether adapting fixes it.
func TestRulesOnRealSchemas(t *testing.T) {
	tests := []struct {
		name    string
		schema  json.RawMessage
		target  Target
		rule    string
		path    string // of the first finding
		adapted bool   // the adapter removes the finding
	}{
		{"filesystem read_file optional head/tail", captured(t, "filesystem", "read_file"), OpenAIStrict, RuleStrictRequired, "/properties/tail", true},
		{"filesystem read_file no additionalProperties", captured(t, "filesystem", "read_file"), OpenAIStrict, RuleStrictAdditional, "", true},
		{"filesystem $schema", captured(t, "filesystem", "read_file"), GeminiParameters, RuleGeminiField, "/$schema", true},
		{"everything get-env empty object", captured(t, "everything", "get-env"), GeminiParameters, RuleGeminiEmptyObject, "", true},
		{"everything get-resource-links number range", captured(t, "everything", "get-resource-links"), OpenAIStrict, RuleStrictRequired, "/properties/count", true},
		{"pagerduty array without items (openai)", json.RawMessage(pagerDutyListSchedules), OpenAI, RuleArrayItems, "/$defs/ScheduleQuery/properties/team_ids", true},
		{"pagerduty array without items (strict)", json.RawMessage(pagerDutyListSchedules), OpenAIStrict, RuleArrayItems, "/$defs/ScheduleQuery/properties/team_ids", false},
		{"pagerduty $defs (gemini)", json.RawMessage(pagerDutyListSchedules), Gemini, RuleLocalRef, "", true},
		{"pagerduty $ref (gemini parameters)", json.RawMessage(pagerDutyListSchedules), GeminiParameters, RuleLocalRef, "", true},
		{"pagerduty array without items (gemini parameters)", json.RawMessage(pagerDutyListSchedules), GeminiParameters, RuleArrayItems, "", false},
		{"huly top-level anyOf (anthropic)", json.RawMessage(hulyUpdateIssue), Anthropic, RuleRootCombinator, "", true},
		{"huly top-level anyOf (openai)", json.RawMessage(hulyUpdateIssue), OpenAI, RuleRootCombinator, "", true},
		{"higgsfield root oneOf without type", json.RawMessage(higgsfieldVideoAnalysis), Anthropic, RuleRootType, "", true},
		{"higgsfield root oneOf", json.RawMessage(higgsfieldVideoAnalysis), OpenAIStrict, RuleRootCombinator, "", true},
		{"copilot no type", json.RawMessage(copilotTerminalLastCommand), GeminiParameters, RuleRootType, "", true},
		{"snowflake $ref in anyOf", json.RawMessage(snowflakeCreateObject), Gemini, RuleLocalRef, "", true},
		{"snowflake anyOf variant without type", json.RawMessage(snowflakeCreateObject), GeminiParameters, RuleLocalRef, "", true},
		{"notion properties on a string", json.RawMessage(notionData), GeminiParameters, RuleGeminiNotObject, "/properties/data/properties", true},
		{"fetch format uri (gemini)", json.RawMessage(fetchURL), GeminiParameters, RuleGeminiFormat, "/properties/url/format", true},
		{"fetch format uri (strict)", json.RawMessage(fetchURL), OpenAIStrict, RuleStrictFormat, "/properties/url/format", true},
		{"fetch minLength (strict)", json.RawMessage(fetchURL), OpenAIStrict, RuleStrictKeyword, "/properties/url/minLength", true},
		{"zod type list", json.RawMessage(zodNullableLevel), GeminiParameters, RuleGeminiTypeList, "/properties/level", true},
		{"zod integer enum", json.RawMessage(zodNullableLevel), GeminiParameters, RuleGeminiEnum, "/properties/level", true},
		{"zod untyped property (gemini)", json.RawMessage(zodNullableLevel), GeminiParameters, RuleGeminiNoType, "/properties/extra", false},
		{"zod untyped property (strict)", json.RawMessage(zodNullableLevel), OpenAIStrict, RuleStrictType, "/properties/extra", false},
		{"draft-4 boolean exclusiveMinimum", json.RawMessage(draft4Ratio), Anthropic, RuleDraft202012, "", true},
		{"external $ref", json.RawMessage(externalRef), OpenAI, RuleExternalRef, "/properties/where", false},
		{"labels map (strict)", json.RawMessage(labelsMap), OpenAIStrict, RuleStrictAdditional, "/properties/labels", false},
	}
	covered := map[string]bool{RuleName: true, RuleSchemaObject: true, RuleStrictLimits: true} // TestLintNames, TestLintNotAnObject, TestStrictLimits
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			covered[tt.rule] = true
			if !appliesTo(tt.rule, tt.target) {
				t.Fatalf("rule %s does not list target %s", tt.rule, tt.target)
			}
			f := find(LintSchema(tt.schema, tt.target), tt.rule)
			if f == nil {
				t.Fatalf("LintSchema(%s, %s) = %v, want a %s finding", tt.schema, tt.target, LintSchema(tt.schema, tt.target), tt.rule)
			}
			if tt.path != "" && f.Path != tt.path {
				t.Errorf("%s finding at %q, want %q", tt.rule, f.Path, tt.path)
			}
			a, err := Adapt(tt.schema, tt.target)
			if err != nil {
				t.Fatal(err)
			}
			if left := find(a.Remaining, tt.rule) != nil; left == tt.adapted {
				t.Errorf("after adapting, %s left = %v, want %v\nadapted: %s\nremaining: %v", tt.rule, left, !tt.adapted, a.Schema, a.Remaining)
			}
			if len(a.Changes) == 0 && tt.adapted {
				t.Errorf("adapted with no change listed")
			}
		})
	}
	for _, r := range Rules() {
		if !covered[r.ID] {
			t.Errorf("rule %s has no test", r.ID)
		}
		if r.Reason == "" || strings.Contains(r.Reason, "\n") || len(r.Targets) == 0 {
			t.Errorf("rule %s: want a one-line reason and targets", r.ID)
		}
	}
}

func find(fs []Finding, rule string) *Finding {
	for i := range fs {
		if fs[i].Rule == rule {
			return &fs[i]
		}
	}
	return nil
}

func TestLintNames(t *testing.T) {
	tests := []struct {
		name string
		bad  []Target
	}{
		{"read_file", nil},
		{"get-env", nil},
		{"1password", []Target{Gemini, GeminiParameters}}, // Gemini: letter or _ first
		{"fs.read", []Target{OpenAI, OpenAIStrict, Anthropic}},
		{"a b", Targets()},
		{strings.Repeat("x", 65), Targets()},
		{"", Targets()},
	}
	for _, tt := range tests {
		for _, target := range Targets() {
			got := find(Lint(bridge.Tool{Name: tt.name, Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}, target), RuleName) != nil
			if want := slices.Contains(tt.bad, target); got != want {
				t.Errorf("Lint(name %q, %s) reports the name: %v, want %v", tt.name, target, got, want)
			}
		}
	}
}

func TestLintNotAnObject(t *testing.T) {
	for _, s := range []string{`[1]`, `"x"`, `{`, ``, `{"a":1} x`} {
		for _, target := range Targets() {
			fs := LintSchema(json.RawMessage(s), target)
			if len(fs) != 1 || fs[0].Rule != RuleSchemaObject {
				t.Errorf("LintSchema(%q, %s) = %v, want one %s finding", s, target, fs, RuleSchemaObject)
			}
		}
		if _, err := Adapt(json.RawMessage(s), OpenAI); err == nil {
			t.Errorf("Adapt(%q) succeeded, want an error", s)
		}
	}
}

func TestStrictLimits(t *testing.T) {
	nested := `{"type":"string"}`
	for range 11 {
		nested = `{"type":"object","properties":{"a":` + nested + `},"required":["a"],"additionalProperties":false}`
	}
	fs := LintSchema(json.RawMessage(nested), OpenAIStrict)
	if f := find(fs, RuleStrictLimits); f == nil || !strings.Contains(f.Detail, "11 levels") {
		t.Errorf("LintSchema(11 nested objects) = %v, want a %s finding", fs, RuleStrictLimits)
	}
	var enum []string
	for i := range 1001 {
		enum = append(enum, `"v`+strings.Repeat("x", i%5)+string(rune('a'+i%26))+`"`)
	}
	big := `{"type":"object","properties":{"e":{"type":"string","enum":[` + strings.Join(enum, ",") + `]}},"required":["e"],"additionalProperties":false}`
	if f := find(LintSchema(json.RawMessage(big), OpenAIStrict), RuleStrictLimits); f == nil {
		t.Errorf("1001 enum values: no %s finding", RuleStrictLimits)
	}
}

// Findings and changes name schema keys, which come from the server: control characters
// must not reach a terminal.
func TestFindingsEscapeControlCharacters(t *testing.T) {
	s := json.RawMessage("{\"type\":\"object\",\"properties\":{\"a\\u001b[31m\":{\"type\":\"array\"}}}")
	for _, f := range LintSchema(s, OpenAI) {
		if strings.ContainsRune(f.String(), 0x1b) {
			t.Errorf("finding %q carries an escape character", f.String())
		}
	}
}

// The adapted schema keeps the server's property order.
func TestAdaptKeepsPropertyOrder(t *testing.T) {
	s := json.RawMessage(`{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"integer"},"mid":{"type":["string","null"]}},"required":["alpha"]}`)
	for _, target := range Targets() {
		a, err := Adapt(s, target)
		if err != nil {
			t.Fatal(err)
		}
		z, al, m := strings.Index(string(a.Schema), `"zeta"`), strings.Index(string(a.Schema), `"alpha"`), strings.Index(string(a.Schema), `"mid"`)
		if z >= al || al >= m {
			t.Errorf("%s: property order lost: %s", target, a.Schema)
		}
	}
}

// A schema a target accepts goes out byte for byte.
func TestAdaptLeavesAcceptedSchemasAlone(t *testing.T) {
	for _, target := range Targets() {
		s := json.RawMessage(` {"type":"object","properties":{"n":{"type":"number","minimum":1.50}},"required":["n"]} `)
		if target == OpenAIStrict {
			s = json.RawMessage(` {"type":"object","properties":{"n":{"type":"number","minimum":1.50}},"required":["n"],"additionalProperties":false} `)
		}
		a, err := Adapt(s, target)
		if err != nil {
			t.Fatal(err)
		}
		if string(a.Schema) != strings.TrimSpace(string(s)) || len(a.Changes) != 0 {
			t.Errorf("%s: accepted schema changed to %s (%v)", target, a.Schema, a.Changes)
		}
	}
}

// FuzzAdapt feeds arbitrary server schemas and model arguments to the lint, the adapter and
// the mapping back: no panics, bounded work, and adapted output is valid JSON.
func FuzzAdapt(f *testing.F) {
	for _, s := range []string{
		pagerDutyListSchedules, hulyUpdateIssue, higgsfieldVideoAnalysis, snowflakeCreateObject, zodNullableLevel, draft4Ratio, labelsMap,
		`{"type":"object","properties":{"a":{"$ref":"#"}}}`,
		`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`,
		strings.Repeat(`{"properties":{"a":`, 150) + `{}` + strings.Repeat(`}}`, 150),
		`{"type":["object",1],"properties":[],"required":{}}`,
		`null`, `{`, `{"enum":[]}`,
	} {
		f.Add(s, `{"a":null,"x":[1,{"b":null}]}`)
	}
	f.Fuzz(func(t *testing.T, schema, args string) {
		for _, target := range Targets() {
			_ = Lint(bridge.Tool{Name: "f", Parameters: json.RawMessage(schema)}, target)
			a, err := Adapt(json.RawMessage(schema), target)
			if err != nil {
				continue
			}
			if !json.Valid(a.Schema) {
				t.Fatalf("%s: adapted schema is not JSON: %s", target, a.Schema)
			}
			if out, err := a.MapArguments(json.RawMessage(args)); err == nil && json.Valid([]byte(args)) && !json.Valid(out) {
				t.Fatalf("%s: MapArguments(%s) = %s, not JSON", target, args, out)
			}
		}
	})
}

// An open object (a map, or "any object") cannot be strict; the finding says so rather than
// asking for "additionalProperties": false, which would change what it accepts.
func TestStrictOpenObjectDetail(t *testing.T) {
	f := find(LintSchema(json.RawMessage(labelsMap), OpenAIStrict), RuleStrictAdditional)
	if f == nil || f.Path != "/properties/labels" || !strings.Contains(f.Detail, "open object") {
		t.Errorf("finding = %+v, want the open object at /properties/labels named", f)
	}
}
