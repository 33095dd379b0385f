package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
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

// buildReplica builds testdata/replica into a temp dir.
func buildReplica(t testing.TB) string {
	t.Helper()
	return goBuild(t, "replica")
}

// replica is a running testdata/replica process.
type replica struct {
	name    string
	cmd     *exec.Cmd
	in      io.WriteCloser
	replies chan replicaReply
	stderr  *syncBuffer
}

type replicaReply struct {
	Ready  bool     `json:"ready"`
	OK     int      `json:"ok"`
	URL    string   `json:"url"`
	Errors []string `json:"errors"`
}

// replicaKey is the AES key the test and its replicas share.
var replicaKey = bytes.Repeat([]byte{7}, 32)

// startReplica starts a replica of the web host; it is killed when the test ends.
func startReplica(t testing.TB, bin, name, redisAddr, mcpURL string, extra ...string) *replica {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-redis", redisAddr, "-url", mcpURL}, extra...)...)
	cmd.Env = append(os.Environ(), "MCPBRIDGE_REPLICA_KEY="+hex.EncodeToString(replicaKey))
	r := &replica{name: name, cmd: cmd, replies: make(chan replicaReply, 1), stderr: &syncBuffer{}}
	cmd.Stderr = r.stderr
	var err error
	if r.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = r.in.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	go func() {
		defer close(r.replies)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var rep replicaReply
			if err := json.Unmarshal(sc.Bytes(), &rep); err != nil {
				rep.Errors = []string{fmt.Sprintf("not a reply: %q", sc.Text())}
			}
			r.replies <- rep
		}
	}()
	if rep := r.await(t, 60*time.Second); !rep.Ready {
		t.Fatalf("%s did not start: %v\n%s", name, rep.Errors, r.stderr.String())
	}
	return r
}

// send writes a command; await reads the next reply.
func (r *replica) send(t testing.TB, cmd map[string]any) {
	t.Helper()
	b, _ := json.Marshal(cmd)
	if _, err := r.in.Write(append(b, '\n')); err != nil {
		t.Fatalf("%s: %v\n%s", r.name, err, r.stderr.String())
	}
}

func (r *replica) await(t testing.TB, within time.Duration) replicaReply {
	t.Helper()
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case rep, ok := <-r.replies:
		if !ok {
			t.Fatalf("%s exited:\n%s", r.name, r.stderr.String())
		}
		return rep
	case <-timer.C:
		t.Fatalf("%s: no reply within %s:\n%s", r.name, within, r.stderr.String())
	}
	return replicaReply{}
}

// replicaFixture is a Redis server, an OAuth-protected Streamable HTTP server whose
// refresh tokens rotate (oauthtest: it counts refresh tokens spent twice and, with
// UserTool, requests carrying another user's token) and the test's own view of the store.
type replicaFixture struct {
	redis string
	as    *oauthtest.Server
	wrong *atomic.Int64
	store *redisstore.Store
	rdb   *redis.Client
	bin   string
}

