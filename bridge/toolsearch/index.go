package toolsearch

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/ttalk/mcpbridge/internal/redact"
)

// Param is one parameter of a tool: its name and description (see Params).
type Param struct {
	Name        string
	Description string
}

// Document is what the index knows of one tool. Every field is untrusted text from a server
// and is only ever tokenised; none is interpreted.
type Document struct {
	// Name is the tool's model-visible name, returned in Hit.Name.
	Name string
	// Title is the tool's display title, if any.
	Title string
	// Description is the tool's description.
	Description string
	// Params are the tool's parameters (Params extracts them from an inputSchema).
	Params []Param
	// Server names the server the tool comes from: its ID, and its name if it differs.
	Server string
	// Instructions are the server's instructions, if any. They describe every tool of the
	// server, so they weigh little.
	Instructions string
}

// Hit is one ranked tool.
type Hit struct {
	// Doc is the document's position in the slice given to New.
	Doc int
	// Name is the document's Name.
	Name string
	// Score is the ranking score: higher is better; only the order means anything.
	Score float64
}

// fields of a document, each with its weight and length normalisation (BM25F).
type field int

const (
	fieldName field = iota
	fieldTitle
	fieldDescription
	fieldParamName
	fieldParamDescription
	fieldServer
	fieldInstructions
	numFields
)

// weight and b (length normalisation) of each field: the name says most about what a tool
// does, the server's name who it does it for; parameters and instructions add little. The
// name weighs only twice the description: the name coverage (nameBonus) rewards it again,
// and a task said in everyday words is matched by descriptions more than by names.
func (f field) weight() (weight, b float64) {
	switch f {
	case fieldName:
		return 2, 0.3
	case fieldTitle:
		return 2, 0.3
	case fieldDescription:
		return 1, 0.75
	case fieldParamName:
		return 0.6, 0.5
	case fieldParamDescription:
		return 0.4, 0.75
	case fieldServer:
		return 2.5, 0
	}
	return 0.15, 0.75 // fieldInstructions
}

const (
	k1 = 1.2
	// prefixWeight is how much an indexed term that a query term is the prefix of counts
	// ("fail" → "failure", "kube" → "kubectl"), for query terms of minPrefix bytes or more,
	// at most maxPrefixTerms of them.
	prefixWeight   = 0.3
	minPrefix      = 4
	maxPrefixTerms = 16
	// knownPrefixWeight is prefixWeight for a query term the index knows itself.
	knownPrefixWeight = 0.05
	// A query word in at most max(assocMinDF, assocShare of all) documents brings each word
	// of the names of at least assocMinShare of them, at assocWeight times that share.
	assocMinDF    = 3
	assocShare    = 0.02
	assocMinShare = 0.5
	assocWeight   = 0.3
	// weakWeight is the weight of a query word that carries no intent of its own (noIntent: weak words and numbers).
	weakWeight = 0.25
	// mentionShare: a server's name term is a mention when at most this share of the other
	// servers' documents have it.
	mentionShare = 0.03
	// maxMentioned: a word in the names of more servers than this ("mcp", "server") names
	// none of them.
	maxMentioned = 3
	// otherServer scales the score of a tool whose server the query does not name when it
	// names some server.
	otherServer = 0.3
	// serverCover scales a tool's score up by this times the share of the query's evidence
	// (IDF) that its server's tools, together, have words of.
	serverCover = 0.3
	// otherAction scales the score of a tool whose name says an act (create, delete,
	// update, read: actions) the query asks for none of, when the query asks for one.
	otherAction = 0.9
	// nameBonus rewards a tool whose name the query covers: the share of the name's terms
	// the query has, times nameBonus, is added to the score.
	nameBonus = 5.0
	// nameQueryShare: the name bonus is whole when the name's words carry this share of the
	// query's evidence (IDF), and shrinks in proportion below it.
	nameQueryShare = 0.35
	// restWeight: of a query word's related and prefix expansions that match one document,
	// the best counts whole and each other this share of its own.
	restWeight = 0.5
	// nameMatchScale: a query term of weight w covers min(1, w×nameMatchScale) of a name
	// term (a related term 0.7).
	nameMatchScale = 1.75
	// exactWeight is how much a query word counts again where a tool's description has it
	// as written (BM25 over the unstemmed words): an exact word is better evidence than a
	// stem shared with other words.
	exactWeight = 0.25
	// maxDocText bounds the text of one document field that is indexed.
	maxDocText = 32 << 10
	// maxQueryTerms bounds the terms of one query that are looked up.
	maxQueryTerms = 64
)

