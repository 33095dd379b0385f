package session

import "github.com/modelcontextprotocol/go-sdk/jsonrpc"

// SentByServer returns the first JSON-RPC error in err's tree that the server sent, or nil.
// go-sdk wraps failures of its own side in JSON-RPC errors of its own making ("rejected by
// transport" around an HTTP 503 or a refused connection, "client is closing", "server is
// closing"); those say nothing the server said, so they are skipped. An error with an
// Original method (a masked copy of an error, which does not unwrap since the original would
// print secrets) is looked through to its original.
func SentByServer(err error) *jsonrpc.Error {
	switch e := err.(type) {
	case nil:
		return nil
	case *jsonrpc.Error:
		if !sdkLocal(e) {
			return e
		}
	case interface{ Original() error }:
		return SentByServer(e.Original())
	}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if je := SentByServer(e); je != nil {
				return je
			}
		}
	case interface{ Unwrap() error }:
		return SentByServer(u.Unwrap())
	}
	return nil
}

// sdkLocal reports whether je is one of go-sdk's own JSON-RPC errors (its internal jsonrpc2
// package's ErrRejected, ErrClientClosing and ErrServerClosing), recognised by code and
// message since go-sdk does not export them.
func sdkLocal(je *jsonrpc.Error) bool {
	switch {
	case je.Code == CodeRejected && je.Message == "rejected by transport",
		je.Code == -32003 && je.Message == "client is closing",
		je.Code == -32004 && je.Message == "server is closing":
		return true
	}
	return false
}
