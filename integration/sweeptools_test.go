package integration

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/ttalk/mcpbridge/bridge"
)

// sweepToolsFile holds the model-visible tools of the sweep's servers, so the search quality
// and token benchmarks (bridge/toolsearch, bridge/tokens, bridge/provider) run offline.
const sweepToolsFile = "../bridge/toolsearch/testdata/sweep.json"

// sweepTools is the document in sweepToolsFile.
type sweepTools struct {
	Source  string            `json:"source"`
	Servers []sweepToolServer `json:"servers"`
}

type sweepToolServer struct {
	ID            string          `json:"id"`
	Package       string          `json:"package"`
	Version       string          `json:"version"`
	ServerName    string          `json:"serverName,omitempty"`
	ServerVersion string          `json:"serverVersion,omitempty"`
	Instructions  string          `json:"instructions,omitempty"`
	Tools         []sweepToolJSON `json:"tools"`
}

type sweepToolJSON struct {
	Name        string          `json:"name"`
	RemoteName  string          `json:"remoteName,omitempty"` // when it differs from Name
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// checkSweepTools compares the sweep's tool listings with sweepToolsFile, or rewrites it with
// -update-sweep-tools. The temporary home directory the servers ran in is written as $HOME.
func checkSweepTools(t *testing.T, set *bridge.Set, versions map[string]string, home string) {
	t.Helper()
	doc := sweepTools{Source: "model-visible tools of the compatibility sweep's servers as mcpbridge lists them (integration/sweep/run with -update-sweep-tools)"}
	clean := func(s string) string { return strings.ReplaceAll(s, home, "$HOME") }
	for _, sv := range sweepServers {
		srv, ok := set.Lookup(sv.id)
		if !ok {
			continue
		}
		st := srv.Status()
		ds := sweepToolServer{ID: sv.id, Package: sv.pkg, Version: versions[sv.id], ServerName: st.ServerName,
			ServerVersion: st.ServerVersion, Instructions: clean(srv.Instructions())}
		for _, tl := range srv.Tools() {
			dt := sweepToolJSON{Name: tl.Name, Title: tl.Title, Description: clean(tl.Description),
				InputSchema: json.RawMessage(clean(string(tl.Parameters)))}
			if tl.RemoteName != tl.Name {
				dt.RemoteName = tl.RemoteName
			}
			ds.Tools = append(ds.Tools, dt)
		}
		doc.Servers = append(doc.Servers, ds)
	}
	want, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if *updateSweepTools {
		if err := os.WriteFile(sweepToolsFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got, err := os.ReadFile(sweepToolsFile); err != nil || string(got) != string(want) {
		t.Errorf("%s is stale or missing (%v): rerun integration/sweep/run with -update-sweep-tools", sweepToolsFile, err)
	}
}