// Index ranks documents for natural-language queries. It is built once by New, is
// immutable and safe for concurrent use. The same documents and query always give the same
// hits in the same order.
type Index struct {
	names     []string
	nameTerms [][]string         // distinct stems of each document's name, less its server's mentions
	nameActs  []uint8            // the acts (actions) each document's nameTerms say
	nameSum   []float64          // the sum of the IDFs of each document's nameTerms
	nameDocs  map[string][]int32 // each term of nameTerms → the documents whose nameTerms have it
	postings  map[string]*postingList
	exact     map[string]*postingList // each word of descriptions as written: not stemmed, not split by case
	vocab     []string                // every indexed term, sorted, for prefix matches
	related   map[string][]string

	scratch sync.Pool // *[]float64 of 4 × len(names) + 2 × servers, zero: a search's sums (Search)

	server   []int            // each document's server, an index into servers
	servers  int              // number of distinct Document.Server values
	mentions map[string][]int // a term that names servers (and few other tools) → those servers
}

// fieldTerms are one document's terms, per field.
type fieldTerms [numFields][]string

type postingList struct {
	idf  float64
	docs []posting
}

type posting struct {
	doc int32
	tf  float32 // BM25F pseudo term frequency: weighted, length-normalised, summed over fields
}

// New indexes docs. Documents keep their positions (Hit.Doc); names need not be unique.
func New(docs []Document) *Index {
	ix := &Index{
		names:     make([]string, len(docs)),
		nameTerms: make([][]string, len(docs)),
		postings:  map[string]*postingList{},
		related:   buildRelated(relatedGroups()),
	}
	all := make([]fieldTerms, len(docs))
	serverID := map[string]int{}
	ix.server = make([]int, len(docs))
	stems := map[string]string{} // each word's stem, once per index
	// Every tool of a server has its server's name and instructions: split each text once.
	split := map[string][]string{}
	shared := func(text string) []string {
		ts, ok := split[text]
		if !ok {
			ts = terms(nil, redact.ClipMark(text, maxDocText, ""), nil, stems)
			split[text] = ts
		}
		return ts
	}
	var total [numFields]float64
	// The names of the tools that cannot be words (read_file, list-pages): a description
	// that names another tool ("use browser_snapshot first") says what that tool does.
	tools := map[string]bool{}
	for _, d := range docs {
		if strings.ContainsAny(d.Name, "_-") {
			tools[strings.ToLower(d.Name)] = true
		}
	}
	for i, d := range docs {
		ix.names[i] = d.Name
		ft := &all[i]
		ft[fieldName] = terms(nil, redact.ClipMark(d.Name, maxDocText, ""), nil, stems)
		ft[fieldTitle] = terms(nil, redact.ClipMark(d.Title, maxDocText, ""), nil, stems)
		desc := withoutTools(redact.ClipMark(d.Description, maxDocText, ""), strings.ToLower(d.Name), tools)
		ft[fieldDescription] = terms(nil, desc, nil, stems)
		var pn, pd []string
		for j, p := range d.Params {
			if j >= maxParams {
				break
			}
			pn = terms(pn, redact.ClipMark(p.Name, maxDocText, ""), nil, stems)
			pd = terms(pd, redact.ClipMark(p.Description, maxDocText, ""), nil, stems)
		}
		ft[fieldParamName], ft[fieldParamDescription] = pn, pd
		ft[fieldServer] = shared(d.Server)
		id, ok := serverID[d.Server]
		if !ok {
			id = len(serverID)
			serverID[d.Server] = id
		}
		ix.server[i] = id
		ft[fieldInstructions] = shared(d.Instructions)
		for f := range numFields {
			total[f] += float64(len(ft[f]))
		}
		names := slices.Clone(ft[fieldName])
		slices.Sort(names)
		ix.nameTerms[i] = slices.Compact(names)
	}
	var avg [numFields]float64
	for f := range numFields {
		avg[f] = max(total[f]/float64(max(len(docs), 1)), 1)
	}
	tf := map[string]float64{}
	var order []string
	for i := range all {
		clear(tf)
		order = order[:0]
		for f := range numFields {
			ts := all[i][f]
			if len(ts) == 0 {
				continue
			}
			w, b := f.weight()
			norm := w / (1 - b + b*float64(len(ts))/avg[f])
			for _, t := range ts {
				if _, seen := tf[t]; !seen {
					order = append(order, t)
				}
				tf[t] += norm
			}
		}
		for _, t := range order { // first-seen order: postings never depend on map order
			pl := ix.postings[t]
			if pl == nil {
				pl = &postingList{}
				ix.postings[t] = pl
			}
			pl.docs = append(pl.docs, posting{doc: int32(i), tf: float32(tf[t])})
		}
	}
	ix.exact = exactPostings(docs)
	n := float64(len(docs))
	for t, pl := range ix.postings {
		df := float64(len(pl.docs))
		pl.idf = math.Log(1 + (n-df+0.5)/(df+0.5))
		ix.vocab = append(ix.vocab, t)
	}
	slices.Sort(ix.vocab)
	ix.servers = len(serverID)
	ix.mentions = serverMentions(ix, all)
	for i, nt := range ix.nameTerms {
		// A name's own server prefix (slack_, hubspot-, gitlab__) is covered by the server
		// prior, not by the name bonus.
		ix.nameTerms[i] = slices.DeleteFunc(nt, func(t string) bool { return slices.Contains(ix.mentions[t], ix.server[i]) })
	}
	ix.nameActs = make([]uint8, len(docs))
	for i, nt := range ix.nameTerms {
		for _, t := range nt {
			ix.nameActs[i] |= actions(t)
		}
	}
	ix.nameSum = make([]float64, len(docs))
	ix.nameDocs = map[string][]int32{}
	for i, nt := range ix.nameTerms {
		for _, t := range nt {
			idf := ix.postings[t].idf
			ix.nameSum[i] += idf
			ix.nameDocs[t] = append(ix.nameDocs[t], int32(i))
		}
	}
	return ix
}

