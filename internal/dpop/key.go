package dpop

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"
)

// The proof algorithms a Key signs with.
const (
	ES256 = "ES256" // ECDSA P-256 with SHA-256, the default
	EdDSA = "EdDSA" // Ed25519
)

// Key is the key pair of one grant: its public half goes in every proof, the authorization
// server binds the grant's tokens to its thumbprint. String, GoString and LogValue show the
// algorithm and the thumbprint only; the private key leaves only through Marshal.
type Key struct {
	alg   string
	ec    *ecdsa.PrivateKey
	ed    ed25519.PrivateKey
	jwk   json.RawMessage // the public key, members in RFC 7638 order
	thumb string
}

// NewKey generates a key for alg: ES256 ("" too) or EdDSA.
func NewKey(alg string) (*Key, error) {
	switch alg {
	case "", ES256:
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("dpop: generating a P-256 key: %w", err)
		}
		return fromEC(k)
	case EdDSA:
		_, k, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("dpop: generating an Ed25519 key: %w", err)
		}
		return fromEd(k), nil
	}
	return nil, fmt.Errorf("dpop: unsupported algorithm %q (want %s or %s)", alg, ES256, EdDSA)
}

// ParseKey reads a key written by Marshal. Errors never quote it.
func ParseKey(s string) (*Key, error) {
	der, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, errors.New("dpop: the stored key is not base64")
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, errors.New("dpop: the stored key cannot be parsed")
	}
	switch k := k.(type) {
	case *ecdsa.PrivateKey:
		if k.Curve != elliptic.P256() {
			return nil, errors.New("dpop: the stored key is not on P-256")
		}
		return fromEC(k)
	case ed25519.PrivateKey:
		return fromEd(k), nil
	}
	return nil, fmt.Errorf("dpop: the stored key is a %T, not P-256 or Ed25519", k)
}

func fromEC(k *ecdsa.PrivateKey) (*Key, error) {
	pt, err := k.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil || len(pt) != 65 {
		return nil, errors.New("dpop: bad P-256 public key")
	}
	enc := base64.RawURLEncoding.EncodeToString
	jwk := `{"crv":"P-256","kty":"EC","x":"` + enc(pt[1:33]) + `","y":"` + enc(pt[33:]) + `"}`
	return newKey(ES256, jwk, k, nil), nil
}

func fromEd(k ed25519.PrivateKey) *Key {
	pub := k.Public().(ed25519.PublicKey)
	jwk := `{"crv":"Ed25519","kty":"OKP","x":"` + base64.RawURLEncoding.EncodeToString(pub) + `"}`
	return newKey(EdDSA, jwk, nil, k)
}

// newKey fills in the thumbprint: RFC 7638, the SHA-256 of the required members in
// lexicographic order without whitespace, which is how jwk is written.
func newKey(alg, jwk string, ec *ecdsa.PrivateKey, ed ed25519.PrivateKey) *Key {
	sum := sha256.Sum256([]byte(jwk))
	return &Key{alg: alg, ec: ec, ed: ed, jwk: json.RawMessage(jwk), thumb: base64.RawURLEncoding.EncodeToString(sum[:])}
}

// Marshal is the private key as base64 PKCS#8, for the token store only.
func (k *Key) Marshal() (string, error) {
	var priv any = k.ec
	if k.ed != nil {
		priv = k.ed
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return "", fmt.Errorf("dpop: encoding the key: %w", err)
	}
	return base64.StdEncoding.EncodeToString(der), nil
}

// Alg is the key's JWS algorithm, ES256 or EdDSA.
func (k *Key) Alg() string { return k.alg }

// Thumbprint is the RFC 7638 SHA-256 thumbprint of the public key: the jkt a bound token's
// cnf claim names.
func (k *Key) Thumbprint() string { return k.thumb }

// String names the key by algorithm and thumbprint; it holds no secret.
func (k *Key) String() string { return "dpop " + k.alg + " key " + k.thumb }

