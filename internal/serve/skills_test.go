package serve_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/tokens"
	"github.com/ttalk/mcpbridge/internal/serve"
	"github.com/ttalk/mcpbridge/internal/skillstest"
)

// TestAPISkills: the page lists each server's skills with their files, as text.
func TestAPISkills(t *testing.T) {
	fx := skillstest.New(skillstest.Skill{Path: "pdf-processing", Files: map[string]string{
		"SKILL.md":            skillstest.SkillMD("pdf-processing", "Extract <b>PDFs</b>\u202e", "Body.\n"),
		"references/FORMS.md": "Forms.\n",
	}})
	srv := fx.MCPServer()
	cfg := bridge.ServerConfig{ID: "docs", InProcess: func() (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	set, err := bridge.Connect(ctx, []bridge.ServerConfig{cfg}, &bridge.Options{Logger: slog.New(slog.DiscardHandler), Skills: true})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	h, err := serve.Listen(serve.Options{Set: set, Version: "test", Tokens: tokens.New()})
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Serve(sctx) }()
	defer func() { stop(); <-done }()
	hdr := map[string]string{"Cookie": "mcpbridge_token_" + h.Origin()[strings.LastIndex(h.Origin(), ":")+1:] + "=" + token(h)}
	resp, body := send(t, "GET", h.Origin()+"/api/servers", hdr, "")
	var info struct {
		Servers []struct {
			Skills []struct {
				Name, Description string
				Files             []struct {
					Path string
					Size int64
				}
				IndexTokens int
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &info); err != nil || resp.StatusCode != 200 || len(info.Servers) != 1 {
		t.Fatalf("servers = %d %s", resp.StatusCode, body)
	}
	sk := info.Servers[0].Skills
	if len(sk) != 1 || sk[0].Name != "pdf-processing" || sk[0].Description != `Extract <b>PDFs</b>\u202e` ||
		len(sk[0].Files) != 2 || sk[0].Files[1].Path != "references/FORMS.md" || sk[0].Files[1].Size != 7 || sk[0].IndexTokens == 0 {
		t.Errorf("skills = %+v", sk)
	}
	if r := fx.Reads(); len(r) != 0 {
		t.Errorf("the page read skill files: %v", r)
	}
}
