package bridge

import "github.com/ttalk/mcpbridge/internal/catalog"

// ValidToolName reports whether name is accepted by every major model API:
// ^[A-Za-z_][A-Za-z0-9_-]{0,63}$.
func ValidToolName(name string) bool { return catalog.ValidName(name) }

// SanitizeToolName turns any string into a valid tool name deterministically: runes outside
// [A-Za-z0-9_-] become "_", a name that does not start with a letter or "_" gets a "_" in
// front, an empty name becomes "_", and a name longer than 64 bytes is cut and ends in "_"
// plus 8 hex digits of a hash of the original, so distinct long names stay distinct.
// A valid name is returned unchanged.
func SanitizeToolName(name string) string { return catalog.Sanitize(name) }
