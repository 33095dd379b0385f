package redisstore

import (
	"context"
	crand "crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ttalk/mcpbridge/bridge/auth"
	"github.com/ttalk/mcpbridge/internal/redact"
)

// The login relay (auth.LoginRelay): a replica whose login waits for its callback
// records <Prefix>lf:<login ID> = its channel, for the flow's lifetime
// (UserOptions.LoginTimeout), and listens on that channel (one Redis subscription per
// Store while any login waits). The replica the callback reached takes the record (GETDEL:
// one callback per login), publishes the callback, sealed like a grant, on the channel and
// waits on a reply list <Prefix>lr:<random> (BLPOP) for the outcome, which the holder
// pushes there, sealed too, and which expires unread after a minute. The holder also keeps
// <Prefix>lh:<login ID> while it holds the login; a relayed callback whose holder let go
// without answering (the login ended just as the callback was published, which the
// subscription then never reads) is told ErrLoginUnknown within about a second of that,
// not at the end of RelayTimeout.

// DefaultRelayTimeout bounds a relayed login's wait for its outcome when
// Options.RelayTimeout is zero: the token exchange on the replica that holds the login.
const DefaultRelayTimeout = 30 * time.Second

// maxRelayed bounds a relayed callback or outcome.
const maxRelayed = 64 << 10

// relay is the Store's side of the login relay.
type relay struct {
	mu    sync.Mutex // guards the fields below
	ch    string     // this Store's channel
	ps    *redis.PubSub
	holds map[string]func(ctx context.Context, user string, query url.Values) error
}

type relayedLogin struct {
	ID    string `json:"id"`
	User  []byte `json:"user"` // any bytes: base64 in JSON
	Query string `json:"query"`
	Reply string `json:"reply"`
}

type relayOutcome struct {
	OK      bool   `json:"ok,omitempty"`
	Unknown bool   `json:"unknown,omitempty"`
	Err     string `json:"err,omitempty"`
}

// HoldLogin implements auth.LoginRelay.
func (s *Store) HoldLogin(ctx context.Context, id string, ttl time.Duration, complete func(ctx context.Context, user string, query url.Values) error) (func(), error) {
	if ttl <= 0 {
		return nil, errors.New("redis token store: login relay: the login has already expired")
	}
	r := &s.relay
	r.mu.Lock()
	if r.holds[id] != nil {
		r.mu.Unlock()
		return nil, errors.New("redis token store: login relay: this login is already held")
	}
	if r.ps == nil {
		// A channel per subscription: a callback never reaches two subscriptions.
		r.ch = s.prefix + "login:" + crand.Text()
		bctx, cancel := s.bound(ctx)
		ps := s.c.Subscribe(bctx, r.ch)
		_, err := ps.Receive(bctx) // the subscription is confirmed: no relayed callback is lost
		cancel()
		if err != nil {
			_ = ps.Close()
			r.mu.Unlock()
			return nil, fail("login relay: subscribing", err)
		}
		r.ps = ps
		go s.serveRelay(ps) // until ps is closed (the last hold's release)
	}
	if r.holds == nil {
		r.holds = map[string]func(context.Context, string, url.Values) error{}
	}
	r.holds[id] = complete
	ch := r.ch
	r.mu.Unlock()

	release := func() {
		dctx, cancel := context.WithTimeout(context.Background(), s.timeout)
		_ = s.c.Del(dctx, s.prefix+"lf:"+id, s.prefix+"lh:"+id).Err()
		cancel()
		r.mu.Lock()
		delete(r.holds, id)
		var ps *redis.PubSub
		if len(r.holds) == 0 {
			ps, r.ps = r.ps, nil
		}
		r.mu.Unlock()
		if ps != nil {
			_ = ps.Close() // ends serveRelay
		}
	}
	bctx, cancel := s.bound(ctx)
	defer cancel()
	if _, err := s.c.TxPipelined(bctx, func(p redis.Pipeliner) error {
		p.Set(bctx, s.prefix+"lf:"+id, ch, ttl)
		p.Set(bctx, s.prefix+"lh:"+id, "1", ttl)
		return nil
	}); err != nil {
		release()
		return nil, fail("login relay: announcing the login", err)
	}
	return release, nil
}