// GoString is String, so %#v cannot print the private key either.
func (k *Key) GoString() string { return k.String() }

// LogValue implements slog.LogValuer without the private key.
func (k *Key) LogValue() slog.Value { return slog.StringValue(k.String()) }

// Proof is a DPoP proof JWT (RFC 9449 section 4.2) for a request of method to target, made
// at iat: a fresh jti, htu without query and fragment, and, when accessToken is given, its
// hash in ath; nonce when the server supplied one.
func (k *Key) Proof(method, target string, iat time.Time, accessToken, nonce string) (string, error) {
	htu, err := HTU(target)
	if err != nil {
		return "", err
	}
	jti := make([]byte, 16)
	_, _ = rand.Read(jti)
	claims := struct {
		JTI   string `json:"jti"`
		HTM   string `json:"htm"`
		HTU   string `json:"htu"`
		IAT   int64  `json:"iat"`
		ATH   string `json:"ath,omitempty"`
		Nonce string `json:"nonce,omitempty"`
	}{JTI: base64.RawURLEncoding.EncodeToString(jti), HTM: method, HTU: htu, IAT: iat.Unix(), Nonce: nonce}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims.ATH = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	header := struct {
		Typ string          `json:"typ"`
		Alg string          `json:"alg"`
		JWK json.RawMessage `json:"jwk"`
	}{"dpop+jwt", k.alg, k.jwk}
	h, err := json.Marshal(header)
	if err != nil {
		return "", err
	}
	c, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	input := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	sig, err := k.sign([]byte(input))
	if err != nil {
		return "", err
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

func (k *Key) sign(input []byte) ([]byte, error) {
	if k.ed != nil {
		return ed25519.Sign(k.ed, input), nil
	}
	h := sha256.Sum256(input)
	r, s, err := ecdsa.Sign(rand.Reader, k.ec, h[:])
	if err != nil {
		return nil, fmt.Errorf("dpop: signing: %w", err)
	}
	out := make([]byte, 64) // JWS ES256: R || S, 32 bytes each
	r.FillBytes(out[:32])
	s.FillBytes(out[32:])
	return out, nil
}

// HTU is target as a proof's htu: scheme, host and path, without query and fragment (which
// may hold secrets and which RFC 9449 leaves out).
func HTU(target string) (string, error) {
	u, err := url.Parse(target)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", errors.New("dpop: the request URL is not absolute")
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) + u.EscapedPath(), nil
}

// Choose picks the proof algorithm: want when given (an error when the server's list
// excludes it), else ES256 unless the server lists only EdDSA among the two. An empty
// supported list means the server did not say.
func Choose(want string, supported []string) (string, error) {
	ok := func(alg string) bool { return len(supported) == 0 || slices.Contains(supported, alg) }
	switch {
	case want != "" && want != ES256 && want != EdDSA:
		return "", fmt.Errorf("dpop: unsupported algorithm %q (want %s or %s)", want, ES256, EdDSA)
	case want != "":
		if !ok(want) {
			return "", fmt.Errorf("dpop: the server accepts %s for DPoP proofs, not the configured %s", listed(supported), want)
		}
		return want, nil
	case ok(ES256):
		return ES256, nil
	case ok(EdDSA):
		return EdDSA, nil
	}
	return "", fmt.Errorf("dpop: the server accepts only %s for DPoP proofs; mcpbridge signs with %s or %s", listed(supported), ES256, EdDSA)
}

// listed is a server's algorithm list for an error message: bounded, printable.
func listed(algs []string) string {
	var out []string
	for _, a := range algs {
		if len(out) == 8 {
			out = append(out, "...")
			break
		}
		out = append(out, strings.Map(func(r rune) rune {
			if r < 0x21 || r > 0x7e {
				return '?'
			}
			return r
		}, a[:min(len(a), 16)]))
	}
	return strings.Join(out, ", ")
}
