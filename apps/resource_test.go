package apps

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const testHTML = "<!DOCTYPE html>\n<html><body>é <b>&amp;</b></body></html>"

// connect starts srv and a go-sdk client on in-memory transports and returns the client
// session; both ends are closed when the test ends.
func connect(t *testing.T, srv *mcp.Server, opts *mcp.ClientOptions) (*mcp.ClientSession, *mcp.ServerSession) {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatalf("server Connect: %v", err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "apps-test-client", Version: "v0.0.1"}, opts).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatalf("client Connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, ss
}

func TestResourceHTMLFromServer(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "apps-test", Version: "v0.0.1"}, nil)
	add := func(uri string, c *mcp.ResourceContents) {
		srv.AddResource(&mcp.Resource{URI: uri, Name: uri, MIMEType: ResourceMIMEType},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				if c == nil {
					return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{}}, nil
				}
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
			})
	}
	add("ui://text/app.html", &mcp.ResourceContents{URI: "ui://text/app.html", MIMEType: ResourceMIMEType, Text: testHTML})
	add("ui://blob/app.html", &mcp.ResourceContents{URI: "ui://blob/app.html", MIMEType: ResourceMIMEType, Blob: []byte(testHTML)})
	add("ui://empty/app.html", &mcp.ResourceContents{URI: "ui://empty/app.html", MIMEType: ResourceMIMEType})
	add("ui://none/app.html", nil)
	cs, _ := connect(t, srv, nil)

	tests := []struct {
		uri      string
		wantHTML string
		wantMIME string
		wantErr  string
	}{
		{"ui://text/app.html", testHTML, ResourceMIMEType, ""},
		{"ui://blob/app.html", testHTML, ResourceMIMEType, ""},
		{"ui://empty/app.html", "", ResourceMIMEType, `contents[0] (uri "ui://empty/app.html") has neither text nor blob`},
		{"ui://none/app.html", "", "", "has no contents"},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: tt.uri})
			if err != nil {
				t.Fatalf("ReadResource(%s): %v", tt.uri, err)
			}
			html, mime, err := ResourceHTML(res)
			if html != tt.wantHTML || mime != tt.wantMIME {
				t.Errorf("ResourceHTML(%s) = %q, %q; want %q, %q", tt.uri, html, mime, tt.wantHTML, tt.wantMIME)
			}
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("ResourceHTML(%s) error = %v, want %q", tt.uri, err, tt.wantErr)
			}
		})
	}
}

func TestResourceHTMLMalformed(t *testing.T) {
	for name, res := range map[string]*mcp.ReadResourceResult{
		"nil result":   nil,
		"nil contents": {},
		"nil item":     {Contents: []*mcp.ResourceContents{nil}},
	} {
		if html, _, err := ResourceHTML(res); err == nil || html != "" {
			t.Errorf("ResourceHTML(%s) = %q, %v; want an error", name, html, err)
		}
	}
}

// TestClientCapabilityReachesServer checks that a go-sdk client advertising
// ClientCapability under ExtensionID is seen by a real go-sdk server as the spec requires.
func TestClientCapabilityReachesServer(t *testing.T) {
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(ExtensionID, ClientCapability())
	srv := mcp.NewServer(&mcp.Implementation{Name: "apps-test", Version: "v0.0.1"}, nil)
	_, ss := connect(t, srv, &mcp.ClientOptions{Capabilities: caps})

	ip := ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil {
		t.Fatalf("server saw no client capabilities: %+v", ip)
	}
	ext, ok := ip.Capabilities.Extensions[ExtensionID].(map[string]any)
	if !ok {
		t.Fatalf("server saw extensions %v, want %s", ip.Capabilities.Extensions, ExtensionID)
	}
	mt, _ := ext["mimeTypes"].([]any)
	if len(mt) != 1 || mt[0] != ResourceMIMEType {
		t.Errorf("server saw mimeTypes %v, want [%s]", ext["mimeTypes"], ResourceMIMEType)
	}

	// Each call returns a fresh value.
	a := ClientCapability()
	a["mimeTypes"] = append(a["mimeTypes"].([]string), "x")
	if got := ClientCapability()["mimeTypes"].([]string); !slices.Equal(got, []string{ResourceMIMEType}) {
		t.Errorf("ClientCapability() after a caller's change = %v", got)
	}
}
