package redact

import (
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/ttalk/mcpbridge/internal/jsonstr"
)

// Hide returns err with its text masked (see [String]) for a caller that inspects errors:
// unlike [Error]'s, the result keeps the whole original chain for errors.Is (sentinels carry
// no secret), and errors.As finds in it masked copies of the types callers inspect: the
// *jsonrpc.Error sentBy returns (the first the server sent), and what copies fills in
// (target is errors.As's; mask masks a text; false: not found). It does not unwrap, since
// the original would print the secrets; its Original method returns the original, for
// classifying it only.
func Hide(err error, secrets []string, sentBy func(error) *jsonrpc.Error, copies func(orig error, target any, mask func(string) string) bool) error {
	return &hiddenError{msg: String(err.Error(), secrets), orig: err, secrets: secrets, sentBy: sentBy, copies: copies}
}

// hiddenError is an error whose text had secrets masked (Hide).
type hiddenError struct {
	msg     string
	orig    error
	secrets []string
	sentBy  func(error) *jsonrpc.Error
	copies  func(orig error, target any, mask func(string) string) bool
}

func (e *hiddenError) Error() string { return e.msg }

// Original returns the unmasked error, for classifying the error only (the bridge's
// session.SentByServer looks through it); it is not an Unwrap, so errors.As and printing
// never reach it.
func (e *hiddenError) Original() error { return e.orig }

// Is reports whether the original error chain matches target: a yes or no shows no text.
func (e *hiddenError) Is(target error) bool { return errors.Is(e.orig, target) }

// As finds, in the original chain, the error types callers inspect, as masked copies.
func (e *hiddenError) As(target any) bool {
	mask := func(s string) string { return String(s, e.secrets) }
	t, ok := target.(**jsonrpc.Error)
	if !ok {
		return e.copies != nil && e.copies(e.orig, target, mask)
	}
	je := e.sentBy(e.orig)
	if je == nil {
		return false
	}
	c := *je
	c.Message = mask(je.Message)
	if len(je.Data) > 0 {
		if d := mask(string(je.Data)); d != string(je.Data) {
			c.Data = json.RawMessage(jsonstr.Marshal(d))
		}
	}
	*t = &c
	return true
}
