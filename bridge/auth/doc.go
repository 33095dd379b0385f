// Package auth is how the bridge authorizes to Streamable HTTP servers that require OAuth:
// the public types (AuthConfig, Authorizer, TokenStore, TokenLocker, LoginRelay,
// StoredToken, AuthStatus, FileTokenStore; package bridge aliases them), the OAuth handler
// of one server (Handler: go-sdk's auth.OAuthHandler), the client credentials grant, the
// jwt-bearer grant of workload identity federation and enterprise-managed authorization
// (the protocol requests themselves are internal/grant's), DPoP-bound tokens for every
// grant (the proofs are internal/dpop's), the token file, and the web login engine
// (Logins: a web host's StartLogin and CompleteLogin).
//
// Package bridge is what hosts use; this package is what it delegates to. It never imports
// bridge.
//
// # OAuth
//
// Most remote MCP servers (issue trackers, docs, CRMs, clouds) require OAuth 2.1. A server
// with an auth block (Gemini CLI's oauth block is read too; its authorizationUrl, tokenUrl,
// audiences, redirectUri and tokenParamName are ignored with a warning, since the bridge
// discovers the authorization server) is authorized with go-sdk's auth package: protected
// resource and authorization server discovery, client ID metadata documents, pre-registration
// or dynamic client registration, PKCE, the resource parameter, issuer checks, scope step-up.
// OAuth is for Streamable HTTP servers (type: http, or a URL that answers as one). The block
// takes type, scopes, client_id, client_secret, token_endpoint_auth, private_key_file,
// signing_alg, client_metadata_url, dpop, dpop_alg, token_file, token_env, token_command,
// audience, idp_issuer, idp_token_endpoint, idp_client_id and idp_client_secret (AuthConfig).
//
//	servers:
//	  tracker:
//	    url: https://mcp.tracker.example/mcp
//	    auth:
//	      type: oauth                       # authorization code + PKCE; discovery does the rest
//	      scopes: [read, write]             # optional; else from WWW-Authenticate / scopes_supported
//	      client_id: ${TRACKER_CLIENT_ID}   # optional pre-registration (+ client_secret)
//	  billing:
//	    url: https://mcp.billing.example/mcp
//	    auth: {type: client_credentials, client_id: svc, client_secret: ${BILLING_SECRET}}
//	  cluster:
//	    url: https://mcp.internal.example/mcp
//	    auth:
//	      type: workload_identity
//	      token_file: /var/run/secrets/tokens/mcp   # or token_env: ACTIONS_ID_TOKEN, or token_command: [...]
//	      audience: https://auth.internal.example   # optional: what the token's aud must name
//	  wiki:
//	    url: https://mcp.wiki.example/mcp
//	    auth:
//	      type: enterprise
//	      client_id: agent-app                      # at the wiki's authorization server
//	      client_secret: ${WIKI_SECRET}
//	      idp_issuer: https://acme.okta.example     # the company's identity provider
//	      idp_client_id: agent-at-acme
//	      token_file: ${HOME}/.acme/id_token        # the user's ID token from single sign-on
//
// Four flows:
//
//   - type: oauth, the authorization code flow with PKCE, for servers that act for a person.
//     The person logs in once with mcpbridge login (see command mcpbridge); access tokens are
//     refreshed silently with the refresh token from then on; a refresh token the server
//     revoked means one more login.
//   - type: client_credentials, machine to machine, no person: client_secret_basic (default),
//     client_secret_post, or private_key_jwt with private_key_file: key.pem (RSA, P-256 or
//     Ed25519; token_endpoint_auth: private_key_jwt). Tokens are fetched when needed and kept
//     in memory only.
//   - type: workload_identity (workload identity federation), no secret at all: a token the
//     platform issued to the workload (a Kubernetes projected service account token, a CI
//     system's OIDC token) goes in the RFC 7523 jwt-bearer grant. It is read fresh for every
//     grant from token_file, token_env or token_command (a program and its arguments, no
//     shell, run with MCPBRIDGE_AUDIENCE and MCPBRIDGE_RESOURCE set). A token whose aud does
//     not name this authorization server (its issuer or token endpoint; audience when set) is
//     not sent.
//   - type: enterprise (enterprise-managed authorization): the user's ID token from single
//     sign-on (token_file, token_env or token_command) is exchanged at the company's identity
//     provider for an identity assertion grant for this server (RFC 8693 token exchange),
//     which the server's authorization server takes in the jwt-bearer grant from the client
//     (client_id, client_secret). Headless: a new ID token is the identity provider's
//     business, not mcpbridge login's.
//
// A token either server refuses is not sent again, and no other grant is tried; the error
// says what the server said and, without quoting it, what the token says of itself (its
// audience, its expiry by this machine's clock).
//
// DPoP (RFC 9449), for any type: when the authorization server lists
// dpop_signing_alg_values_supported or the resource requires bound tokens (dpop: on forces it,
// dpop: off never), the grant gets a key pair (P-256, or Ed25519 with dpop_alg: EdDSA or when
// the server accepts only that), token requests and every MCP request carry a fresh proof,
// and the tokens go in the DPoP scheme. A server's nonce is answered once per challenge (and
// a clock the server's Date shows to be off, once); a server that challenges again fails the
// request with the reason. An authorization server that issues an unbound token anyway gets it
// used as a bearer token, unless dpop is on.
//
// Where tokens live: in one per-user file, <user config dir>/mcpbridge/tokens.json
// (~/.config/mcpbridge/ on Linux, ~/Library/Application Support/mcpbridge/ on macOS,
// %AppData%\mcpbridge\ on Windows), written 0600 in a 0700 directory and replaced atomically,
// keyed by a hash of the server URL, client and type. The bridge refuses to read the file when
// group or others can read it (chmod 600 it). A login's DPoP key is kept with its tokens.
// Tokens, keys, client secrets, codes and verifiers never appear in logs, errors, probe output
// or --json; probe shows only the type, the grant type, the binding (dpop), the access token's
// expiry and whether a refresh token is kept.
//
// Headless by default: Connect never opens a browser or waits for a person. A server with no
// usable token is skipped (or fails Connect, when required) with an error wrapping
// ErrNeedsLogin that says why: "needs login: no OAuth token is stored for it" (the command
// mcpbridge adds what to run). A stored token that is expired is refreshed first;
// a token the server rejects although it looked valid is refreshed once before giving up.
//
// Web applications log their own users in with Options.Authorizer: RedirectURL is the app's
// callback, and Fetch sends the user to the authorization URL and returns the code, state and
// iss the callback received (go-sdk checks the state and the issuer). Secret managers keep the
// tokens with Options.TokenStore, an interface of three methods (LoadToken, SaveToken,
// DeleteToken) over *StoredToken; Logout forgets a server's grant from whichever store.
//
//	set, err := bridge.Connect(ctx, cfgs, &bridge.Options{
//		TokenStore: vaultStore, // your TokenStore
//		Authorizer: &bridge.Authorizer{
//			RedirectURL: "https://app.example/oauth/callback",
//			Fetch:       app.redirectUserAndWaitForCallback, // func(ctx, *auth.AuthorizationArgs) (*auth.AuthorizationResult, error)
//		},
//	})
//
// # Web logins
//
// A web host's login (bridge.Server.StartLogin, bridge.Set.CompleteLogin) is a Logins
// flow: StartLogin runs the user's authorization code flow (go-sdk's auth package:
// discovery, registration, PKCE, resource, issuer checks) on a goroutine of its own until it
// needs the person; the flow's authorization URL, whose state parameter is bound to the user
// and the server, goes back to the web app; the web app's OAuth callback hands the
// redirect's query to CompleteLogin, which gives the flow its code and waits for the token
// exchange. A flow waits at most UserOptions.LoginTimeout, and flows are bounded in number
// (UserOptions.MaxLoginFlows).
//
// Replicas share grants through a TokenStore that is also a TokenLocker (bridge/redisstore
// on Redis: encrypted at rest, keys rotated by ID): a grant is refreshed only under its lock,
// after reading it again, so two replicas never both spend a rotating refresh token, and
// refreshes are spread by UserOptions.RefreshJitter. A login's flow lives in the replica
// that started it; when the TokenStore is also a LoginRelay (bridge/redisstore is), the web
// app's callback may reach any replica: Set.CompleteLogin relays it to the replica holding
// the flow and returns that replica's outcome. The relay knows a login by a hash of its
// state, for UserOptions.LoginTimeout at most; it waits a bounded time for the outcome.
// integration's replica tests run two replica processes on a real redis-server.
package auth
