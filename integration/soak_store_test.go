package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/redisstore"
	"github.com/ttalk/mcpbridge/internal/oauthtest"
	"github.com/ttalk/mcpbridge/internal/redistest"
)

// goRedisLog counts what go-redis logs through its process-wide logger (the dial failures
// while the soak's redis-server is down). TestMain installs it with redis.SetLogger before
// any test runs, as a host would at its start (bridge/redisstore never sets it): this test
// binary is the host, no go-redis goroutine runs yet, so setting the global races with
// nothing, and the soak reports the count instead of printing the lines.
var goRedisLog lineCount

func TestMain(m *testing.M) {
	redis.SetLogger(&goRedisLog)
	os.Exit(m.Run())
}

// lineCount is a go-redis logger that counts its lines and keeps the last.
type lineCount struct {
	mu   sync.Mutex
	n    int
	last string
}

func (l *lineCount) Printf(_ context.Context, format string, v ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	l.last = fmt.Sprintf(format, v...)
}

func (l *lineCount) count() (int, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n, l.last
}

// The soak's users: servers that need a login, whose users' grants live in
// bridge/redisstore on a real redis-server that the fault windows restart.
const (
	soakToken = 4 // OAuth-protected Streamable HTTP servers (internal/oauthtest)
	soakUsers = 8 // each logged in to every token server
	// soakTokenTTL is the access tokens' lifetime: the bridge refreshes each grant every few
	// seconds (ten seconds before its expiry, jittered), so refreshes meet the faults.
	soakTokenTTL = 20 * time.Second
	// soakRedisDown is how long a killed redis-server stays down, and a CLIENT PAUSE lasts.
	soakRedisDown = 1500 * time.Millisecond
)

// soakTokenSchema is the token servers' work tool's input: soakWorkSchema and the caller's
// user (oauthtest.UserArg), which the tool checks against the request's token.
const soakTokenSchema = `{"type":"object","properties":{"id":{"type":"string"},"ms":{"type":"integer","minimum":0,"maximum":1000},"user":{"type":"string"}},"required":["id","user"],"additionalProperties":false}`

// soakStore is the token servers, the users, their grants' store and its faults.
type soakStore struct {
	redis   *redistest.Server
	rdb     *redis.Client
	store   *redisstore.Store
	servers []*oauthtest.Server
	users   []string
	wrong   atomic.Int64 // requests carrying another user's token (or none)

	restarts, pauses, expiries atomic.Int64

	mu        sync.Mutex
	faultErrs []error // the store faults that could not be made; guarded by mu
}

