package wire

import (
	"mime"
	"strings"
)

// MediaType returns the lowercased media type of a Content-Type value.
func MediaType(ct string) string {
	switch ct { // the common forms, without parsing
	case "application/json", "text/event-stream":
		return ct
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt, _, _ = strings.Cut(ct, ";")
	}
	return strings.ToLower(strings.TrimSpace(mt))
}
