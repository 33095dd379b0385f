// Command client is an MCP client for the official conformance suite
// (@modelcontextprotocol/conformance), built only on the bridge's public API: it connects
// with bridge.Dial and calls tools only through Tool.Handler, as an agent would.
//
// The suite runs it as `client <server-url>` with MCP_CONFORMANCE_SCENARIO naming the
// scenario and, for some scenarios, MCP_CONFORMANCE_CONTEXT holding JSON settings. It exits
// 0 when the scenario's client side ran to completion; the suite itself judges conformance
// from what it saw on the wire. integration/conformance_test.go runs it for every client
// scenario the suite lists.
//
// Adding a scenario: add an entry to scenarios (an unknown scenario fails). Settings that apply to the connection
// (authentication, for example) belong in setup, which every scenario goes through.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/skills"
)

// run is one scenario's client side. It returns an error when something the scenario
// expects to work failed on the client's side (a connection, a call), so the client exits 1
// and the suite reports it; scenarios where the client is meant to refuse something
// (allowClientError in the suite) accept that exit.
type run func(ctx context.Context, c *client) error

// scenarios maps every client scenario of the pinned suite to its client side. A scenario
// not named here (a newer suite may add some) is an error: each needs a deliberate entry.
var scenarios = map[string]run{
	"initialize":                          connectAndList,
	"tools_call":                          toolsCall,
	"elicitation-sep1034-client-defaults": elicitationDefaults,
	"sse-retry":                           sseRetry,
	"request-metadata":                    connectAndList, // the server checks the _meta of what the client sends
	"sep-2322-client-request-state":       requestState,
	"http-standard-headers":               standardHeaders,
	"http-custom-headers":                 customHeaders,
	"http-invalid-tool-headers":           invalidToolHeaders,
	"json-schema-ref-no-deref":            connectAndList, // the server checks that no $ref was fetched
	"json-schema-2020-12-preservation":    schemaPreservation,
	// SEP-2640 skills (Options.Skills): connecting lists the skills and reads none of their
	// files (the server checks); loading a tampered skill through the model's load tool
	// fails verification, so none of its other files is read.
	"sep-2640-client-no-prefetch":        skillsNoPrefetch,
	"sep-2640-client-verify-digest":      skillsVerify(skills.ErrDigest),
	"sep-2640-client-verify-size":        skillsVerify(skills.ErrSize),
	"sep-2640-client-verify-frontmatter": skillsVerify(skills.ErrFrontmatter),

	// Authorization: connect to a server that requires it and call its tool; the settings
	// that make the bridge authorize are in setup. Where the suite expects the client to
	// refuse (an issuer or resource mismatch, a scope retry limit), the refusal is the
	// error it allows.
	"auth/metadata-default":                     authorized,
	"auth/metadata-var1":                        authorized,
	"auth/metadata-var2":                        authorized,
	"auth/metadata-var3":                        authorized,
	"auth/basic-cimd":                           authorized,
	"auth/scope-from-www-authenticate":          authorized,
	"auth/scope-from-scopes-supported":          authorized,
	"auth/scope-omitted-when-undefined":         authorized,
	"auth/scope-step-up":                        authorized,
	"auth/scope-retry-limit":                    authorized,
	"auth/token-endpoint-auth-basic":            authorized,
	"auth/token-endpoint-auth-post":             authorized,
	"auth/token-endpoint-auth-none":             authorized,
	"auth/pre-registration":                     authorized,
	"auth/2025-03-26-oauth-metadata-backcompat": authorized,
	"auth/2025-03-26-oauth-endpoint-fallback":   authorized,
	"auth/resource-mismatch":                    authorized,
	"auth/offline-access-scope":                 authorized,
	"auth/offline-access-not-supported":         authorized,
	"auth/authorization-server-migration":       authorized,
	"auth/iss-supported":                        authorized,
	"auth/iss-not-advertised":                   authorized,
	"auth/iss-supported-missing":                authorized,
	"auth/iss-wrong-issuer":                     authorized,
	"auth/iss-unexpected":                       authorized,
	"auth/iss-normalized":                       authorized,
	"auth/metadata-issuer-mismatch":             authorized,
	"auth/client-credentials-jwt":               authorized,
	"auth/client-credentials-basic":             authorized,
	"auth/enterprise-managed-authorization":     authorized,
	"auth/dpop":                                 authorized,
	"auth/dpop-nonce":                           authorized,
	"auth/wif-jwt-bearer":                       authorized,
}

// scenario returns a scenario's client side.
func scenario(name string) (run, error) {
	r, ok := scenarios[name]
	if !ok {
		return nil, fmt.Errorf("unknown scenario %q: add it to the scenarios table of the conformance client", name)
	}
	return r, nil
}

