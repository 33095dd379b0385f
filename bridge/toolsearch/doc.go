// Package toolsearch ranks tools for a natural-language task: a deterministic lexical index,
// so a model that sees only a search tool (deferred loading, see bridge/provider) finds the
// tool it needs among hundreds.
//
//	ix := toolsearch.New(docs) // one Document per tool
//	hits := ix.Search("open an issue in my GitHub repo", 5)
//
// Package bridge builds the documents from its tools (Set.Search, Tools.Search); this
// package knows nothing of MCP and can index any tool list.
//
// # Ranking
//
// Text is split into words at every character that is not a letter or digit and inside
// words at camelCase and letter-digit boundaries (get_pull_request, list-pages,
// getUserProfile, HTTPServer, page2); a word that case split is also kept whole (GitHub →
// git, hub, github). Words are lowercased, stopwords dropped, and a light stemmer folds
// plurals, -ing, -ed and a final e (issues → issu, created → creat; news stays news).
// Two-word phrasal verbs and idioms of software work, whose words apart say something
// else, become one term whatever their inflections ("logged in" → login, "how many" →
// count, "look for" → search, "cleaned up" → cleanup, "turn off" → disable, "close to" →
// near, "sea level" → elevation, "api calls" → request, "at once" → multiple). A URL reads
// as the word url and its host's name ("https://www.example.com/a/b?c" → url example): its
// path and query are identifiers, and would match the example URLs of unrelated
// descriptions. A description's mention of another indexed tool by a name that cannot be a
// word (snake_case, kebab-case: "call browser_snapshot first") is left out of its terms: it
// says what that tool does, not this one (the exact words below still read it as written).
//
// Documents are scored with BM25F (k1 1.2): each field has a weight and a length
// normalisation — name 2, title 2, description 1, parameter names 0.6, parameter
// descriptions (with their enum values) 0.4, server 2.5, server instructions 0.15 — so
// "merge" in a tool's name counts twice "merge" in a description (the name coverage below
// rewards the name again), and a server's instructions, shared by all its tools, barely
// separate them. On top of BM25F:
//   - Exact words: each query word as written (not stemmed, not split by case) counts again,
//     at 0.25, where a tool's description has it so (the description's BM25F): a word as
//     the task writes it is better evidence than a stem it shares with other words
//     ("pages", "paging" → pag). Names are left out: the name coverage rewards them already.
//   - Related words: each query word also matches a table of synonyms of software work
//     (create/add/new, delete/remove, folder/directory, ...) and of the everyday words
//     people use for the things and acts of common tool domains — files, code hosting,
//     browsers, data, messaging, calendars, maps, memory, cloud, payments, notes, time
//     (drive/route/directions, popup/dialog, copy/fork, remember/knowledge, shutdown/kill,
//     several/multiple) — one sense a group: a word of two senses is in a group for each,
//     and a word whose senses would join unrelated tools is in none ("local": a local file
//     is no nearby place). They count 0.4 of the word's weight, and indexed words it is a
//     prefix of (four bytes or more: "fail" → failure) 0.3 — 0.05 when the index knows the
//     word itself, since a longer word is then likely another sense ("react" → reaction),
//     and never for a compound of the word and another indexed word ("event" →
//     eventhub). An expansion is never weighed by a higher IDF than its word: a common
//     word does not become rare evidence through a synonym.
//     The expansions of one word are alternatives, not joint evidence: in a document the
//     best of them counts whole and each other half, so a description that says create,
//     new and add is not three matches of "insert".
//   - Associations learned from the tools: a specific query word (in at most 2 % of the
//     documents, or 3) also matches the words of the names of at least half the tools that
//     use it, at 0.3 times that share times their normalised PMI (how much more often than
//     chance the two meet in the catalogue), so tools named alike match a word only one
//     description uses, and a generic name word (get, list) is brought at next to nothing.
//   - Weak words: words that carry no intent ("take", "make", "go", "long", "own") and
//     numbers, which are arguments ("5 replicas", "10 Downing Street"), count a quarter
//     and bring no related, prefix or associated words: they cannot decide a ranking alone.
//   - Name coverage is evidence weighed with the rest: the IDF-weighted share of a tool's
//     name the query covers, times 5, times the share of the query's evidence the name's
//     words carry (whole from 35 % on). "merge pull request" prefers merge_pull_request
//     over create_pull_request, but one incidental word that is a whole short name
//     ("pricing", "take" of take_snapshot) adds little to a longer query.
//   - Server mentions: a word of a server's name that few other servers' tools use
//     ("GitHub", "Notion") names that server. A query that names servers scales the score
//     of every other server's tools by 0.3 (a product named is strong evidence of
//     intent), and the mention itself scores alike for every tool of the named server (a
//     description that repeats "GitHub" is no better a match).
//   - Acts: a tool whose name says one of four acts — create, delete, update, read (get,
//     list and search are one act) — that the query asks for none of, when it asks for
//     one, scores 0.9: "read the README of a repository" is no task for
//     create_repository, though its name covers "repository". A word of two senses
//     ("open") says no act.
//   - Server prior: a tool's score is scaled up by 0.3 times the share of the query's
//     evidence (IDF) that its server's tools, between them, have words of — each word of
//     the query counted once a server, weak words and expansions left out — so among tools
//     that match alike, the one whose server covers the rest of the task comes first
//     ("comment on the pull request": the code host's comment tool, not the tracker's).
//
// Ties keep document order. Scores are sums in a fixed order, so the same documents and
// query always give the same hits in the same order.
//
// # Quality and speed
//
// BENCHMARKS.md reports recall@1, recall@5 and MRR on testdata/queries.json (153 tasks over
// the 450 tools of the compatibility sweep, testdata/sweep.json) and queries-heldout.json,
// the tuning sets, next to plain BM25 over names and descriptions, and the query latency
// over 1,000 tools (BenchmarkSearch) and its 99th percentile over 1,000 and 10,000
// (BenchmarkSearchP99). A search allocates little beyond its hits: its per-document sums
// are a buffer the index reuses, and only the k best hits are kept. TestQuality holds the
// index to recall@5 ≥ 0.95 and recall@1 ≥ 0.85 on the main set. testdata/eval-heldout.json
// is the held-out evaluation, never tuned on: 234 tasks in the words people use over the
// sweep's tools and over 13 servers no tuning used (testdata/unseen.json); TestHeldOut -v
// reports it. testdata/dev.json is the development set to tune on: 176 tasks written from
// the tool definitions alone over the same tools; TestDev -v reports it (-dev.tasks lists
// its misses). A change is kept when it improves the development set and makes no held-out
// aggregate worse, judged once per change, never on the held-out tasks.
//
// # Untrusted text
//
// Every field of a Document comes from a server. The index only tokenises it: each field is
// cut to 32 KiB, each word to 40 bytes, parameters to 200 per document (Params also stops
// four levels deep), and a query to 64 words, so a hostile server can make its own tools
// match more queries but cannot make indexing or search slow.
package toolsearch