// exactPostings indexes the words of each document's description as written
// (lowercased, stopwords dropped), with the description's BM25F term frequency, and IDF.
// Names are left out: the name coverage rewards their words already.
func exactPostings(docs []Document) map[string]*postingList {
	out := map[string]*postingList{}
	lens := make([]float64, len(docs))
	var avg float64
	for i, d := range docs {
		words(plainURLs(redact.ClipMark(d.Description, maxDocText, "")), func(run string, _ []string) {
			if isStopword(run) {
				return
			}
			lens[i]++
			pl := out[run]
			if pl == nil {
				pl = &postingList{}
				out[run] = pl
			}
			if n := len(pl.docs); n > 0 && pl.docs[n-1].doc == int32(i) {
				pl.docs[n-1].tf++ // a count until every length is known
			} else {
				pl.docs = append(pl.docs, posting{doc: int32(i), tf: 1})
			}
		})
		avg += lens[i]
	}
	avg = max(avg/float64(max(len(docs), 1)), 1)
	w, b := fieldDescription.weight()
	n := float64(len(docs))
	for _, pl := range out {
		df := float64(len(pl.docs))
		pl.idf = math.Log(1 + (n-df+0.5)/(df+0.5))
		for j := range pl.docs {
			p := &pl.docs[j]
			p.tf *= float32(w / (1 - b + b*lens[p.doc]/avg))
		}
	}
	return out
}