// client is one scenario run: the server URL, the suite's context and the bridge settings.
type client struct {
	scenario string
	url      string
	context  conformanceContext
	cfg      bridge.ServerConfig
	opts     bridge.Options
	stderr   io.Writer
	dir      string // a private temporary directory, removed at exit
}

// conformanceContext is MCP_CONFORMANCE_CONTEXT, the scenario's settings from the suite.
type conformanceContext struct {
	Name         string `json:"name"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	// PrivateKeyPEM and SigningAlgorithm are for private_key_jwt (auth/client-credentials-jwt).
	PrivateKeyPEM    string `json:"private_key_pem"`
	SigningAlgorithm string `json:"signing_algorithm"`
	// ValidJWT is a workload token for the jwt-bearer grant (auth/wif-jwt-bearer).
	ValidJWT string `json:"valid_jwt"`
	// IdP* are the enterprise identity provider and the user's ID token
	// (auth/enterprise-managed-authorization).
	IdPClientID      string     `json:"idp_client_id"`
	IdPIDToken       string     `json:"idp_id_token"`
	IdPIssuer        string     `json:"idp_issuer"`
	IdPTokenEndpoint string     `json:"idp_token_endpoint"`
	ToolCalls        []toolCall `json:"toolCalls"`
	// Raw is the whole object, for settings the fields above do not name.
	Raw map[string]json.RawMessage `json:"-"`
}

type toolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

func main() {
	if err := mainErr(os.Args[1:], os.Getenv, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "conformance client:", err)
		os.Exit(1)
	}
}

func mainErr(args []string, getenv func(string) string, stderr io.Writer) error {
	if len(args) != 1 {
		return errors.New("usage: client <server-url> (with MCP_CONFORMANCE_SCENARIO set)")
	}
	c := &client{scenario: getenv("MCP_CONFORMANCE_SCENARIO"), url: args[0], stderr: stderr}
	if c.scenario == "" {
		return errors.New("MCP_CONFORMANCE_SCENARIO is not set")
	}
	if raw := getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &c.context); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
		_ = json.Unmarshal([]byte(raw), &c.context.Raw)
	}
	r, err := scenario(c.scenario)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "mcpbridge-conformance-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	c.dir = dir
	if err := c.setup(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	if err := r(ctx, c); err != nil {
		return fmt.Errorf("scenario %s: %w", c.scenario, err)
	}
	return nil
}

// setup fills in the server's configuration and the bridge's options shared by every
// scenario. Connection-wide settings such as authentication go here, keyed on c.scenario or
// c.context when they apply to some scenarios only.
func (c *client) setup() error {
	c.cfg = bridge.ServerConfig{ID: "conformance", Type: "http", URL: c.url}
	c.opts = bridge.Options{
		Logger:         slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelDebug})),
		ConnectTimeout: 20 * time.Second,
		CallTimeout:    20 * time.Second,
		ClientInfo:     &mcp.Implementation{Name: "mcpbridge-conformance-client", Version: "1.0.0"},
	}
	if strings.HasPrefix(c.scenario, "auth/") {
		a, err := c.authConfig()
		if err != nil {
			return err
		}
		c.cfg.Auth, c.opts.TokenStore, c.opts.Authorizer = a, &memoryTokens{m: map[string]*bridge.StoredToken{}}, redirectFollower()
	}
	return nil
}

// clientMetadataURL is the client ID metadata document the suite's authorization servers
// accept (auth/basic-cimd).
const clientMetadataURL = "https://conformance-test.local/client-metadata.json"

// authConfig is the auth setting for an auth/ scenario, from what the suite hands over: the
// client credentials grant for auth/client-credentials-* (client_secret_basic, or
// private_key_jwt when the suite hands over a key); workload identity when it hands over a
// workload token; enterprise-managed authorization when it hands over an identity provider
// and an ID token; else the authorization code flow with whatever client the suite
// pre-registered, a client ID metadata document where the server supports one, and dynamic
// registration. DPoP is the bridge's default: used when the server's metadata asks for it.
// Tokens are handed to the bridge the way a platform would: in a file.
func (c *client) authConfig() (*bridge.AuthConfig, error) {
	x := c.context
	switch {
	case strings.HasPrefix(c.scenario, "auth/client-credentials"):
		a := &bridge.AuthConfig{Type: bridge.AuthClientCredentials, ClientID: x.ClientID, ClientSecret: x.ClientSecret}
		if x.PrivateKeyPEM != "" {
			a.TokenEndpointAuth, a.PrivateKey, a.SigningAlg = "private_key_jwt", x.PrivateKeyPEM, x.SigningAlgorithm
		}
		return a, nil
	case x.ValidJWT != "":
		file, err := c.writeToken("workload-token", x.ValidJWT)
		return &bridge.AuthConfig{Type: bridge.AuthWorkloadIdentity, ClientID: x.ClientID, TokenFile: file}, err
	case x.IdPIDToken != "":
		file, err := c.writeToken("id-token", x.IdPIDToken)
		return &bridge.AuthConfig{
			Type: bridge.AuthEnterprise, ClientID: x.ClientID, ClientSecret: x.ClientSecret, TokenFile: file,
			IdPIssuer: x.IdPIssuer, IdPTokenEndpoint: x.IdPTokenEndpoint, IdPClientID: x.IdPClientID,
		}, err
	}
	return &bridge.AuthConfig{Type: bridge.AuthOAuth, ClientID: x.ClientID, ClientSecret: x.ClientSecret, ClientMetadataURL: clientMetadataURL}, nil
}

// writeToken puts a token the suite handed over in a file of c's private directory.
func (c *client) writeToken(name, token string) (string, error) {
	file := filepath.Join(c.dir, name)
	return file, os.WriteFile(file, []byte(token), 0o600)
}

// redirectFollower is the non-interactive authorization step the suite expects: its
// authorization endpoint redirects at once, so the code, state and iss are read from the
// Location header without a listener.
func redirectFollower() *bridge.Authorizer {
	return &bridge.Authorizer{
		RedirectURL: "http://localhost:3000/callback",
		Fetch: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
			if err != nil {
				return nil, err
			}
			resp, err := hc.Do(req)
			if err != nil {
				return nil, err
			}
			resp.Body.Close()
			to, err := url.Parse(resp.Header.Get("Location"))
			if err != nil || resp.StatusCode/100 != 3 {
				return nil, fmt.Errorf("authorization endpoint answered %d, not a redirect", resp.StatusCode)
			}
			q := to.Query()
			if e := q.Get("error"); e != "" {
				return nil, fmt.Errorf("authorization refused: %s", e)
			}
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
	}
}

// memoryTokens is a bridge.TokenStore in memory: each scenario starts without tokens and
// leaves none behind.
type memoryTokens struct {
	mu sync.Mutex
	m  map[string]*bridge.StoredToken
}

func (s *memoryTokens) LoadToken(_ context.Context, key string) (*bridge.StoredToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[key], nil
}

func (s *memoryTokens) SaveToken(_ context.Context, key string, t *bridge.StoredToken) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = t
	return nil
}

func (s *memoryTokens) DeleteToken(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
	return nil
}

// dial connects with c's settings.
func (c *client) dial(ctx context.Context) (*bridge.Server, error) {
	s, err := bridge.Dial(ctx, c.cfg, &c.opts)
	if err != nil {
		return nil, err
	}
	st := s.Status()
	c.logf("connected: protocol %s, %d tools", st.ProtocolVersion, len(s.Tools()))
	return s, nil
}

func (c *client) logf(format string, args ...any) {
	fmt.Fprintf(c.stderr, format+"\n", args...)
}

// tool finds a model-visible tool by its name on the server.
func tool(s *bridge.Server, remote string) (bridge.Tool, error) {
	for _, t := range s.Tools() {
		if t.RemoteName == remote {
			return t, nil
		}
	}
	return bridge.Tool{}, fmt.Errorf("tool %q not offered", remote)
}

// call calls a tool through its Handler, as a model would.
func call(ctx context.Context, s *bridge.Server, remote string, args string) (string, error) {
	t, err := tool(s, remote)
	if err != nil {
		return "", err
	}
	return t.Handler(ctx, json.RawMessage(args))
}

// skillsNoPrefetch connects with skills on and requires the listing to have found the
// server's skill.
func skillsNoPrefetch(ctx context.Context, c *client) error {
	c.opts.Skills = true
	s, err := c.dial(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	if len(s.Skills().Skills()) == 0 {
		return errors.New("no skill listed")
	}
	return nil
}

// skillsVerify loads the server's first skill through its load tool, as a model would,
// and requires the load to fail with want; were it to load, the client reads the skill's
// files, which the suite counts as using unverified content.
func skillsVerify(want error) run {
	return func(ctx context.Context, c *client) error {
		c.opts.Skills = true
		s, err := c.dial(ctx)
		if err != nil {
			return err
		}
		defer s.Close()
		list := s.Skills().Skills()
		if len(list) == 0 {
			return errors.New("no skill listed")
		}
		var load, read bridge.Tool
		for _, t := range s.Tools() {
			switch {
			case strings.HasSuffix(t.Name, "__"+skills.LoadTool):
				load = t
			case strings.HasSuffix(t.Name, "__"+skills.ReadTool):
				read = t
			}
		}
		if load.Handler == nil || read.Handler == nil {
			return errors.New("no skill tools offered")
		}
		text, err := load.Handler(ctx, json.RawMessage(fmt.Sprintf(`{"skill":%q}`, list[0].Name)))
		if errors.Is(err, want) {
			c.logf("load refused: %s", text)
			return nil
		}
		for _, f := range list[0].Files {
			rel := strings.TrimPrefix(f.URI, list[0].Dir())
			if rel != skills.SkillFile {
				_, _ = read.Handler(ctx, json.RawMessage(fmt.Sprintf(`{"skill":%q,"path":%q}`, list[0].Name, rel)))
			}
		}
		return fmt.Errorf("loading the tampered skill did not fail with %v: %v", want, err)
	}
}

func connectAndList(ctx context.Context, c *client) error {
	s, err := c.dial(ctx)
	if err != nil {
		return err
	}
	return s.Close()
}

// dialCall connects, calls one tool with args and requires it to succeed.
func dialCall(ctx context.Context, c *client, remote, args string) error {
	s, err := c.dial(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	out, err := call(ctx, s, remote, args)
	if err != nil {
		return err
	}
	c.logf("%s: %s", remote, out)
	return nil
}

func toolsCall(ctx context.Context, c *client) error {
	return dialCall(ctx, c, "add_numbers", `{"a":5,"b":3}`)
}

// authorized connects to a server that requires authorization and calls its tool; the
// settings that make the bridge authorize belong in setup.
func authorized(ctx context.Context, c *client) error {
	return dialCall(ctx, c, "test-tool", `{}`)
}

func sseRetry(ctx context.Context, c *client) error {
	return dialCall(ctx, c, "test_reconnection", `{}`)
}

// elicitationDefaults accepts with no content: the server checks that the schema's
// defaults were filled in (SEP-1034).
func elicitationDefaults(ctx context.Context, c *client) error {
	c.opts.OnElicitation = func(context.Context, *bridge.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
	}
	return dialCall(ctx, c, "test_client_elicitation_defaults", `{}`)
}

// schemaPreservation echoes the focal tool's Parameters back to the server, which checks
// that no JSON Schema 2020-12 keyword was lost.
func schemaPreservation(ctx context.Context, c *client) error {
	s, err := c.dial(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	focal, err := tool(s, "json_schema_2020_12_tool")
	if err != nil {
		return err
	}
	args, err := json.Marshal(map[string]json.RawMessage{"schema": focal.Parameters})
	if err != nil {
		return err
	}
	_, err = call(ctx, s, "json_schema_echo", string(args))
	return err
}

// requestState calls the multi-round-trip tools; each must complete (the server judges the
// requestState and inputResponses it received).
func requestState(ctx context.Context, c *client) error {
	c.opts.OnElicitation = func(context.Context, *bridge.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirmed": true}}, nil
	}
	s, err := c.dial(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	var errs []error
	for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"} {
		errs = append(errs, c.callLogged(ctx, s, name, `{}`))
	}
	return errors.Join(errs...)
}

// standardHeaders calls the first tool, which must work; the server checks the Mcp-Method
// and Mcp-Name headers of every request.
func standardHeaders(ctx context.Context, c *client) error {
	s, err := c.dial(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	tools := s.Tools()
	if len(tools) == 0 {
		return errors.New("the server offers no tool")
	}
	return c.callLogged(ctx, s, tools[0].RemoteName, `{}`)
}

// customHeaders makes the calls the suite asks for, each of which must work; the server
// checks the Mcp-Param-* headers mirrored from x-mcp-header arguments.
func customHeaders(ctx context.Context, c *client) error {
	s, err := c.dial(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	if len(c.context.ToolCalls) == 0 {
		return errors.New("MCP_CONFORMANCE_CONTEXT has no toolCalls")
	}
	var errs []error
	for _, tc := range c.context.ToolCalls {
		args := tc.Arguments
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		errs = append(errs, c.callLogged(ctx, s, tc.Name, string(args)))
	}
	return errors.Join(errs...)
}

// invalidToolHeaders calls every tool the bridge offers, each of which must work; tools
// with invalid x-mcp-header markers must not be among them (the server checks which were
// called).
func invalidToolHeaders(ctx context.Context, c *client) error {
	s, err := c.dial(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	for _, p := range s.Status().Problems {
		c.logf("problem: %s: %s", p.Tool, strings.TrimSpace(p.Problem))
	}
	tools := s.Tools()
	if len(tools) == 0 {
		return errors.New("the server offers no valid tool")
	}
	var errs []error
	for _, t := range tools {
		errs = append(errs, c.callLogged(ctx, s, t.RemoteName, `{"region":"us-west1"}`))
	}
	return errors.Join(errs...)
}

// callLogged calls a tool as call does, logs the outcome and returns the error, naming the
// tool.
func (c *client) callLogged(ctx context.Context, s *bridge.Server, remote, args string) error {
	out, err := call(ctx, s, remote, args)
	c.logf("%s: %q, %v", remote, out, err)
	if err != nil {
		return fmt.Errorf("%s: %w", remote, err)
	}
	return nil
}
