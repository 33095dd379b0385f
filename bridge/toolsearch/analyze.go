package toolsearch

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxTermBytes bounds one term: longer runs (base64, hashes) are cut, never kept whole.
const maxTermBytes = 40

// words splits s into runs of letters and digits and yields each run lowercased, with its
// words when case or digits split it: camelCase, a capital run before a word (HTTPServer →
// http, server) and letters against digits (page2 → page, 2). Every other rune separates
// runs, so snake_case, kebab-case, dotted and slashed names come apart; invalid UTF-8 too.
// Runs and words are cut to maxTermBytes. parts is nil for a run that is one word, and only
// valid during the call.
func words(s string, yield func(run string, parts []string)) {
	var parts []string
	run, start := -1, -1 // start of the current run, and of the current word within it
	var prev rune
	endWord := func(end int) {
		if start >= 0 && end > start {
			parts = append(parts, lowerCut(s[start:end]))
		}
		start = -1
	}
	endRun := func(end int) {
		endWord(end)
		if run >= 0 {
			if len(parts) > 1 {
				yield(lowerCut(s[run:end]), parts)
			} else {
				yield(lowerCut(s[run:end]), nil)
			}
		}
		run, parts = -1, parts[:0]
	}
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		if r == utf8.RuneError && size <= 1 || !isAlnum(r) {
			endRun(i)
			prev = 0
			i += size
			continue
		}
		if run < 0 {
			run = i
		}
		if start >= 0 {
			switch {
			case isUpper(r) && isLower(prev), isDigit(r) != isDigit(prev):
				endWord(i) // camelCase, page2
			case isUpper(prev) && isLower(r) && i-start > utf8.RuneLen(prev):
				endWord(i - utf8.RuneLen(prev)) // HTTPServer: "http", then "server"
				start = i - utf8.RuneLen(prev)
			}
		}
		if start < 0 {
			start = i
		}
		prev = r
		i += size
	}
	endRun(len(s))
}

// isAlnum, isUpper, isLower and isDigit are package unicode's, with ASCII answered first.
func isAlnum(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func isUpper(r rune) bool {
	if r < utf8.RuneSelf {
		return 'A' <= r && r <= 'Z'
	}
	return unicode.IsUpper(r)
}

func isLower(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z'
	}
	return unicode.IsLower(r)
}

func isDigit(r rune) bool {
	if r < utf8.RuneSelf {
		return '0' <= r && r <= '9'
	}
	return unicode.IsDigit(r)
}

// lowerCut lowercases w and cuts it to maxTermBytes at a rune boundary.
func lowerCut(w string) string {
	w = strings.ToLower(w)
	if len(w) <= maxTermBytes {
		return w
	}
	cut := maxTermBytes
	for cut > 0 && !utf8.RuneStart(w[cut]) {
		cut--
	}
	return w[:cut]
}

// isStopword reports words that carry no meaning for picking a tool. Verbs and nouns that
// name operations ("get", "list", "all", "new") are not stopwords: tool names are made of them.
func isStopword(w string) bool {
	switch w {
	case "a", "an", "the", "to", "of", "in", "on", "for", "with", "my", "me", "i", "is", "are",
		"and", "or", "this", "that", "these", "those", "it", "its", "be", "by", "at", "as", "from",
		"into", "onto", "what", "which", "how", "do", "does", "did", "can", "could", "you", "your",
		"please", "some", "there", "here", "was", "were", "will", "would", "should", "we", "our",
		"us", "e", "g", "eg", "ie", "etc", "if", "then", "so", "than", "when", "where", "who",
		"whom", "whose", "want", "need", "like", "let", "lets", "have", "has", "had", "use", "using",
		"used", "via", "any", "about", "also", "only", "just", "not", "no", "but", "up", "s", "t":
		return true
	}
	return false
}

// isWeak reports words (stemmed) that carry no intent of their own: light verbs and
// everyday words that say how, not what ("take a look", "make sure", "go ahead", "how
// long"). They still match, at weakWeight, but cannot decide a ranking alone and bring no
// related or prefix terms.
func isWeak(t string) bool {
	switch t {
	case "how", "long", "my", "make", "mak", "take", "tak", "go", "goe", "went", "got", "put", "give", "giv",
		"keep", "kept", "tell", "told", "thing", "stuff", "way", "sure", "help", "try", "tri", "know", "see",
		"really", "right", "now", "lot", "bit", "ok", "okay", "yes", "own", "someth", "someone",
		"again", "actual", "even", "still", "much", "well", "good", "mean", "said", "say", "thank", "happen",
		"everyth", "anyth", "whole", "ever":
		return true
	}
	return false
}

// stem reduces an English word to a light stem: plurals, -ing, -ed and a final e go, and a
// doubled final consonant left behind is undone (running → run, created → creat, create →
// creat, queries → query, boxes → box). Words of three bytes or fewer and words with digits
// are kept as they are.
func stem(w string) string {
	if len(w) <= 3 || strings.ContainsFunc(w, unicode.IsDigit) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "zes"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	suffix := func(s string, min int) bool {
		if strings.HasSuffix(w, s) && len(w)-len(s) >= min && hasVowel(w[:len(w)-len(s)]) {
			w = w[:len(w)-len(s)]
			return true
		}
		return false
	}
	if suffix("ing", 3) || suffix("ed", 3) {
		if n := len(w); n >= 2 && w[n-1] == w[n-2] && isConsonant(w[n-1]) && !strings.ContainsRune("lsz", rune(w[n-1])) {
			w = w[:n-1]
		}
	}
	if len(w) > 3 && strings.HasSuffix(w, "e") && !strings.HasSuffix(w, "ee") {
		w = w[:len(w)-1]
	}
	return w
}