// serverMentions finds the terms that name servers: terms of Server fields that the names,
// titles and descriptions of at most mentionShare of the other servers' tools use. A query
// with such a term is about those servers ("GitHub", "GitLab" for two servers, "Notion");
// generic words in server names ("search" of brave-search) are not mentions, nor are
// numbers or words in the names of more than maxMentioned servers. Instructions and parameters are left out of the count: one server's instructions
// naming another product would otherwise count once per tool.
func serverMentions(ix *Index, all []fieldTerms) map[string][]int {
	owners := map[string][]int{}
	for i := range all {
		for _, t := range all[i][fieldServer] {
			if !isNumber(t) && !slices.Contains(owners[t], ix.server[i]) {
				owners[t] = append(owners[t], ix.server[i])
			}
		}
	}
	// One pass over the documents' names, titles and descriptions counts, for each owner
	// term, the documents of other servers that use it.
	perServer := map[int]int{}
	elsewhere := map[string]int{}
	seen := map[string]int{} // term → last document counted, plus one
	for i := range all {
		perServer[ix.server[i]]++
		for _, f := range []field{fieldName, fieldTitle, fieldDescription} {
			for _, t := range all[i][f] {
				servers, ok := owners[t]
				if !ok || seen[t] == i+1 || slices.Contains(servers, ix.server[i]) {
					continue
				}
				seen[t] = i + 1
				elsewhere[t]++
			}
		}
	}
	out := map[string][]int{}
	for t, servers := range owners {
		others := len(all)
		for _, s := range servers {
			others -= perServer[s]
		}
		if len(servers) <= maxMentioned && float64(elsewhere[t]) <= mentionShare*float64(others) {
			slices.Sort(servers)
			out[t] = servers
		}
	}
	return out
}

// knows reports whether term is indexed.
func (ix *Index) knows(term string) bool {
	_, ok := ix.postings[term]
	return ok
}

// Len is the number of documents.
func (ix *Index) Len() int { return len(ix.names) }

