package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The per-request Envelope of protocol 2026-07-28 (SEP-2575): every client request carries
// io.modelcontextprotocol/protocolVersion and /clientCapabilities (required) and
// /clientInfo (should) in params._meta. go-sdk adds them to the requests it sends itself;
// a direct call must add the same. Rather than rebuild go-sdk's capability object (its
// wire form is unexported: roots as a pointer, elicitation's form member by version),
// the connection keeps the _meta of the session's own server/discover request, which
// go-sdk builds from the same three values it later puts on every request, and a direct
// call carries those bytes.

const (
	// MethodDiscover is the method whose _meta an Envelope records.
	MethodDiscover = "server/discover"
	// ModernProtocol is the first protocol version with the per-request envelope, on which
	// Streamable HTTP is stateless.
	ModernProtocol = "2026-07-28"
	// metaKeyProtocolVersion is the Envelope's version key (mcp.MetaKeyProtocolVersion).
	metaKeyProtocolVersion = "io.modelcontextprotocol/protocolVersion"
)

// Envelope is the _meta of the last server/discover request sent on a connection. The
// zero value is ready to use.
type Envelope struct {
	mu      sync.Mutex
	raw     json.RawMessage // the _meta object as go-sdk encoded it; nil until discover
	version string          // its protocol version
	// forVersion caches raw rewritten for another negotiated version (see bytesFor).
	forVersion         string
	forVersionRaw      json.RawMessage
	decoded            map[string]json.RawMessage // raw's members, for merging user _meta
	decodedFor         string
	decodedErr         error
	decodedFromVersion string
}

// Observe records the _meta of an outgoing server/discover request's params.
func (e *Envelope) Observe(params []byte) {
	var meta []byte
	if !forMembers(params, func(key string, val []byte) bool {
		if key == "_meta" {
			meta = val
		}
		return true
	}) || len(meta) == 0 {
		return
	}
	var version string
	forMembers(meta, func(key string, val []byte) bool {
		if key == metaKeyProtocolVersion {
			version, _ = stringValue(val)
		}
		return true
	})
	if version == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.raw = bytes.Clone(meta)
	e.version = version
	e.forVersion, e.forVersionRaw = "", nil
	e.decoded, e.decodedFor, e.decodedErr = nil, "", nil
}

// errNoEnvelope means no server/discover was seen, so there is no Envelope to send.
var errNoEnvelope = errors.New("no server/discover request seen on this connection: no per-request _meta to send")

// bytesFor returns the Envelope for protocol version v: the discover request's _meta,
// with its protocol version replaced when the session settled on another one.
func (e *Envelope) bytesFor(v string) (json.RawMessage, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.raw == nil:
		return nil, errNoEnvelope
	case v == e.version:
		return e.raw, nil
	case v == e.forVersion:
		return e.forVersionRaw, nil
	}
	m, err := e.membersLocked(v)
	if err != nil {
		return nil, err
	}
	b, err := marshalNoEscape(m)
	if err != nil {
		return nil, err
	}
	e.forVersion, e.forVersionRaw = v, b
	return b, nil
}

// membersLocked returns the Envelope's members for version v (decoded once per version).
func (e *Envelope) membersLocked(v string) (map[string]json.RawMessage, error) {
	if e.decoded != nil && e.decodedFor == v && e.decodedFromVersion == e.version {
		return e.decoded, e.decodedErr
	}
	m := map[string]json.RawMessage{}
	err := json.Unmarshal(e.raw, &m)
	if err == nil {
		q, _ := json.Marshal(v)
		m[metaKeyProtocolVersion] = q
	}
	e.decoded, e.decodedFor, e.decodedErr, e.decodedFromVersion = m, v, err, e.version
	return m, err
}

// merged returns user's _meta entries plus the Envelope's for version v; user keys win, as
// go-sdk's injectRequestMeta leaves keys already present alone.
func (e *Envelope) merged(v string, user mcp.Meta) (mcp.Meta, error) {
	e.mu.Lock()
	if e.raw == nil {
		e.mu.Unlock()
		return nil, errNoEnvelope
	}
	m, err := e.membersLocked(v)
	e.mu.Unlock()
	if err != nil {
		return nil, err
	}
	out := make(mcp.Meta, len(m)+len(user))
	for k, val := range m {
		out[k] = val
	}
	maps.Copy(out, user)
	return out, nil
}

// ready reports whether an Envelope was seen.
func (e *Envelope) ready() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.raw != nil
}

// marshalNoEscape encodes v as go-sdk does: no HTML escaping, no trailing newline.
func marshalNoEscape(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// metaKeyClientCapabilities is the Envelope's capabilities key (mcp.MetaKeyClientCapabilities).
const metaKeyClientCapabilities = "io.modelcontextprotocol/clientCapabilities"

// withoutExtensions returns the Envelope env with the named extensions removed from its
// client capabilities (and their extensions member, once empty).
func withoutExtensions(env json.RawMessage, drop []string) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(env, &m); err != nil {
		return nil, err
	}
	var caps map[string]json.RawMessage
	if raw, ok := m[metaKeyClientCapabilities]; !ok || json.Unmarshal(raw, &caps) != nil || caps == nil {
		return env, nil
	}
	var ext map[string]json.RawMessage
	if raw, ok := caps["extensions"]; !ok || json.Unmarshal(raw, &ext) != nil || ext == nil {
		return env, nil
	}
	for _, d := range drop {
		delete(ext, d)
	}
	if len(ext) == 0 {
		delete(caps, "extensions")
	} else {
		b, err := marshalNoEscape(ext)
		if err != nil {
			return nil, err
		}
		caps["extensions"] = b
	}
	b, err := marshalNoEscape(caps)
	if err != nil {
		return nil, err
	}
	m[metaKeyClientCapabilities] = b
	return marshalNoEscape(m)
}
