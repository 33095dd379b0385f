package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/internal/skillstest"
)

// serveSkills serves two skills on stdio; "skills-tampered" changes one's SKILL.md after
// listing.
func serveSkills(kind string) int {
	fx := skillstest.New(
		skillstest.Skill{Path: "pdf-processing", Files: map[string]string{
			"SKILL.md":            skillstest.SkillMD("pdf-processing", "Extract, fill, and assemble PDF documents", "Fill forms field by field.\n"),
			"references/FORMS.md": "Forms.\n",
		}},
		skillstest.Skill{Path: "code-review", Files: map[string]string{
			"SKILL.md": skillstest.SkillMD("code-review", "Review a change\u202e for bugs", "Read the diff twice.\n"),
		}},
	)
	if kind == "skills-tampered" {
		fx.Served = func(uri, c string) string { return strings.Replace(c, "field by field", "all at once!!!", 1) }
	}
	if err := fx.MCPServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func skillsFile(t *testing.T, kind string) string {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "servers.yaml")
	yaml := "servers:\n  docs:\n    command: " + strconv.Quote(bin) + "\n    env: {" + serverEnv + ": " + kind + "}\n"
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSkillsCommand(t *testing.T) {
	file := skillsFile(t, "skills")
	out, errOut, code := runCLI(t, "skills", file)
	if code != 0 || !strings.Contains(out, "docs\n") ||
		!strings.Contains(out, "pdf-processing: Extract, fill, and assemble PDF documents [2 files, 119 bytes") ||
		!strings.Contains(out, `code-review: Review a change\u202e for bugs`) || !strings.Contains(errOut, "2 skills; the index costs") {
		t.Errorf("skills (exit %d):\n%s\nstderr:\n%s", code, out, errOut)
	}
	out, _, code = runCLI(t, "skills", "--json", file)
	var reps []skillReport
	if code != 0 || json.Unmarshal([]byte(out), &reps) != nil || len(reps) != 2 || reps[0].Name != "code-review" || reps[1].Files[1] != "references/FORMS.md" || reps[1].IndexTokens == 0 {
		t.Errorf("skills --json (exit %d): %s", code, out)
	}
	out, errOut, code = runCLI(t, "skills", file, "docs/pdf-processing")
	if code != 0 || !strings.Contains(out, `<skill-file server="docs" skill="pdf-processing" path="SKILL.md">`) || !strings.Contains(out, "Fill forms field by field.") || !strings.Contains(errOut, "verified against the manifest") {
		t.Errorf("skills FILE SKILL (exit %d):\n%s\nstderr:\n%s", code, out, errOut)
	}
	if _, errOut, code = runCLI(t, "skills", file, "nope"); code != 2 || !strings.Contains(errOut, `no server of`) {
		t.Errorf("unknown skill: exit %d, %s", code, errOut)
	}
	out, _, code = runCLI(t, "probe", file)
	if code != 0 || !strings.Contains(out, "skills") || !strings.Contains(out, "pdf-processing: Extract, fill, and assemble PDF documents [2 files") {
		t.Errorf("probe (exit %d):\n%s", code, out)
	}
}

func TestSkillsCommandTampered(t *testing.T) {
	out, errOut, code := runCLI(t, "skills", skillsFile(t, "skills-tampered"), "pdf-processing")
	if code != 2 || out != "" || !strings.Contains(errOut, `skills: server "docs" load skill "pdf-processing" file "SKILL.md": digest mismatch`) {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
}
