package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// MaxNameLen is the longest tool name every major model API accepts, in bytes (a row of
// bridge/limits.go's table).
const MaxNameLen = 64

var validName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)

// ValidName reports whether name is accepted by every major model API:
// ^[A-Za-z_][A-Za-z0-9_-]{0,63}$ (bridge.ValidToolName).
func ValidName(name string) bool { return validName.MatchString(name) }

// Sanitize turns any string into a valid tool name deterministically (the rule
// bridge.SanitizeToolName documents): runes outside [A-Za-z0-9_-] become "_", a name that
// does not start with a letter or "_" gets a "_" in front, an empty name becomes "_", and a
// name longer than 64 bytes is cut and ends in "_" plus 8 hex digits of a hash of the
// original. A valid name is returned unchanged.
func Sanitize(name string) string {
	if ValidName(name) {
		return name
	}
	var b strings.Builder
	b.Grow(len(name) + 1)
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" || !(s[0] == '_' || (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')) {
		s = "_" + s
	}
	if len(s) > MaxNameLen {
		s = withSuffix(s, name)
	}
	return s
}

// withSuffix cuts s so that "_" plus 8 hex digits of hash(seed) fit in MaxNameLen.
func withSuffix(s, seed string) string {
	suffix := "_" + shortHash(seed)
	if len(s) > MaxNameLen-len(suffix) {
		s = s[:MaxNameLen-len(suffix)]
	}
	return s + suffix
}

func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:4])
}

// Namer hands out unique names in a deterministic order. The zero value is not usable: make
// one with NewNamer.
type Namer struct {
	taken map[string]bool
}

// NewNamer returns a Namer with no name taken.
func NewNamer() *Namer { return &Namer{taken: map[string]bool{}} }

// Take marks name as taken, as an earlier tool's.
func (n *Namer) Take(name string) { n.taken[name] = true }

// Assign picks the model-visible name of remote tool `remote` of server `serverID`.
// prefix is "" (keep the server's name unless it clashes) or the prefix to always use.
// It returns the name and, when it differs from remote, why.
func (n *Namer) Assign(serverID, prefix, remote string) (name, reason string) {
	var reasons []string
	base := remote
	if prefix != "" {
		base = prefix + "__" + remote
		reasons = append(reasons, "prefixed with "+prefix+"__")
	}
	name = Sanitize(base)
	if name != base {
		reasons = append(reasons, invalidReason(base))
	}
	if n.taken[name] {
		clash := name
		if prefix == "" {
			name = Sanitize(serverID + "__" + remote)
			reasons = append(reasons, fmt.Sprintf("%q is taken by an earlier tool; prefixed with the server ID", clash))
		}
		seed, stem := serverID+"\x00"+remote, name
		for i := 0; n.taken[name]; i++ {
			name = withSuffix(stem, fmt.Sprintf("%s\x00%d", seed, i))
			if i == 0 {
				reasons = append(reasons, fmt.Sprintf("%q still clashes; hash suffix added", clash))
			}
		}
	}
	n.taken[name] = true
	if name == remote {
		return name, ""
	}
	return name, strings.Join(reasons, "; ")
}

func invalidReason(s string) string {
	switch {
	case s == "":
		return "empty name"
	case len(s) > MaxNameLen:
		return fmt.Sprintf("longer than %d bytes", MaxNameLen)
	}
	for i, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' || (i > 0 && (r >= '0' && r <= '9' || r == '-'))
		if !ok {
			if i == 0 {
				return fmt.Sprintf("starts with %q", r)
			}
			return fmt.Sprintf("contains %q", r)
		}
	}
	return "not a valid tool name"
}
