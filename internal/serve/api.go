package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/redact"
	"github.com/ttalk/mcpbridge/results"
)

// maxBody bounds a request body of the page's API (the proxy has its own, equal bound).
const maxBody = apps.MaxRequestBytes

// pageInfo is GET /api/servers: everything the page lists.
type pageInfo struct {
	Version string       `json:"version"`
	Sandbox string       `json:"sandbox"` // URL of the sandbox proxy page
	Servers []serverInfo `json:"servers"`
}

type serverInfo struct {
	ID              string               `json:"id"`
	Status          string               `json:"status"` // "ok" or "failed"
	Transport       string               `json:"transport,omitempty"`
	Hash            string               `json:"hash,omitempty"`
	HashShared      bool                 `json:"hashShared,omitempty"` // another server has the same hash: the App proxy must name this one by ID
	ServerName      string               `json:"serverName,omitempty"`
	ServerVersion   string               `json:"serverVersion,omitempty"`
	ProtocolVersion string               `json:"protocolVersion,omitempty"`
	Timings         []timing             `json:"timings,omitempty"`
	Renamed         []bridge.Rename      `json:"renamed,omitempty"`
	Problems        []bridge.ToolProblem `json:"problems,omitempty"`
	Error           *failure             `json:"error,omitempty"`
	Stderr          string               `json:"stderr,omitempty"`
	// Instructions are the server's own (untrusted) instructions; the page shows them as text.
	Instructions       string     `json:"instructions,omitempty"`
	InstructionsTokens int        `json:"instructionsTokens,omitempty"`
	Tokens             int        `json:"tokens,omitempty"` // the model-visible tool definitions
	Tools              []toolInfo `json:"tools"`
	// Skills are the server's skills as listed (bridge.Options.Skills): metadata only, the
	// server's (untrusted) words shown as text.
	Skills []skillInfo `json:"skills,omitempty"`
}

// skillInfo is one skill of a server: its name, description, files (paths inside the
// skill, with their sizes) and what its index line costs.
type skillInfo struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	URI         string     `json:"uri"`
	Dynamic     bool       `json:"dynamic,omitempty"`
	Files       []fileInfo `json:"files,omitempty"`
	IndexTokens int        `json:"indexTokens,omitempty"`
}

type fileInfo struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

type timing struct {
	Phase string `json:"phase"`
	Ms    int64  `json:"ms"`
}

type failure struct {
	Phase   string `json:"phase"`
	Message string `json:"message"`
}

