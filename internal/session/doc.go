// Package session holds the sessions of one MCP server: a Pool per server with the shared
// session and, for a server whose grants are per user, each user's state (session,
// catalogue, OAuth handler), with one single-flight opener and one backoff for all of them;
// the negotiation of the protocol version; the hold of subscriptions/listen while a set
// starts; and the choice, per session, between the direct call path and go-sdk's
// (Session.CallTool). Where a session comes from is answered here and nowhere else.
//
// The pool knows no type of its host (package bridge): it makes the host's errors and
// learns of new sessions through Config.Host, and holds a per-user catalogue as an opaque
// value.
package session
