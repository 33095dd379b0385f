// Command replica is one replica of a multi-user web host, for integration's replica tests
// (replicas_test.go builds it with `go build`; the integration package has no TestMain to
// re-exec into). It connects one OAuth server (-url) with per-user grants kept in Redis
// (-redis, bridge/redisstore; the AES key is MCPBRIDGE_REPLICA_KEY, 64 hex digits) and
// then answers commands, one JSON object per line on stdin, with one JSON object per line
// on stdout:
//
//	{"op":"calls","users":[hex...],"each":K}  K concurrent calls of whoami per user → {"ok":n,"errors":[...]}
//	{"op":"login","user":hex}                  Set.StartLogin → {"url":...}
//	{"op":"complete","user":hex,"query":q}     Set.CompleteLogin → {} or {"errors":[...]}
//
// User IDs travel as hex since they may hold any bytes. It prints {"ready":true} once
// connected, logs to stderr (warnings and up) and exits when stdin closes.
package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/redisstore"
)

type command struct {
	Op    string   `json:"op"`
	Users []string `json:"users,omitempty"`
	User  string   `json:"user,omitempty"`
	Each  int      `json:"each,omitempty"`
	Query string   `json:"query,omitempty"`
}

type reply struct {
	Ready  bool     `json:"ready,omitempty"`
	OK     int      `json:"ok,omitempty"`
	URL    string   `json:"url,omitempty"`
	Errors []string `json:"errors,omitempty"`
}

func main() {
	addr := flag.String("redis", "", "Redis address")
	mcpURL := flag.String("url", "", "the MCP server's endpoint")
	redirect := flag.String("redirect", "http://127.0.0.1:1/callback", "UserOptions.RedirectURL")
	jitter := flag.Duration("jitter", -1, "UserOptions.RefreshJitter")
	flag.Parse()
	if err := run(*addr, *mcpURL, *redirect, *jitter); err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		os.Exit(1)
	}
}

func run(addr, mcpURL, redirect string, jitter time.Duration) error {
	key, err := hex.DecodeString(os.Getenv("MCPBRIDGE_REPLICA_KEY"))
	if err != nil {
		return errors.New("MCPBRIDGE_REPLICA_KEY is not hex")
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	store, err := redisstore.New(redisstore.Options{Client: rdb, Keys: map[string][]byte{"k1": key}, Current: "k1"})
	if err != nil {
		return err
	}
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	set, err := bridge.Connect(ctx, []bridge.ServerConfig{{ID: "svc", URL: mcpURL, Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}}},
		&bridge.Options{TokenStore: store, Logger: log, Users: &bridge.UserOptions{RedirectURL: redirect, RefreshJitter: jitter}})
	if err != nil {
		return err
	}
	defer set.Close()
	if len(set.Failed()) > 0 || len(set.Tools()) != 1 {
		return fmt.Errorf("connect: %v", set.Failed())
	}
	whoami := set.Tools()[0]
	out := json.NewEncoder(os.Stdout)
	if err := out.Encode(reply{Ready: true}); err != nil {
		return err
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		var c command
		if err := json.Unmarshal(in.Bytes(), &c); err != nil {
			return fmt.Errorf("command: %w", err)
		}
		var r reply
		cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		switch c.Op {
		case "calls":
			r = calls(cctx, whoami, c.Users, c.Each)
		case "login":
			u, err := user(c.User)
			if err == nil {
				r.URL, err = set.StartLogin(cctx, u, "svc")
			}
			r.Errors = errs(err)
		case "complete":
			u, err := user(c.User)
			var q url.Values
			if err == nil {
				q, err = url.ParseQuery(c.Query)
			}
			if err == nil {
				err = set.CompleteLogin(cctx, u, q)
			}
			r.Errors = errs(err)
		default:
			r.Errors = []string{"unknown op " + c.Op}
		}
		cancel()
		if err := out.Encode(r); err != nil {
			return err
		}
	}
	return in.Err()
}

func user(h string) (string, error) {
	b, err := hex.DecodeString(h)
	return string(b), err
}

func errs(err error) []string {
	if err == nil {
		return nil
	}
	return []string{err.Error()}
}

// calls makes each calls of whoami for every user at once; an answer must name the caller.
func calls(ctx context.Context, whoami bridge.Tool, users []string, each int) reply {
	var (
		mu sync.Mutex
		r  reply
		wg sync.WaitGroup
	)
	for _, h := range users {
		u, err := user(h)
		if err != nil {
			return reply{Errors: errs(err)}
		}
		args, _ := json.Marshal(map[string]string{"user": h})
		for range each {
			wg.Go(func() {
				out, err := whoami.Handler(bridge.WithUser(ctx, u), args)
				if err == nil && out != h {
					err = fmt.Errorf("user %q: answered %q", u, out)
				}
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					if len(r.Errors) < 5 {
						r.Errors = append(r.Errors, err.Error())
					}
					return
				}
				r.OK++
			})
		}
	}
	wg.Wait()
	return r
}