type toolInfo struct {
	Name         string          `json:"name"`       // model-visible name ("" for app-only tools)
	RemoteName   string          `json:"remoteName"` // the server's name
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"` // as the model reads it
	Parameters   json.RawMessage `json:"parameters,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  any             `json:"annotations,omitempty"`
	UIResource   string          `json:"uiResource,omitempty"`
	AppOnly      bool            `json:"appOnly,omitempty"` // hidden from the model by _meta.ui.visibility
	Tokens       int             `json:"tokens,omitempty"`  // what the definition costs the model
}

func (h *Host) handleServers(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, h.pageInfo())
}

func (h *Host) pageInfo() pageInfo {
	set := h.opts.Set
	byID := map[string]serverInfo{}
	hashes := map[string]int{}
	var order []string
	for _, s := range set.Servers() {
		si := describe(s, h.opts.Tokens)
		byID[si.ID] = si
		order = append(order, si.ID)
		if si.Hash != "" {
			hashes[si.Hash]++
		}
	}
	for _, f := range set.Failed() {
		if _, ok := byID[f.Server]; ok {
			continue
		}
		byID[f.Server] = serverInfo{
			ID:     f.Server,
			Status: "failed",
			Error:  &failure{Phase: string(f.Phase), Message: f.Error()},
			Stderr: tailLines(f.Stderr, 20),
			Tools:  []toolInfo{},
		}
		order = append(order, f.Server)
	}
	// Config order first, then whatever the options did not name.
	ids := make([]string, 0, len(byID))
	for _, id := range h.opts.Order {
		if _, ok := byID[id]; ok && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	for _, id := range order {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	info := pageInfo{Version: h.opts.Version, Sandbox: h.sandbox + "/sandbox", Servers: make([]serverInfo, 0, len(ids))}
	for _, id := range ids {
		si := byID[id]
		si.HashShared = si.Hash != "" && hashes[si.Hash] > 1
		info.Servers = append(info.Servers, si)
	}
	return info
}

func describe(s *bridge.Server, tc TokenCounter) serverInfo {
	st := s.Status()
	si := serverInfo{
		ID:              s.ID(),
		Status:          "ok",
		Transport:       st.Transport,
		Hash:            s.Hash(),
		ServerName:      st.ServerName,
		ServerVersion:   st.ServerVersion,
		ProtocolVersion: st.ProtocolVersion,
		Renamed:         st.Renamed,
		Problems:        st.Problems,
		Instructions:    st.Instructions,
		Tools:           []toolInfo{},
	}
	if tc != nil && st.Instructions != "" {
		si.InstructionsTokens = tc.Count(st.Instructions)
	}
	for _, sk := range s.Skills().Skills() {
		info := skillInfo{Name: sk.Name, Description: sk.Description, URI: sk.URI, Dynamic: sk.Dynamic}
		for _, f := range sk.Files {
			info.Files = append(info.Files, fileInfo{Path: strings.TrimPrefix(f.URI, sk.Dir()), Size: f.Size})
		}
		if tc != nil {
			info.IndexTokens = tc.Count("- " + sk.Name + ": " + sk.Description + "\n")
		}
		si.Skills = append(si.Skills, info)
	}
	if st.Err != nil {
		si.Status = "failed"
		si.Error = &failure{Phase: string(st.Err.Phase), Message: st.Err.Error()}
		si.Stderr = tailLines(st.Err.Stderr, 20)
	}
	for _, t := range st.Timings {
		si.Timings = append(si.Timings, timing{Phase: string(t.Phase), Ms: t.Duration.Milliseconds()})
	}
	for _, t := range s.Tools() {
		ti := toolInfo{
			Name:         t.Name,
			RemoteName:   t.RemoteName,
			Title:        t.Title,
			Description:  t.Description,
			Parameters:   t.Parameters,
			OutputSchema: t.OutputSchema,
			UIResource:   t.UIResource,
		}
		if t.Annotations != nil {
			ti.Annotations = t.Annotations
		}
		if tc != nil {
			ti.Tokens = tc.Tool(t)
			si.Tokens += ti.Tokens
		}
		si.Tools = append(si.Tools, ti)
	}
	for _, name := range st.AppOnly {
		si.Tools = append(si.Tools, toolInfo{RemoteName: name, AppOnly: true})
	}
	return si
}

// Bounds of GET /api/search.
const (
	maxQueryBytes = 1000
	maxHits       = 50
)

// searchHit is one tool of GET /api/search?q=...&k=..., best first.
type searchHit struct {
	Server     string  `json:"server"`
	Name       string  `json:"name"`
	RemoteName string  `json:"remoteName"`
	Score      float64 `json:"score"`
}

// handleSearch ranks the model-visible tools for q with the Set's index (Set.Search): the
// search a model gets with deferred loading.
func (h *Host) handleSearch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	if len(q) > maxQueryBytes {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("query over %d bytes", maxQueryBytes)})
		return
	}
	k := 10
	if v := r.URL.Query().Get("k"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "k must be a positive number"})
			return
		}
		k = min(n, maxHits)
	}
	hits := []searchHit{}
	for _, res := range h.opts.Set.Search(q, k) {
		hit := searchHit{Name: res.Tool.Name, RemoteName: res.Tool.RemoteName, Score: res.Score}
		if res.Tool.Server != nil {
			hit.Server = res.Tool.Server.ID()
		}
		hits = append(hits, hit)
	}
	writeJSON(w, http.StatusOK, map[string]any{"query": q, "results": hits})
}

// callRequest is POST /api/call.
type callRequest struct {
	Server    string          `json:"server"` // server ID
	Tool      string          `json:"tool"`   // the server's name for the tool (RemoteName)
	Arguments json.RawMessage `json:"arguments"`
	// CallID, when set, names the call for GET /api/calls/{id} while it runs (calls.go).
	CallID string `json:"callId,omitempty"`
}

// callResponse is what the page shows for one call.
type callResponse struct {
	// ModelText is what the model reads: the Handler's text (for a tool error, its text).
	ModelText string `json:"modelText"`
	// ToolError: the server answered isError (the model still reads ModelText).
	ToolError bool `json:"toolError,omitempty"`
	// Error is a failure before or in transport (validation, timeout, server gone): the
	// model reads this error's text instead.
	Error string `json:"error,omitempty"`
	// Result is the server's raw CallToolResult, when there was one.
	Result     any   `json:"result,omitempty"`
	DurationMs int64 `json:"durationMs"`
	// App is set for MCP App tools with a result: what a renderer needs to show the View.
	App *apps.Activity `json:"app,omitempty"`
	// AppOnly says the tool is hidden from the model; ModelText is then what the model
	// would read if it could call it.
	AppOnly bool `json:"appOnly,omitempty"`
}

func (h *Host) handleCall(w http.ResponseWriter, r *http.Request) {
	body, status, msg := readJSONBody(w, r)
	if status != 0 {
		writeJSON(w, status, map[string]string{"error": msg})
		return
	}
	var req callRequest
	if err := json.Unmarshal(body, &req); err != nil || req.Server == "" || req.Tool == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "want a JSON object with server, tool and arguments"})
		return
	}
	s, ok := h.opts.Set.Lookup(req.Server)
	if !ok || s.ID() != req.Server {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("no server %s", redact.Quote(req.Server, 80))})
		return
	}
	start := time.Now()
	ctx, stop, _ := h.opts.Calls.start(r.Context(), req.CallID, s.ID())
	defer stop()
	resp, ok := h.call(ctx, s, req)
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("server %s has no tool %s", redact.Quote(req.Server, 80), redact.Quote(req.Tool, 80))})
		return
	}
	resp.DurationMs = time.Since(start).Milliseconds()
	writeJSON(w, http.StatusOK, resp)
}

// call runs one tool the way the model would (validation, timeouts, flattening) and keeps
// the raw result. App-only tools, which the model never sees, are called raw and flattened
// as the model would read them. ok is false when the server has no such tool.
func (h *Host) call(ctx context.Context, s *bridge.Server, req callRequest) (callResponse, bool) {
	var resp callResponse
	for _, t := range s.Tools() {
		if t.RemoteName != req.Tool {
			continue
		}
		inv, err := t.Invoke(ctx, req.Arguments)
		resp.ModelText = inv.Text
		if inv.Result != nil {
			resp.Result = inv.Result
			if t.UIResource != "" {
				resp.App = &apps.Activity{Result: inv.Result, ResourceURI: t.UIResource, ServerHash: s.Hash(), ServerID: s.ID(), ToolInput: inv.Args}
			}
		}
		h.setError(&resp, err)
		return resp, true
	}
	if !slices.Contains(s.Status().AppOnly, req.Tool) {
		return resp, false
	}
	resp.AppOnly = true
	args := req.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	res, err := s.CallTool(ctx, req.Tool, args)
	if err != nil {
		h.setError(&resp, err)
		return resp, true
	}
	resp.Result = res
	text, ferr := results.Flatten(res, &results.Options{MaxBytes: h.opts.MaxResultBytes})
	resp.ModelText = text
	h.setError(&resp, ferr)
	return resp, true
}

func (h *Host) setError(resp *callResponse, err error) {
	if err == nil {
		return
	}
	var te *results.ToolError
	if errors.As(err, &te) {
		resp.ToolError = true
		if resp.ModelText == "" {
			resp.ModelText = te.Text
		}
		return
	}
	resp.Error = err.Error()
	if resp.ModelText == "" {
		resp.ModelText = err.Error() // what an agent loop typically hands the model
	}
}

// proxyHandler is the Set's App proxy behind the guard, with one log line per request
// (method, tool or resource, status), so the terminal shows what Apps do.
func (h *Host) proxyHandler() http.Handler {
	next := h.opts.Set.ProxyHandler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "reading request body failed"})
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var req struct {
			apps.ProxyRequest
			Params struct {
				Name string `json:"name"`
				URI  string `json:"uri"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &req) // for the log line only; the proxy judges the request
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		h.log.Info("MCP App request", "server", req.ServerID+req.ServerHash, "method", req.Method,
			"target", redact.Quote(req.Params.Name+req.Params.URI, 80), "status", rec.status)
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// readJSONBody reads a bounded application/json body; status is 0 on success.
func readJSONBody(w http.ResponseWriter, r *http.Request) ([]byte, int, string) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return nil, http.StatusUnsupportedMediaType, "content type must be application/json"
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body larger than %d bytes", maxBody)
		}
		return nil, http.StatusBadRequest, "reading request body failed"
	}
	return body, 0, ""
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"response could not be encoded"}`)
	}
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b) // the client has gone if this fails
}

// tailLines keeps the last n lines of s.
func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
