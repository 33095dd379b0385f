package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge/auth"
	"github.com/ttalk/mcpbridge/internal/catalog"
	"github.com/ttalk/mcpbridge/internal/redact"
	"github.com/ttalk/mcpbridge/internal/session"
	itel "github.com/ttalk/mcpbridge/internal/telemetry"
	"github.com/ttalk/mcpbridge/internal/wire"
	"github.com/ttalk/mcpbridge/transport"
)

// Sessions: where a session comes from is internal/session's (the pool: the shared session,
// the users', one opener with backoff, negotiation, the retry rule, the call path). This file
// hands the pool the server's settings and its error types, and is the sending side of the
// call pipeline.

// listenHoldMax is how long a server's subscriptions/listen is held after its listing
// while a set starts (internal/session, listenhold.go).
const listenHoldMax = 250 * time.Millisecond

// minDiscoverWait is the shortest wait for an answer to server/discover (maxDiscoverWait
// the longest: a quarter of the connect timeout in between).
const minDiscoverWait = time.Second

// newPool makes the session pool of s, whose client, spec and configuration error are set.
func newPool(s *Server) *session.Pool {
	cfg := session.Config{
		ID:              s.cfg.ID,
		Spec:            s.spec,
		Client:          s.client,
		Log:             s.log,
		Life:            s.life,
		ConnectTimeout:  s.opts.connectTimeout(s.cfg),
		ProtocolVersion: s.cfg.ProtocolVersion,
		OAuth:           s.oauth,
		ConfigErr:       s.configErr,
		PerUser:         s.perUser,
		ServeUsers:      s.opts.Users != nil,
		Tasks:           s.tasks, // its tasks' status notifications
		Limits: session.Limits{FirstBackoff: firstBackoff, MaxBackoff: maxBackoff, CloseWait: sessionClose,
			MinDiscoverWait: minDiscoverWait, MaxDiscoverWait: maxDiscoverWait, ListenHold: listenHoldMax, StderrTail: stderrLogTail},
		Host: session.Host{
			Fail: func(phase string, err error, conn *transport.Conn) error {
				return s.serverError(Phase(phase), err, conn)
			},
			AsFail: func(err error) error {
				var se *ServerError
				if errors.As(err, &se) {
					return se
				}
				return nil
			},
			NeedsLogin: func(user string, reason LoginReason) error {
				return &NeedsLoginError{Server: s.cfg.ID, User: user, Reason: reason, s: s}
			},
			IsNeedsLogin: func(err error) bool {
				var nle *NeedsLoginError
				return errors.As(err, &nle)
			},
			ValidUser: ValidateUserID,
			Opened: func(k transport.Kind, sess *session.Session) { // the status of the shared session
				s.catMu.Lock()
				defer s.catMu.Unlock()
				s.status.Transport = string(k)
				if sess == nil {
					return
				}
				s.hash = serverHash(s.cfg, k)
				ir := sess.CS.InitializeResult()
				s.status.ProtocolVersion = ir.ProtocolVersion
				s.status.Negotiation = sess.Negotiation
				s.status.Instructions = redact.Instructions(ir.Instructions, MaxInstructionsBytes)
				s.status.Tasks = sess.Caps.String()
				if ir.ServerInfo != nil {
					s.status.ServerName, s.status.ServerVersion = ir.ServerInfo.Name, ir.ServerInfo.Version
				}
			},
			List: func(ctx context.Context, sess *session.Session) error {
				listed, raw, err := s.list(ctx, sess)
				if err == nil {
					s.install(ctx, sess, listed, raw)
				}
				return err
			},
			Relist: func() { relistSoon(s) },
		},
	}
	if cfg.PerUser {
		cfg.Users = session.Users{MaxSessions: s.opts.users.MaxSessions, IdleTimeout: s.opts.users.IdleTimeout, Handler: func(id string) *auth.Handler {
			st := s.oauth.Settings()
			st.User, st.Fetch = id, nil
			st.LoginFetch, st.RedirectURL = s.logins.Fetch, s.opts.users.RedirectURL
			return auth.NewHandler(st)
		}}
	}
	return session.New(cfg)
}

