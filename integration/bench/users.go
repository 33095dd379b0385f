package main

// The many-users section (issue 27): its steps and its rendering.

// usersSteps runs BenchmarkUsers, BenchmarkUsersExpiry and BenchmarkReplicas (about 40 s;
// the last two make one measurement whatever the bench time, and BenchmarkReplicas needs
// redis-server, which the run's CI=true makes it require).
func usersSteps(bt func(full, short string) string) []step {
	return []step{
		{"integration", []string{"-test.run", "^$", "-test.bench", "^BenchmarkUsers$", "-test.benchtime", bt("5000x", "200x")}},
		{"integration", []string{"-test.run", "^$", "-test.bench", "^BenchmarkUsersExpiry$", "-test.benchtime", "1x"}},
		{"integration", []string{"-test.run", "^$", "-test.bench", "^BenchmarkReplicas$", "-test.benchtime", "1x"}},
	}
}

// renderUsers writes the section on many users and replicas.
func renderUsers(w func(string, ...any), val func(name, unit string) float64) {
	const u, e, r = "BenchmarkUsers", "BenchmarkUsersExpiry", "BenchmarkReplicas"
	w("\n## Many users and replicas\n\n")
	w("`BenchmarkUsers` (`integration/users_bench_test.go`): %s users, each logged in through the web\n", thousands(val(u+"/stateful", "users")))
	w("login (`StartLogin`, the authorization server's consent, `CompleteLogin`) and calling once, on a\n")
	w("local OAuth-protected Streamable HTTP server (`internal/oauthtest`, in this process) which checks\n")
	w("every request's token against the user the call is for; then calls of its tool from\n")
	w("`b.RunParallel`, round robin over the users. Stateful: a server that keeps sessions (2025-11-25),\n")
	w("each user with a session of their own; stateless: 2026-07-28, each user's calls on the shared\n")
	w("connection with the user's token (the bridge keeps the user's OAuth handler only); stateless-grant:\n")
	w("the same where the server answers nothing without a user's grant, not even `server/discover` (one\n")
	w("connection for the users, opened with the first one's grant). The token store\n")
	w("is an in-memory `TokenLocker` (the benchmark measures the bridge, not a database). Memory is the\n")
	w("heap after GC per logged-in, idle user, client and server side together.\n\n")
	w("| server | heap per idle user (client and server) | call latency p50 / p99 | requests carrying another user's token |\n|---|---|---|---|\n")
	for _, c := range []string{"stateful", "stateless", "stateless-grant"} {
		n := u + "/" + c
		w("| %s | %s | %s / %s | %.0f |\n", c, bytesize(val(n, "heap-B/idle-user")), dur(1e3*val(n, "p50-µs")), dur(1e3*val(n, "p99-µs")), val(n, "cross-user"))
	}
	w("\n")

	w("`BenchmarkUsersExpiry`: the same %s users' grants all expire at one instant, in the store a new\n", thousands(val(e+"/jitter=none", "users")))
	w("replica loads them from, while every user keeps calling (16 at a time). With a `TokenLocker` store\n")
	w("the bridge refreshes an access token before it expires, earlier by a random part of\n")
	w("`UserOptions.RefreshJitter` (default 1 minute; below zero: none). The window opens when the first\n")
	w("grant may be refreshed; the peak rate is the busiest second of it, per minute.\n\n")
	w("| RefreshJitter | refreshes in the window | window | mean rate | peak rate | cross-user |\n|---|---|---|---|---|---|\n")
	for _, c := range []struct{ name, label string }{{"jitter=none", "none (-1)"}, {"jitter=default", "default (0: 1 min)"}} {
		n := e + "/" + c.name
		w("| %s | %s | %.0f s | %s/min | %s/min | %.0f |\n", c.label, thousands(val(n, "refreshes")), val(n, "window-s"),
			thousands(val(n, "refreshes/min")), thousands(val(n, "peak-refreshes/min")), val(n, "cross-user"))
	}
	w("\n`BenchmarkReplicas` (`integration/replicas_test.go`): two replica processes\n")
	w("(`integration/testdata/replica`) share their users' grants in a real `redis-server` through\n")
	w("`bridge/redisstore`; the server's refresh tokens rotate, and it counts every refresh token presented\n")
	w("again after it was spent. %.0f users' grants expire together, then every user calls through both\n", val(r, "users"))
	w("replicas at once, %.0f times over (each after the server refused every access token).\n\n", val(r, "expiries"))
	w("| calls | failed | refreshes | refresh tokens spent twice | cross-user |\n|---|---|---|---|---|\n")
	w("| %s | %.0f | %s | %.0f | %.0f |\n", thousands(val(r, "calls")), val(r, "failed"), thousands(val(r, "refreshes")),
		val(r, "double-spent"), val(r, "cross-user"))
}