func newReplicaFixture(t testing.TB) *replicaFixture {
	t.Helper()
	f := &replicaFixture{redis: redistest.Start(t), wrong: &atomic.Int64{}}
	f.bin = buildReplica(t)
	srv := mcp.NewServer(&mcp.Implementation{Name: "users", Version: "1"}, nil)
	oauthtest.UserTool(srv, f.wrong)
	f.as = oauthtest.New(srv)
	t.Cleanup(f.as.Close)
	f.as.AllowAnonymous("initialize", "notifications/initialized", "tools/list", "server/discover")
	f.rdb = redis.NewClient(&redis.Options{Addr: f.redis})
	t.Cleanup(func() { _ = f.rdb.Close() })
	var err error
	f.store, err = redisstore.New(redisstore.Options{Client: f.rdb, Keys: map[string][]byte{"k1": replicaKey}, Current: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// expireTogether rewrites every grant in the store to expire at the same instant, at,
// and makes the server refuse every access token it issued.
func (f *replicaFixture) expireTogether(t testing.TB, at time.Time) int {
	t.Helper()
	ctx := context.Background()
	keys, err := f.rdb.Keys(ctx, "mcpbridge:t:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		k = strings.TrimPrefix(k, "mcpbridge:t:")
		g, err := f.store.LoadToken(ctx, k)
		if err != nil || g == nil || g.Token == nil {
			t.Fatalf("grant %s: %+v, %v", k, g, err)
		}
		g.Token.Expiry = at
		if err := f.store.SaveToken(ctx, k, g); err != nil {
			t.Fatal(err)
		}
	}
	f.as.ExpireAll()
	return len(keys)
}

// noTokens fails if any token, refresh token or code the server issued is in text.
func (f *replicaFixture) noTokens(t testing.TB, what, text string) {
	t.Helper()
	for _, tok := range f.as.Issued() {
		if strings.Contains(text, tok) {
			t.Errorf("%s holds an issued token or code", what)
			return
		}
	}
}

func replicaUsers(n int) []string {
	users := make([]string, n)
	for i := range users {
		users[i] = fmt.Sprintf("user-%02d", i)
	}
	users[n-1] = "odd \x00\xff\"bytes/é" // any bytes are a valid user ID
	return users
}

// replicaStats is what one run of replicaRounds saw.
type replicaStats struct {
	calls, failed      int      // calls made through the replicas, and how many failed
	errors             []string // the first failures
	doubleSpent, wrong int      // refresh tokens spent twice; requests with another user's token
	refreshes          int      // refresh token grants the server answered
}

// replicaRounds: n users log in (through a replica of this process that then goes away),
// their grants are seeded to expire at the same instant, and two replica processes sharing
// the store start; then, for rounds rounds, every user makes each calls through both
// replicas at once, each round after the server refused every access token (as a
// synchronized expiry does).
func replicaRounds(tb testing.TB, n, each, rounds int) replicaStats {
	f := newReplicaFixture(tb)
	users := replicaUsers(n)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	login, err := bridge.Connect(ctx, []bridge.ServerConfig{{ID: "svc", URL: f.as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}}},
		&bridge.Options{TokenStore: f.store, Logger: slog.New(slog.DiscardHandler), Users: &bridge.UserOptions{RedirectURL: "http://127.0.0.1:1/callback"}})
	if err != nil || len(login.Failed()) > 0 {
		tb.Fatalf("connect: %v %v", err, login.Failed())
	}
	for _, u := range users {
		url, err := login.StartLogin(ctx, u, "svc")
		if err != nil {
			tb.Fatal(err)
		}
		q, err := oauthtest.Consent(ctx, url, u)
		if err != nil {
			tb.Fatal(err)
		}
		if err := login.CompleteLogin(ctx, u, q); err != nil {
			tb.Fatal(err)
		}
	}
	if err := login.Close(); err != nil {
		tb.Fatal(err)
	}
	if got := f.expireTogether(tb, time.Now().Add(-time.Second)); got != n {
		tb.Fatalf("%d grants stored for %d users", got, n)
	}
	before := f.as.Count("refresh_token")

	a := startReplica(tb, f.bin, "replica A", f.redis, f.as.URL())
	b := startReplica(tb, f.bin, "replica B", f.redis, f.as.URL())
	hexUsers := make([]string, n)
	for i, u := range users {
		hexUsers[i] = oauthtest.UserArg(u)
	}
	var st replicaStats
	for round := range rounds {
		if round > 0 {
			f.as.ExpireAll()
		}
		for _, r := range []*replica{a, b} {
			r.send(tb, map[string]any{"op": "calls", "users": hexUsers, "each": each})
		}
		for _, r := range []*replica{a, b} {
			rep := r.await(tb, 90*time.Second)
			st.calls += n * each
			st.failed += n*each - rep.OK
			for _, e := range rep.Errors {
				st.errors = append(st.errors, fmt.Sprintf("round %d, %s: %s", round, r.name, e))
			}
		}
	}
	st.doubleSpent, st.wrong = f.as.DoubleSpent(), int(f.wrong.Load())
	st.refreshes = f.as.Count("refresh_token") - before
	for _, r := range []*replica{a, b} {
		f.noTokens(tb, r.name+"'s log", r.stderr.String())
	}
	return st
}

// TestReplicasNeverDoubleSpend: two replica processes of a web host share their users'
// grants through Redis (bridge/redisstore); the grants expire together and every user
// calls through both at once (replicaRounds). Every call succeeds, no rotating refresh
// token is spent twice, no request carries another user's token, and each expiry costs
// exactly one refresh per user.
func TestReplicasNeverDoubleSpend(t *testing.T) {
	const n, each, rounds = 12, 3, 3
	st := replicaRounds(t, n, each, rounds)
	if st.failed > 0 {
		t.Errorf("%d of %d calls failed: %q", st.failed, st.calls, st.errors)
	}
	if st.doubleSpent != 0 {
		t.Errorf("%d refresh tokens were spent twice", st.doubleSpent)
	}
	if st.wrong != 0 {
		t.Errorf("%d requests carried another user's token (or none)", st.wrong)
	}
	if st.refreshes != rounds*n {
		t.Errorf("%d refreshes for %d users over %d synchronized expiries, want one per user and expiry", st.refreshes, n, rounds)
	}
}

// BenchmarkReplicas: replicaRounds with 100 users, 5 calls each per replica and round, 3
// rounds (one measurement, whatever b.N). Reported: calls, failed calls, refresh tokens
// spent twice and cross-user token uses (all three must be 0), refreshes.
func BenchmarkReplicas(b *testing.B) {
	const n, each, rounds = 100, 5, 3
	st := replicaRounds(b, n, each, rounds)
	b.ReportMetric(float64(n), "users")
	b.ReportMetric(float64(st.calls), "calls")
	b.ReportMetric(float64(st.failed), "failed")
	b.ReportMetric(float64(st.doubleSpent), "double-spent")
	b.ReportMetric(float64(st.wrong), "cross-user")
	b.ReportMetric(float64(st.refreshes), "refreshes")
	b.ReportMetric(float64(rounds), "expiries")
	if st.failed > 0 || st.doubleSpent > 0 || st.wrong > 0 {
		b.Fatalf("%d failed calls (%q), %d refresh tokens spent twice, %d cross-user requests", st.failed, st.errors, st.doubleSpent, st.wrong)
	}
}

// TestReplicasLoginAnywhere: a user's login starts on one replica process and the web
// app's callback lands on the other (the login relay of bridge/redisstore); the user's
// next calls work on both.
func TestReplicasLoginAnywhere(t *testing.T) {
	f := newReplicaFixture(t)
	a := startReplica(t, f.bin, "replica A", f.redis, f.as.URL())
	b := startReplica(t, f.bin, "replica B", f.redis, f.as.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	users := replicaUsers(4)
	hexUsers := make([]string, len(users))
	for i, u := range users {
		hexUsers[i] = oauthtest.UserArg(u)
		starts, ends := a, b
		if i%2 == 1 {
			starts, ends = b, a
		}
		starts.send(t, map[string]any{"op": "login", "user": hexUsers[i]})
		rep := starts.await(t, 60*time.Second)
		if rep.URL == "" {
			t.Fatalf("login of %q on %s: %q", u, starts.name, rep.Errors)
		}
		q, err := oauthtest.Consent(ctx, rep.URL, u)
		if err != nil {
			t.Fatal(err)
		}
		ends.send(t, map[string]any{"op": "complete", "user": hexUsers[i], "query": q.Encode()})
		if rep := ends.await(t, 60*time.Second); len(rep.Errors) > 0 {
			t.Fatalf("callback of %q's login on %s: %q", u, ends.name, rep.Errors)
		}
	}
	// A replica killed while a login waits on it leaves its record behind: the callback on
	// another replica finds no one listening and says so at once.
	c := startReplica(t, f.bin, "replica C", f.redis, f.as.URL())
	c.send(t, map[string]any{"op": "login", "user": hexUsers[0]})
	rep := c.await(t, 60*time.Second)
	if rep.URL == "" {
		t.Fatalf("login on %s: %q", c.name, rep.Errors)
	}
	q, err := oauthtest.Consent(ctx, rep.URL, users[0])
	if err != nil {
		t.Fatal(err)
	}
	_ = c.cmd.Process.Kill()
	_ = c.cmd.Wait()
	t0 := time.Now()
	b.send(t, map[string]any{"op": "complete", "user": hexUsers[0], "query": q.Encode()})
	if rep := b.await(t, 60*time.Second); len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], "gone") {
		t.Errorf("callback of a killed replica's login: %q", rep.Errors)
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("the callback of a killed replica's login took %s", d)
	}

	for _, r := range []*replica{a, b} {
		r.send(t, map[string]any{"op": "calls", "users": hexUsers, "each": 2})
		if rep := r.await(t, 60*time.Second); rep.OK != 2*len(users) || len(rep.Errors) > 0 {
			t.Errorf("%s: %d of %d calls succeeded: %q", r.name, rep.OK, 2*len(users), rep.Errors)
		}
	}
	if w := f.wrong.Load(); w != 0 {
		t.Errorf("%d requests carried another user's token (or none)", w)
	}
	for _, r := range []*replica{a, b} {
		f.noTokens(t, r.name+"'s log", r.stderr.String())
	}
}
