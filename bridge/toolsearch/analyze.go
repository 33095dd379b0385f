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
	if len(w) <= 3 || w == "news" || strings.ContainsFunc(w, unicode.IsDigit) {
		return w // news is no plural of new
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
	s = plainURLs(s)
	var prev string // the last word's stem, or the word itself if a stopword
	last := -1      // where in dst the last word's term is, or -1
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
		st := stemOf(w)
		key := st
		if key == "" {
			key = w
		}
		if one := phrase(prev, key); one != "" {
			if last >= 0 && last == len(dst)-1 {
				dst = dst[:last]
			}
			dst = append(dst, one)
			prev, last = "", -1
			return
		}
		prev, last = key, -1
		if st != "" {
			last = len(dst)
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
			prev, last = t, len(dst)
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

// withoutTools returns s with every word that is the name of a tool in tools other than own
// (lowercase, as written: letters, digits, _ and -) replaced by a space; s itself when it
// names none.
func withoutTools(s, own string, tools map[string]bool) string {
	var b []byte // nil until a name is found
	start := -1  // start of the current word, or -1
	last := 0    // s[:last] is in b
	for i := 0; i <= len(s); i++ {
		if i < len(s) && isNameByte(s[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start < 0 {
			continue
		}
		w := strings.ToLower(s[start:i])
		if w != own && tools[w] {
			b = append(append(b, s[last:start]...), ' ')
			last = i
		}
		start = -1
	}
	if b == nil {
		return s
	}
	return string(append(b, s[last:]...))
}

func isNameByte(c byte) bool {
	return c == '_' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// plainURLs rewrites each URL of s (scheme://host/path?query) as the word "url" and its
// host's name: "open https://www.example.com/a/b?c=d" reads "open url example". A URL's
// scheme, path and query are identifiers, not words of the task, and would match the
// example URLs of unrelated descriptions; that there is a URL, and whose, is what it says.
func plainURLs(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return s
	}
	var b strings.Builder
	for i >= 0 {
		start := i
		for start > 0 && isSchemeByte(s[start-1]) {
			start--
		}
		end := i + 3
		for end < len(s) && !isURLEnd(s[end]) {
			end++
		}
		host := s[i+3 : end]
		if j := strings.IndexAny(host, "/?#"); j >= 0 {
			host = host[:j]
		}
		if j := strings.LastIndexByte(host, '@'); j >= 0 {
			host = host[j+1:] // credentials are no words
		}
		if j := strings.IndexByte(host, ':'); j >= 0 {
			host = host[:j]
		}
		host = strings.TrimPrefix(host, "www.")
		if j := strings.LastIndexByte(host, '.'); j >= 0 {
			host = host[:j] // the top-level domain
		}
		b.WriteString(s[:start])
		b.WriteString(" url ")
		b.WriteString(host)
		b.WriteString(" ")
		s = s[end:]
		i = strings.Index(s, "://")
	}
	b.WriteString(s)
	return b.String()
}

func isSchemeByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'
}

func isURLEnd(c byte) bool {
	return c <= ' ' || strings.IndexByte("\"'<>()[]{}`", c) >= 0
}

// phrase returns the one term (stemmed) two consecutive words stand for, or "": phrasal
// verbs and idioms of software work whose words apart say something else ("look up",
// "clean up", "turn off", "how far"). a and b are the words' stems, or the words
// themselves if stopwords, so inflections count ("signed in", "cleaned up").
func phrase(a, b string) string {
	switch b {
	case "in", "out", "up", "down", "for", "at", "off", "on", "rid", "to", "back", "many", "far", "mail", "track", "do", "level", "call", "i", "into", "onc", "wrot", "chang":
	default:
		return ""
	}
	if a == "" {
		return ""
	}
	if w := phraseWord(a + " " + b); w != "" {
		return stem(w)
	}
	return ""
}

// phraseWord is the word a phrase (its first word stemmed) stands for, or "".
func phraseWord(p string) string {
	switch p {
	case "log in", "sign in":
		return "login"
	case "log out", "sign out":
		return "logout"
	case "sign up":
		return "signup"
	case "how many":
		return "count"
	case "how far":
		return "distance"
	case "roll back":
		return "rollback"
	case "set up":
		return "setup"
	case "look up":
		return "lookup"
	case "look for":
		return "search"
	case "look at":
		return "view"
	case "find out", "found out", "figur out":
		return "find"
	case "writ down":
		return "note"
	case "clean up":
		return "cleanup"
	case "shut down":
		return "shutdown"
	case "tear down", "get rid":
		return "delete"
	case "turn off", "switch off":
		return "disable"
	case "turn on", "switch on":
		return "enable"
	case "back up":
		return "backup"
	case "fill in", "fill out":
		return "fill"
	case "pull up", "bring up":
		return "show"
	case "spin up":
		return "create"
	case "kick off":
		return "start"
	case "carry out":
		return "run"
	case "go to":
		return "goto"
	case "clos to":
		return "near"
	case "zoom in", "zoom out":
		return "zoom"
	case "scroll down", "scroll up":
		return "scroll"
	case "check out":
		return "checkout"
	case "hook up":
		return "connect"
	case "print out":
		return "print"
	case "reach out":
		return "contact"
	case "keep track":
		return "track"
	case "to do":
		return "todo"
	case "e mail":
		return "email"
	case "sea level":
		return "elevation"
	case "api call":
		return "request"
	case "eye on":
		return "watch"
	case "thumb up":
		return "reaction"
	case "am i":
		return "whoami"
	case "jot down":
		return "note"
	case "sum up":
		return "summarize"
	case "dig into":
		return "investigate"
	case "at once":
		return "multiple"
	case "who wrot", "who chang":
		return "blame"
	}
	return ""
}

// actions reports which of four acts a term (stemmed) says, one bit each: create, delete,
// update, and read (get, list and search: one act, as a task that finds a thing may want any
// of them). A word of two senses ("open" an issue or a file, "wipe" and "wip") says none.
func actions(t string) uint8 {
	switch t {
	case "creat", "add", "new", "insert":
		return 1 << 0
	case "delet", "remov", "drop", "destroy", "eras", "purg", "trash", "discard", "ditch":
		return 1 << 1
	case "updat", "edit", "modify", "chang", "patch", "set", "renam", "replac", "adjust", "tweak", "alter":
		return 1 << 2
	case "get", "fetch", "retriev", "read", "show", "view", "display", "inspect", "describ", "grab", "list",
		"enumerat", "brows", "search", "find", "query", "lookup", "discover", "locat":
		return 1 << 3
	}
	return 0
}

// relatedGroups are words that say the same thing in tool descriptions: a query word also
// matches the others of its groups, at relatedWeight. They are the everyday vocabulary of
// software operations and objects, not any server's tool names.
func relatedGroups() [][]string {
	return [][]string{
		{"create", "add", "new", "make", "insert", "open"},
		{"delete", "remove", "drop", "destroy", "erase", "purge", "trash", "wipe", "discard", "ditch"},
		{"update", "edit", "modify", "change", "patch", "set", "rename", "replace", "adjust", "tweak", "alter"},
		{"close", "resolve", "reopen", "update", "state", "status"},
		{"get", "fetch", "retrieve", "read", "show", "view", "display", "details", "inspect", "describe", "grab"},
		{"list", "enumerate", "all", "show", "browse"},
		{"search", "find", "query", "lookup", "look", "discover", "locate"},
		{"run", "execute", "start", "trigger", "launch", "invoke"},
		{"stop", "kill", "terminate", "halt", "cancel", "abort", "end", "shutdown"},
		{"send", "post", "publish", "deliver", "announce", "broadcast", "notify"},
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
		// Everyday words for the same things, by domain, one sense a group.
		// Files and settings.
		{"save", "write", "store", "persist"},
		{"metadata", "info", "stat", "properties"},
		{"tree", "hierarchy", "structure"},
		{"inside", "content", "contents"},
		{"setting", "config", "configuration", "preference"},
		{"env", "environment"},
		{"command", "shell", "terminal", "bash", "cmd", "cli"},
		{"process", "program"},
		{"install", "setup"},
		{"upgrade", "bump"},
		// Code hosting.
		{"fork", "copy", "clone"},
		{"code", "source", "codebase"},
		{"release", "version", "tag"},
		{"history", "log", "commit"},
		{"ci", "pipeline", "build"},
		{"assign", "assignee", "owner"},
		{"label", "tag", "category"},
		{"fix", "repair", "solve", "resolve"},
		{"fail", "failure", "broken", "crash", "break"},
		{"done", "complete", "finish", "close"},
		{"latest", "recent", "last", "newest"},
		{"review", "feedback"},
		// Browser.
		{"popup", "dialog", "modal"},
		{"click", "tap"},
		{"type", "fill", "enter", "input"},
		{"field", "input", "box", "textbox", "form"},
		{"tab", "window"},
		{"hover", "mouseover"},
		{"wait", "pause", "sleep", "delay"},
		{"network", "traffic"},
		{"resize", "viewport", "dimension"},
		{"select", "choose", "pick", "dropdown"},
		{"upload", "attach"},
		{"url", "link", "href"},
		{"web", "internet", "online"},
		{"scrape", "crawl"},
		{"performance", "slow", "speed", "latency"},
		{"emulate", "simulate", "mimic"},
		{"photo", "picture", "image", "screenshot"},
		// Data.
		{"row", "record", "entry", "item"},
		{"property", "attribute", "field"},
		{"schema", "definition", "structure"},
		// Messaging.
		{"channel", "room", "conversation"},
		{"reply", "respond", "answer", "thread"},
		{"reaction", "emoji"},
		{"message", "dm", "msg"},
		{"profile", "bio"},
		{"teammate", "colleague", "coworker", "member", "user"},
		{"team", "member"},
		// Calendars.
		{"schedule", "calendar", "agenda"},
		{"meeting", "appointment"},
		{"invite", "attendee", "guest", "participant"},
		{"available", "availability", "free", "busy"},
		// Maps.
		{"direction", "route", "drive", "driving", "trip", "commute", "travel"},
		{"distance", "far", "mile", "km", "kilometer"},
		{"elevation", "altitude", "height"},
		{"geocode", "coordinates", "gps", "lat", "lng"},
		{"nearby", "near", "around", "vicinity"},
		{"place", "business", "shop", "restaurant", "cafe", "venue"},
		{"rating", "review"},
		// Memory.
		{"remember", "memory", "memorize", "recall"},
		{"forget", "delete", "remove", "uninstall"},
		{"relation", "relationship", "connection", "link"},
		{"fact", "observation"},
		// Cloud.
		{"instance", "vm", "compute"},
		{"bucket", "storage", "blob"},
		{"container", "docker"},
		{"deploy", "ship", "release"},
		{"scale", "replica"},
		{"permission", "role", "access", "rbac"},
		{"quota", "limit", "usage"},
		{"cost", "price", "pricing", "bill", "billing", "expense", "expensive", "cheap"},
		{"metric", "telemetry", "measurement"},
		{"rerun", "retry", "restart", "rebuild"},
		// Payments.
		{"payment", "charge", "pay", "transaction"},
		{"refund", "reimburse"},
		{"invoice", "bill", "receipt"},
		{"customer", "client", "buyer"},
		{"subscription", "plan", "recurring"},
		// Docs and notes.
		{"summary", "summarize", "overview"},
		{"translate", "translation"},
		{"markdown", "md"},
		// Time.
		{"time", "clock"},
		{"timezone", "tz"},
		// Asking why.
		{"why", "cause", "reason"},
		{"diagnose", "analyze", "troubleshoot", "debug"},
		{"check", "verify", "validate"},
		// More everyday objects.
		{"email", "mail", "inbox"},
		{"weather", "forecast", "temperature"},
		{"spreadsheet", "sheet", "excel"},
		{"chart", "plot", "visualize", "diagram"},
		{"zip", "archive", "compress"},
		{"star", "favorite", "bookmark"},
		{"subscribe", "follow"},
		{"today", "tomorrow", "yesterday", "date"},
		{"currency", "money"},
		{"product", "sku"},
		{"order", "purchase", "buy"},
		{"coupon", "discount", "promo"},
		{"keyboard", "keystroke", "hotkey", "shortcut"},
		{"reload", "refresh"},
		{"back", "previous"},
		{"print", "pdf"},
		{"dns", "domain"},
		{"certificate", "cert", "ssl", "tls"},
		{"health", "healthy", "uptime", "outage"},
		{"incident", "outage", "alarm"},
		{"remember", "knowledge"},
		{"grep", "search"},
		{"allow", "permit", "permission"},
		{"priority", "urgent", "severity"},
		{"sprint", "iteration", "milestone"},
		{"contributor", "author", "committer"},
		{"echo", "repeat"},
		{"variable", "var"},
		{"db", "sql"},
		{"table", "collection"},
		{"meeting", "event"},
		{"remind", "reminder", "task", "todo"},
		{"note", "memo", "notebook"},
		{"transcript", "caption", "subtitle"},
		{"song", "music"},
		{"function", "lambda", "serverless"},
		{"migration", "migrate"},
		{"explain", "describe"},
		{"sprint", "cycle"},
		{"export", "download", "dump"},
		{"import", "load", "ingest"},
		{"multiple", "several", "batch", "bulk"},
		{"draft", "wip"},
		{"paragraph", "block"},
		{"lint", "linter"},
		{"blame", "annotate"},
		{"file", "readme", "changelog", "license", "dockerfile", "makefile"},
		// Words the phrases stand for.
		{"logout", "signout"},
		{"signup", "register", "registration"},
		{"cleanup", "clean", "prune"},
		{"disable", "deactivate"},
		{"enable", "activate"},
		{"backup", "snapshot"},
		{"todo", "task"},
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