// Search returns the k best documents for query, best first; fewer when fewer match, none
// for a query without a meaningful word. Ties keep document order. k <= 0 means every match.
func (ix *Index) Search(query string, k int) []Hit {
	qt := ix.queryTerms(terms(nil, redact.ClipMark(query, maxDocText, ""), ix.knows, nil))
	if len(qt) == 0 || len(ix.names) == 0 {
		return nil
	}
	named := make([]bool, ix.servers) // servers the query names
	var naming bool
	for _, q := range qt {
		if q.weight < 1 {
			continue
		}
		for _, s := range ix.mentions[q.term] {
			named[s], naming = true, true
		}
	}
	n := len(ix.names)
	// One buffer, zero, reused by the next search: each document's score, the sum and the
	// best of the expansions of the query word being summed, how much of its name the
	// query covers (below), and for each server the evidence of the query's words its
	// tools have and the last word counted (plus one).
	bp, _ := ix.scratch.Get().(*[]float64)
	if bp == nil {
		b := make([]float64, 4*n+2*ix.servers)
		bp = &b
	}
	buf := *bp
	acc, sum, most, covered := buf[:n:n], buf[n:2*n:2*n], buf[2*n:3*n:3*n], buf[3*n:4*n:4*n]
	cover, counted := buf[4*n:4*n+ix.servers:4*n+ix.servers], buf[4*n+ix.servers:]
	defer func() {
		clear(acc) // sum and most are cleared as they are used
		clear(covered)
		clear(cover)
		clear(counted)
		ix.scratch.Put(bp)
	}()
	var queryIDF float64 // the evidence the query's own words can give, for the name bonus
	// score yields q's evidence in each document that has it.
	score := func(q queryTerm, yield func(doc int32, v float64)) {
		pl, ok := ix.postings[q.term]
		if !ok {
			return
		}
		idf := min(pl.idf, q.idfCap)
		mention := q.weight >= 1 && len(ix.mentions[q.term]) > 0
		for _, p := range pl.docs {
			tf := float64(p.tf)
			if mention && named[ix.server[p.doc]] {
				// Every tool of a named server matches the name alike: how often its
				// description repeats "GitHub" says nothing about the task.
				tf = 1
			}
			yield(p.doc, q.weight*idf*tf*(k1+1)/(k1+tf))
		}
	}
	add := func(doc int32, v float64) { acc[doc] += v }
	var alts []int // the expansions, in order of their word, then of term
	for i, q := range qt {
		if q.own {
			if pl, ok := ix.postings[q.term]; ok {
				queryIDF += min(q.weight, 1) * min(pl.idf, q.idfCap)
				if q.weight >= 1 {
					// The servers whose tools have the word: each counts it once.
					for _, p := range pl.docs {
						if s := ix.server[p.doc]; counted[s] != float64(i+1) {
							counted[s] = float64(i + 1)
							cover[s] += pl.idf
						}
					}
				}
			}
		}
		if q.from >= 0 {
			alts = append(alts, i)
			continue
		}
		score(q, add)
	}
	// The expansions of one query word are alternatives, not joint evidence ("insert" →
	// create, add, new): in each document the best of them counts whole and each other
	// restWeight of its own. Documents are summed in the order first met.
	slices.SortStableFunc(alts, func(a, b int) int { return cmp.Compare(qt[a].from, qt[b].from) })
	if len(alts) > 0 {
		var touched []int32
		alt := func(doc int32, v float64) {
			if sum[doc] == 0 {
				touched = append(touched, doc)
			}
			sum[doc] += v
			most[doc] = max(most[doc], v)
		}
		for i := 0; i < len(alts); {
			from := qt[alts[i]].from
			for ; i < len(alts) && qt[alts[i]].from == from; i++ {
				score(qt[alts[i]], alt)
			}
			for _, d := range touched {
				acc[d] += most[d] + restWeight*(sum[d]-most[d])
				sum[d], most[d] = 0, 0
			}
			touched = touched[:0]
		}
	}
	// The query's words as written, again where a description has them so.
	var said []string
	words(plainURLs(redact.ClipMark(query, maxDocText, "")), func(run string, _ []string) {
		if len(said) < maxQueryTerms && !isStopword(run) && !noIntent(stem(run)) && !slices.Contains(said, run) {
			said = append(said, run)
		}
	})
	for _, w := range said {
		pl, ok := ix.exact[w]
		if !ok {
			continue
		}
		for _, p := range pl.docs {
			tf := float64(p.tf)
			acc[p.doc] += exactWeight * pl.idf * tf * (k1 + 1) / (k1 + tf)
		}
	}
	// The share of each document's name the query covers: each name term's IDF times how
	// much the query says it, summed in term order (qt is sorted, as nameTerms are) over
	// the documents whose names have the term.
	for _, q := range qt {
		m := nameMatch(q.weight)
		if m <= 0 {
			continue
		}
		for _, d := range ix.nameDocs[q.term] {
			covered[d] += ix.postings[q.term].idf * m
		}
	}
	var acts uint8 // the acts the query asks for
	for _, q := range qt {
		if q.own && q.weight >= 1 {
			acts |= actions(q.term)
		}
	}
	top := topHits{k: k}
	if k > 0 {
		top.hits = make([]Hit, 0, min(k, n))
	}
	for i, s := range acc {
		if s <= 0 {
			continue
		}
		if acts != 0 && ix.nameActs[i] != 0 && acts&ix.nameActs[i] == 0 {
			// The tool's name says another act than any the task asks for: "read the
			// README of a repository" is no task for create_repository.
			s *= otherAction
		}
		if ix.nameSum[i] > 0 && queryIDF > 0 {
			// The name bonus is evidence like the rest: the share of the name the query
			// covers times the share of the query the name accounts for, so one incidental
			// word that happens to be a whole short name ("take", "pricing") adds little.
			c := covered[i]
			s += nameBonus * (c / ix.nameSum[i]) * min(1, c/(nameQueryShare*queryIDF))
		}
		if naming && !named[ix.server[i]] {
			s *= otherServer
		}
		if queryIDF > 0 {
			// A server prior: the tools of a server whose tools between them have more of
			// the query's words are likelier, as a task's words spread over its server.
			s *= 1 + serverCover*cover[ix.server[i]]/queryIDF
		}
		top.add(Hit{Doc: i, Name: ix.names[i], Score: s})
	}
	return top.sorted()
}