// do runs one request on the session the request's user gets (internal/session: redial,
// the retry rule), bounded by the call timeout and by Close.
func (s *Server) do(ctx context.Context, phase Phase, what string, retryable bool, fn func(context.Context, *session.Session) error) error {
	return s.request(ctx, false, session.Request{Phase: string(phase), What: what, Retryable: retryable, Timeout: s.opts.callTimeout(s.cfg)}, fn)
}

// request runs req with fn on the pool. Unless bounded (ctx already carries the call's
// deadline and Close, set once by the caller), ctx is bounded here by req.Timeout and Close.
// The server's text in an error may quote a secret it was sent: it is masked.
func (s *Server) request(ctx context.Context, bounded bool, req session.Request, fn func(context.Context, *session.Session) error) (err error) {
	defer func() { err = s.secrets.maskErr(ctx, err) }()
	if !bounded {
		var release func()
		ctx, release = wire.Bound(ctx, s.life, req.Timeout)
		defer release()
	}
	return s.pool.Do(ctx, req, fn)
}

// send is a call's tools/call on the session the pool gives it (internal/session: redial,
// the retry rule), with WithCallMeta's _meta and the trace context, the session in the span,
// and a progress token when the caller asked for progress. ctx carries the call's deadline
// and Close (set once, call.go); each request of a task-bounded call is bounded by o.timeout
// within it (see sendOptions).
func (s *Server) send(ctx context.Context, rt *catalog.Tool, args json.RawMessage, o sendOptions) (*mcp.CallToolResult, error) {
	var res *mcp.CallToolResult
	var task *taskRun // the task the server created instead of answering (taskrun.go)
	req := session.Request{Phase: string(PhaseCall), What: rt.Label, Retryable: rt.Retryable(), Timeout: o.timeout}
	if s.perUser && s.opts.Users != nil {
		// A user's call may go on a stateless server's shared connection with the user's
		// token, unless it may become a task.
		req.Direct = func(shared *session.Session) bool {
			tap, err := s.tasks.CallTap(shared.Caps, rt.TaskSupport, rt.Label, false)
			return tap == nil && err == nil
		}
	}
	err := s.request(ctx, !o.taskBounded, req, func(ctx context.Context, sess *session.Session) error {
		if s.gone(rt.Name) {
			return ErrToolGone
		}
		params := &mcp.CallToolParams{Name: rt.Name, Arguments: args}
		if meta := s.opts.tel.RequestMeta(ctx); meta != nil {
			params.Meta = meta
		}
		itel.SessionStarted(ctx, sess.CS.ID()) // the session in the span
		if fn := session.ProgressFunc(ctx); fn != nil {
			tok, done := s.progress.Register(rt.Name, fn)
			defer done()
			params.SetProgressToken(tok)
		}
		var err error
		res, task, err = taskHost{s}.sendCall(ctx, sess, rt, params, false, o)
		return err
	})
	if err == nil && task != nil {
		res, err = task.Await(ctx, o.taskTimeout)
		if o.structured != nil {
			o.structured.raw = task.StructuredContent() // tasks/result's or tasks/get's bytes
		}
	}
	return res, err
}

// callOptions are the settings of one tools/call of rt (Session.CallTapped: direct or
// through go-sdk, the taps set there); shared: the caller only reads the result's text.
// Progress on a direct call's own stream reaches pr (the server's routes) when ctx asked
// for progress.
func callOptions(ctx context.Context, rt *catalog.Tool, shared bool, pr *session.ProgressRoutes) session.CallOptions {
	opts := session.CallOptions{InputSchema: rt.Schema, App: rt.UI.ResourceURI != "", SharedMeta: shared}
	if session.ProgressFunc(ctx) != nil {
		opts.OnProgress = func(p *mcp.ProgressNotificationParams) {
			pr.Deliver(ctx, &mcp.ProgressNotificationClientRequest{Params: p})
		}
	}
	return opts
}
