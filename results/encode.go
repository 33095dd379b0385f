package results

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ttalk/mcpbridge/internal/jsonstr"
)

// appendGeneric appends the compact JSON of a generic value (see isGeneric) to b exactly as
// encoding/json's Encoder with SetEscapeHTML(false) writes it (sorted keys, the same string
// escapes and number format), but without its per-map and per-value allocations. ok is false
// for values it does not handle (non-generic types, NaN, ±Inf); callers then use encoding/json.
func appendGeneric(b []byte, v any, depth int, keys *[][]string) ([]byte, bool) {
	if depth > 10000 {
		return b, false
	}
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		return strconv.AppendBool(b, v), true
	case float64:
		return appendFloat(b, v)
	case string:
		return jsonstr.Append(b, v), true
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendGeneric(b, e, depth+1, keys); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case map[string]any:
		// One reusable key slice per nesting depth.
		for len(*keys) <= depth {
			*keys = append(*keys, nil)
		}
		ks := (*keys)[depth][:0]
		for k := range v {
			ks = append(ks, k)
		}
		slices.SortFunc(ks, strings.Compare)
		(*keys)[depth] = ks
		b = append(b, '{')
		for i, k := range ks {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonstr.Append(b, k)
			b = append(b, ':')
			var ok bool
			if b, ok = appendGeneric(b, v[k], depth+1, keys); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
	return b, false
}

// appendFloat formats f like encoding/json's float64 encoder.
func appendFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// Clean up e-09 to e-9, as encoding/json does.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}