// before orders hits: higher score first, then document order. It is a total order, so
// any sort gives one result.
func before(a, b Hit) int {
	switch {
	case a.Score > b.Score:
		return -1
	case a.Score < b.Score:
		return 1
	}
	return a.Doc - b.Doc
}

// topHits collects the k best hits (every hit for k <= 0) as they are found, without holding
// the others: for k > 0 a heap whose root is the worst of the k kept.
type topHits struct {
	k    int
	hits []Hit
}

// add offers x.
func (b *topHits) add(x Hit) {
	switch {
	case b.k <= 0 || len(b.hits) < b.k:
		b.hits = append(b.hits, x)
		if len(b.hits) == b.k {
			for i := b.k/2 - 1; i >= 0; i-- {
				b.down(i)
			}
		}
	case before(x, b.hits[0]) < 0:
		b.hits[0] = x
		b.down(0)
	}
}

// down restores the heap below i.
func (b *topHits) down(i int) {
	h := b.hits
	worse := func(i, j int) bool { return before(h[i], h[j]) > 0 }
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && worse(r, l) {
			m = r
		}
		if !worse(m, i) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// sorted returns the hits kept, best first.
func (b *topHits) sorted() []Hit {
	slices.SortFunc(b.hits, before)
	return b.hits
}

type queryTerm struct {
	term   string
	weight float64
	// idfCap bounds the term's IDF: an expansion is never rarer, so never stronger, than
	// the query word it came from (when the index knows that word).
	idfCap float64
	own    bool // the query's own word, not an expansion
	// from is the query word (its position) of which the term is a related or prefix
	// expansion, or -1: the query's own words and associations add up, the alternatives
	// of one word do not.
	from int32
}

// queryTerms weighs a query's terms: each distinct term at 1 (a term said twice counts
// once more), a word that carries no intent of its own (isWeak: "take", "make", "go",
// "long") or a number (an argument: "5 replicas") at weakWeight and without expansions; each related term of a word at
// relatedWeight, and each indexed term a word is a prefix of at prefixWeight, or at
// knownPrefixWeight when the index knows the word itself (a longer word is then likely
// another sense: "react" → reaction) — never a compound of the word and another indexed
// word ("event" → eventhub). An expansion's IDF is capped at its word's. Sorted by term,
// so the sums are made in one order.
func (ix *Index) queryTerms(ts []string) []queryTerm {
	if len(ts) > maxQueryTerms {
		ts = ts[:maxQueryTerms]
	}
	type weighed struct {
		weight, idfCap float64
		own            bool
		from           int32
	}
	w := map[string]*weighed{}
	for _, t := range ts {
		x := w[t]
		if x == nil {
			x = &weighed{idfCap: math.Inf(1), own: true, from: -1}
			w[t] = x
		}
		if !x.own { // an expansion of an earlier word, said itself too
			x.weight, x.idfCap, x.own, x.from = 0, math.Inf(1), true, -1
		}
		if noIntent(t) {
			x.weight = weakWeight
		} else {
			x.weight++
		}
	}
	var from int32 // the word being expanded, or -1
	raise := func(t string, weight, idfCap float64) {
		x := w[t]
		if x == nil {
			w[t] = &weighed{weight: weight, idfCap: idfCap, from: from}
			return
		}
		if !x.own && x.weight < weight {
			x.weight, x.idfCap, x.from = weight, idfCap, from
		}
	}
	for _, t := range ts {
		if noIntent(t) {
			continue
		}
		from = int32(slices.Index(ts, t)) // a word said twice is one word
		idfCap := math.Inf(1)
		pl, known := ix.postings[t]
		if known {
			idfCap = pl.idf
		}
		for _, r := range ix.related[t] {
			raise(r, relatedWeight, idfCap)
		}
		if len(t) >= minPrefix {
			pw := prefixWeight
			if known {
				pw = knownPrefixWeight
			}
			i, _ := slices.BinarySearch(ix.vocab, t)
			for n := 0; i < len(ix.vocab) && n < maxPrefixTerms && strings.HasPrefix(ix.vocab[i], t); i++ {
				v := ix.vocab[i]
				if v == t {
					continue
				}
				if rest := v[len(t):]; len(rest) >= 3 && ix.knows(rest) {
					continue // a compound: event+hub is not a kind of event
				}
				raise(v, pw, idfCap)
				n++
			}
		}
	}
	// Associations learned from the indexed tools: a specific word of the query (one few
	// tools use) brings the words of those tools' names, so that other tools named alike
	// ("dialog") match a query that says what only one description says ("popup"), each in
	// proportion to its normalised PMI with the word.
	maxDF := max(assocMinDF, int(assocShare*float64(len(ix.names))))
	co := map[string]int{}
	for _, t := range ts {
		pl, ok := ix.postings[t]
		if !ok || noIntent(t) || len(pl.docs) > maxDF || ix.mentions[t] != nil {
			continue
		}
		from = -1
		clear(co)
		for _, p := range pl.docs {
			for _, nt := range ix.nameTerms[p.doc] {
				if nt != t {
					co[nt]++
				}
			}
		}
		df := float64(len(pl.docs))
		for nt, n := range co {
			share := float64(n) / df
			if share < assocMinShare {
				continue
			}
			// Weighed by how much more often than chance the two meet (normalised PMI over
			// documents): a generic name word (get, list) that any tool has brings little.
			if npmi := ix.npmi(float64(n), df, float64(len(ix.postings[nt].docs))); npmi > 0 {
				raise(nt, assocWeight*share*npmi, pl.idf)
			}
		}
	}
	out := make([]queryTerm, 0, len(w))
	for t, x := range w {
		out = append(out, queryTerm{term: t, weight: x.weight, idfCap: x.idfCap, own: x.own, from: x.from})
	}
	slices.SortFunc(out, func(a, b queryTerm) int { return strings.Compare(a.term, b.term) })
	return out
}

// npmi is the normalised pointwise mutual information of two terms over the documents,
// from the documents that have both (both), and each (a, b): 1 when they only ever occur
// together, 0 when they meet as often as chance, below 0 when less; 0 when both are in
// every document.
func (ix *Index) npmi(both, a, b float64) float64 {
	n := float64(len(ix.names))
	if both <= 0 || both >= n {
		return 0
	}
	return math.Log(both*n/(a*b)) / -math.Log(both/n)
}

// nameMatch is how much a query term of weight w covers of a name term: all for a word of
// the query, less for a weak word or an expansion, in proportion to its weight.
func nameMatch(w float64) float64 {
	return min(1, w*nameMatchScale)
}

// noIntent reports query terms that say no intent of their own: weak words and numbers.
func noIntent(t string) bool { return isWeak(t) || isNumber(t) }

func isNumber(t string) bool {
	return !strings.ContainsFunc(t, func(r rune) bool { return r < '0' || r > '9' })
}