// newSoakStore starts the redis-server (durable across restarts), the store and the token
// servers, whose work tool counts its runs in ran.
func newSoakStore(t *testing.T, ran *runCount) *soakStore {
	s := &soakStore{redis: redistest.StartServer(t)}
	s.rdb = redis.NewClient(&redis.Options{Addr: s.redis.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = s.rdb.Close() })
	var err error
	s.store, err = redisstore.New(redisstore.Options{Client: s.rdb, Keys: map[string][]byte{"k1": replicaKey}, Current: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range soakToken {
		name := "tok" + strconv.Itoa(i)
		srv := mcp.NewServer(&mcp.Implementation{Name: "soak-token", Version: "1"}, &mcp.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
		srv.AddTool(&mcp.Tool{Name: "work", Description: "Does a unit of work for the caller.", InputSchema: json.RawMessage(soakTokenSchema)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var in struct {
					ID   string `json:"id"`
					MS   int    `json:"ms"`
					User string `json:"user"`
				}
				if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
					return nil, err
				}
				if ti := req.Extra.TokenInfo; ti == nil || oauthtest.UserArg(ti.UserID) != in.User {
					s.wrong.Add(1)
					return nil, errors.New("this request's token is not the caller's")
				}
				ran.add(in.ID, name)
				select {
				case <-time.After(time.Duration(in.MS) * time.Millisecond):
				case <-ctx.Done():
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done " + in.ID}}}, nil
			})
		as := oauthtest.NewWith(srv, &mcp.StreamableHTTPOptions{Logger: slog.New(slog.DiscardHandler)})
		t.Cleanup(as.Close)
		as.AllowAnonymous("initialize", "notifications/initialized", "tools/list", "server/discover")
		as.SetTTL(soakTokenTTL)
		s.servers = append(s.servers, as)
	}
	for i := range soakUsers {
		s.users = append(s.users, fmt.Sprintf("soak-user-%d", i))
	}
	return s
}

// configs are the token servers' configurations: IDs tok0, tok1, ...
func (s *soakStore) configs() []bridge.ServerConfig {
	var cfgs []bridge.ServerConfig
	for i, as := range s.servers {
		cfgs = append(cfgs, bridge.ServerConfig{ID: "tok" + strconv.Itoa(i), URL: as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}})
	}
	return cfgs
}

// options puts the store and the users' settings into opts.
func (s *soakStore) options(opts *bridge.Options) {
	opts.TokenStore = s.store
	opts.Users = &bridge.UserOptions{RedirectURL: "http://127.0.0.1:1/callback"}
}

// login logs every user in to every token server (a web login each: the grants are saved
// in the store).
func (s *soakStore) login(ctx context.Context, set *bridge.Set) error {
	for _, u := range s.users {
		for i := range s.servers {
			url, err := set.StartLogin(ctx, u, "tok"+strconv.Itoa(i))
			if err != nil {
				return err
			}
			q, err := oauthtest.Consent(ctx, url, u)
			if err != nil {
				return err
			}
			if err := set.CompleteLogin(ctx, u, q); err != nil {
				return err
			}
		}
	}
	return nil
}

// call returns the context and arguments of a call to a token server's work tool for a
// user picked at random.
func (s *soakStore) call(ctx context.Context, id string, ms int) (context.Context, json.RawMessage) {
	u := s.users[rand.IntN(len(s.users))]
	args, _ := json.Marshal(map[string]any{"id": id, "ms": ms, "user": oauthtest.UserArg(u)})
	return bridge.WithUser(ctx, u), args
}

// faults runs the store's faults, one per fault window (windowAt(k) is when window k
// opens) until stop is closed: the even windows kill the redis-server and start it again
// on its address soakRedisDown later (its data kept), the odd ones pause every client for
// soakRedisDown (CLIENT PAUSE); in each, while the store is out, one token server forgets
// every access token it issued (as their expiry would), so its users' calls need their
// grants refreshed through the store that is out. (Refreshes as the tokens age, every few
// seconds per grant, meet the outages at random.)
func (s *soakStore) faults(stop <-chan struct{}, windowAt func(k int) time.Time) {
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-stop:
			return false
		case <-t.C:
			return true
		}
	}
	for k := 0; ; k++ {
		if !wait(time.Until(windowAt(k)) + rand.N(500*time.Millisecond)) {
			return
		}
		victim := s.servers[rand.IntN(len(s.servers))]
		into := rand.N(soakRedisDown / 2) // when in the outage the tokens are refused
		if k%2 == 0 {
			s.redis.Kill()
			s.restarts.Add(1)
			if wait(into) {
				victim.ExpireAll()
				s.expiries.Add(1)
				wait(soakRedisDown - into)
			}
			// Started again even when stopping: the end reads the store.
			if err := s.redis.Restart(); err != nil {
				s.failed(err)
			}
			continue
		}
		if r, err := redistest.Do(s.redis.Addr(), "CLIENT", "PAUSE", strconv.Itoa(int(soakRedisDown/time.Millisecond)), "ALL"); err != nil || r != "OK" {
			s.failed(fmt.Errorf("CLIENT PAUSE: %q %v", r, err))
			continue
		}
		s.pauses.Add(1)
		if wait(into) {
			victim.ExpireAll()
			s.expiries.Add(1)
		}
	}
}

func (s *soakStore) failed(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faultErrs = append(s.faultErrs, err)
}

// doubleSpent is how many refresh tokens the token servers saw presented again after
// they were spent; refreshes how many refresh grants they answered.
func (s *soakStore) doubleSpent() (spent, refreshes int) {
	for _, as := range s.servers {
		spent += as.DoubleSpent()
		refreshes += as.Count("refresh_token")
	}
	return spent, refreshes
}

// close stops the token servers, the redis client and the redis-server (a child process
// of the test).
func (s *soakStore) close() {
	for _, as := range s.servers {
		as.Close()
	}
	_ = s.rdb.Close()
	s.redis.Kill()
}

// tokenStats are the outcomes of the calls through token servers.
type tokenStats struct {
	calls, ok, store, login int
	server                  map[bridge.Phase]int
	loginErrs               []string // the first *NeedsLoginError texts
}

// add records one token server call's outcome (kind as soakStats.add classifies it).
func (ts *tokenStats) add(err error, ok bool) {
	ts.calls++
	var nl *bridge.NeedsLoginError
	var se *bridge.ServerError
	switch {
	case ok:
		ts.ok++
	case errors.Is(err, bridge.ErrTokenStore):
		ts.store++
	case errors.As(err, &nl):
		ts.login++
		if len(ts.loginErrs) < 5 {
			ts.loginErrs = append(ts.loginErrs, err.Error())
		}
	case errors.As(err, &se):
		if ts.server == nil {
			ts.server = map[bridge.Phase]int{}
		}
		ts.server[se.Phase]++
	}
}

// isTokenTool reports whether tool is a token server's.
func isTokenTool(tool bridge.Tool) bool {
	return tool.Server != nil && strings.HasPrefix(tool.Server.ID(), "tok")
}
