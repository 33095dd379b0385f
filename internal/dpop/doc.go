// Package dpop makes OAuth 2.0 Demonstrating Proof of Possession (RFC 9449) proofs for
// package bridge: a key pair per grant (P-256 by default, Ed25519 where the server accepts
// it), a proof JWT per request (htm, htu without query and fragment, iat, a fresh jti, ath
// for the access token, the server's nonce), and an http.RoundTripper that adds them and
// answers a server's nonce challenge once.
//
// It uses only the standard library's crypto. Keys print as their algorithm and
// thumbprint; the private key leaves only through Key.Marshal, for the token store.
package dpop