func hasVowel(s string) bool { return strings.ContainsAny(s, "aeiouy") }

func isConsonant(c byte) bool { return 'a' <= c && c <= 'z' && !strings.ContainsRune("aeiou", rune(c)) }

// terms appends the stemmed, stopword-free terms of s to dst. Two-word phrases that mean
// one thing ("logged in", "how many", "roll back") become that one term. For a run split
// by case or digits (GitHub), whole decides: nil keeps its words and the whole run
// (documents, so either form finds them); a query keeps the whole run where whole says the
// index knows it, else its words.
//
// stems, when not nil, caches the stem of each word ("" for a stopword) across calls: New
// meets the same words in every document.
func terms(dst []string, s string, whole func(term string) bool, stems map[string]string) []string {
	var prev string
	stemOf := func(w string) string {
		if st, ok := stems[w]; ok {
			return st
		}
		st := ""
		if !isStopword(w) {
			st = stem(w)
		}
		if stems != nil {
			stems[w] = st
		}
		return st
	}
	word := func(w string) {
		if one := phrase(prev, w); one != "" {
			if n := len(dst); n > 0 && !isStopword(prev) && dst[n-1] == stem(prev) {
				dst = dst[:n-1]
			}
			dst = append(dst, one)
			prev = ""
			return
		}
		prev = w
		if st := stemOf(w); st != "" {
			dst = append(dst, st)
		}
	}
	words(s, func(run string, parts []string) {
		if parts == nil {
			word(run)
			return
		}
		t := stem(run)
		if whole != nil && whole(t) {
			prev = run
			dst = append(dst, t)
			return
		}
		for _, p := range parts {
			word(p)
		}
		if whole == nil {
			dst = append(dst, t)
		}
	})
	return dst
}

// phrase returns the one term two consecutive words stand for, or "".
func phrase(a, b string) string {
	switch {
	case b == "in" && (a == "log" || a == "logged" || a == "sign" || a == "signed"):
		return "login"
	case a == "how" && b == "many":
		return "count"
	case b == "back" && (a == "roll" || a == "rolled"):
		return "rollback"
	case a == "set" && b == "up":
		return "setup"
	case a == "look" && b == "up":
		return "lookup"
	}
	return ""
}

// relatedGroups are words that say the same thing in tool descriptions: a query word also
// matches the others of its groups, at relatedWeight. They are the everyday vocabulary of
// software operations and objects, not any server's tool names.
func relatedGroups() [][]string {
	return [][]string{
		{"create", "add", "new", "make", "insert", "open"},
		{"delete", "remove", "drop", "destroy", "erase", "purge"},
		{"update", "edit", "modify", "change", "patch", "set", "rename", "replace"},
		{"close", "resolve", "reopen", "update", "state", "status"},
		{"get", "fetch", "retrieve", "read", "show", "view", "display", "details", "inspect", "describe"},
		{"list", "enumerate", "all", "show", "browse"},
		{"search", "find", "query", "lookup", "look", "discover"},
		{"run", "execute", "start", "trigger", "launch", "invoke"},
		{"stop", "kill", "terminate", "halt", "cancel", "abort", "end"},
		{"send", "post", "publish", "deliver"},
		{"comment", "note", "reply", "discussion"},
		{"directory", "folder", "dir"},
		{"file", "path"},
		{"pr", "pull"},
		{"mr", "merge"},
		{"repo", "repository", "project"},
		{"kubernetes", "kubectl", "cluster"},
		{"db", "database"},
		{"doc", "documentation", "manual", "guide"},
		{"issue", "bug", "ticket", "problem", "error"},
		{"log", "output"},
		{"screenshot", "capture", "image", "picture"},
		{"navigate", "go", "visit", "goto"},
		{"webpage", "website", "site"},
		{"link", "associate", "relate", "connect"},
		{"rename", "move"},
		{"message", "chat", "text"},
		{"user", "member", "person", "people", "account"},
		{"secret", "credential", "key", "password", "token"},
		{"record", "capture"},
		{"video", "screencast"},
		{"cost", "price", "spend"},
		{"contact", "crm"},
		{"call", "meeting", "engagement"},
		{"javascript", "js", "script", "evaluate"},
		{"diff", "change"},
		{"approve", "accept"},
		{"workflow", "pipeline", "job", "build"},
		{"org", "organization"},
		{"vm", "virtual", "machine"},
		{"coordinates", "latitude", "longitude"},
		{"dark", "color", "scheme", "media"},
		{"research", "investigate"},
		{"paper", "article", "publication"},
		{"monitor", "watch", "track", "alert", "notify"},
		{"convert", "parse", "transform", "extract"},
		{"count", "statistics", "number", "total", "aggregate"},
		{"login", "authenticated", "whoami", "current", "self"},
		{"address", "street", "location", "place"},
		{"rollback", "rollout", "undo", "revert"},
	}
}

// relatedWeight is how much a related term counts against the query term itself.
const relatedWeight = 0.4

// buildRelated maps each stemmed word of groups to the other stems of its groups.
func buildRelated(groups [][]string) map[string][]string {
	m := map[string][]string{}
	for _, g := range groups {
		for _, a := range g {
			sa := stem(a)
			for _, b := range g {
				if sb := stem(b); sb != sa && !slices.Contains(m[sa], sb) {
					m[sa] = append(m[sa], sb)
				}
			}
		}
	}
	return m
}
