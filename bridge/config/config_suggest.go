package config

import "strings"

// nearest returns the candidate that key is probably a misspelling of: equal but for case,
// or within edit distance 1 (short keys) or 2 (keys of 6+ letters). It returns "" if none.
func nearest(key string, candidates []string) string {
	lk := strings.ToLower(key)
	best, bestD := "", 3
	for _, c := range candidates {
		if c == key {
			return ""
		}
		lc := strings.ToLower(c)
		limit := 2
		if len(lc) < 6 {
			limit = 1
		}
		if d := editDistance(lk, lc, limit); d <= limit && d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, or limit+1 when it exceeds limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	if len(a) > 64 || len(b) > 64 {
		return limit + 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