// serveRelay hands the callbacks relayed on ps to the logins they are for.
func (s *Store) serveRelay(ps *redis.PubSub) {
	for m := range ps.Channel() {
		plain, err := s.open("login relay", m.Channel, m.Payload)
		var rl relayedLogin
		if err != nil || json.Unmarshal(plain, &rl) != nil || rl.Reply == "" {
			continue // not sealed with our keys: not from a replica of ours
		}
		s.relay.mu.Lock()
		complete := s.relay.holds[rl.ID]
		s.relay.mu.Unlock()
		go func() { // bounded by RelayTimeout and Timeout
			out := relayOutcome{Unknown: complete == nil}
			if complete != nil {
				q, err := url.ParseQuery(rl.Query)
				if err == nil {
					ctx, cancel := context.WithTimeout(context.Background(), s.relayTimeout)
					err = complete(ctx, string(rl.User), q)
					cancel()
				}
				switch {
				case err == nil:
					out.OK = true
				case errors.Is(err, auth.ErrLoginUnknown):
					out.Unknown = true
				default:
					out.Err = err.Error()
				}
			}
			b, _ := json.Marshal(out)
			rk := s.prefix + "lr:" + rl.Reply
			ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
			defer cancel()
			_, _ = s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.RPush(ctx, rk, s.seal(rk, b))
				p.Expire(ctx, rk, time.Minute)
				return nil
			})
		}()
	}
}

// RelayLogin implements auth.LoginRelay. Its wait for the outcome is bounded by
// Options.RelayTimeout (default DefaultRelayTimeout) within ctx, waited a second at a time
// (so without the client's ContextTimeoutEnabled it is rounded up to whole seconds); it ends
// with ErrLoginUnknown about a second after the login's holder let the login go unanswered.
func (s *Store) RelayLogin(ctx context.Context, id, user string, query url.Values) error {
	bctx, cancel := s.bound(ctx)
	ch, err := s.c.GetDel(bctx, s.prefix+"lf:"+id).Result()
	cancel()
	if errors.Is(err, redis.Nil) {
		return fmt.Errorf("redis token store: login relay: %w", auth.ErrLoginUnknown)
	}
	if err != nil {
		return fail("login relay: finding the login", err)
	}
	reply := crand.Text()
	b, _ := json.Marshal(relayedLogin{ID: id, User: []byte(user), Query: query.Encode(), Reply: reply})
	if len(b) > maxRelayed {
		return fmt.Errorf("redis token store: login relay: the callback is %d bytes (at most %d)", len(b), maxRelayed)
	}
	bctx, cancel = s.bound(ctx)
	n, err := s.c.Publish(bctx, ch, s.seal(ch, b)).Result()
	cancel()
	if err != nil {
		return fail("login relay: relaying the callback", err)
	}
	if n == 0 {
		return fmt.Errorf("redis token store: login relay: the replica that started the login is gone: %w", auth.ErrLoginUnknown)
	}
	wait := s.relayTimeout
	if d, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(d))
	}
	if wait < time.Millisecond {
		return fail("login relay: waiting for the outcome", context.DeadlineExceeded)
	}
	rk := s.prefix + "lr:" + reply
	v, err := s.awaitOutcome(ctx, id, rk, wait)
	if err != nil {
		return err
	}
	if len(v) != 2 {
		return errors.New("redis token store: login relay: not an outcome")
	}
	plain, err := s.open("login relay", rk, v[1])
	if err != nil {
		return err
	}
	var out relayOutcome
	if err := json.Unmarshal(plain, &out); err != nil {
		return errors.New("redis token store: login relay: not an outcome")
	}
	switch {
	case out.OK:
		return nil
	case out.Unknown:
		return fmt.Errorf("redis token store: login relay: %w", auth.ErrLoginUnknown)
	}
	return fmt.Errorf("on the replica that started the login: %s", redact.ClipMark(out.Err, maxErrText, ""))
}

// awaitOutcome waits up to wait for the outcome on the reply list rk, a second at a time
// (BLPOP counts in whole seconds; the context's deadline cuts the wait to size), and after
// each empty second checks that the login's holder still holds it: once it does not, one
// more second for an outcome it may be pushing, then ErrLoginUnknown.
func (s *Store) awaitOutcome(ctx context.Context, id, rk string, wait time.Duration) ([]string, error) {
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	gone := false
	for {
		if wctx.Err() != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("redis token store: login relay: no outcome from the replica that started the login within %s", wait.Round(time.Millisecond))
		}
		v, err := s.c.BLPop(wctx, time.Second, rk).Result()
		switch {
		case err == nil:
			return v, nil
		case errors.Is(err, redis.Nil) && gone:
			return nil, fmt.Errorf("redis token store: login relay: the replica that held the login let it go without an outcome: %w", auth.ErrLoginUnknown)
		case errors.Is(err, redis.Nil):
			bctx, bcancel := s.bound(wctx)
			n, err := s.c.Exists(bctx, s.prefix+"lh:"+id).Result()
			bcancel()
			if err == nil && n == 0 {
				gone = true
			}
			continue
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			return nil, fmt.Errorf("redis token store: login relay: no outcome from the replica that started the login within %s", wait.Round(time.Millisecond))
		}
		return nil, fail("login relay: waiting for the outcome", err)
	}
}

// maxErrText bounds an error relayed back.
const maxErrText = 1024
