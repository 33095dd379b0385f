package schemaguard

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/ttalk/mcpbridge/internal/redact"
)

// Schema budgets. A server's schema is code the bridge runs: the validator follows $ref,
// allOf, anyOf and oneOf, so a schema that is small on the wire can expand exponentially (a
// chain of $defs each referencing the next twice is 2^depth steps), and the validator
// library compiles in time quadratic in the number of subschemas (30,000 properties took a
// minute). Every schema is measured in one linear pass before it is compiled; one over
// budget is not compiled and its tool is offered without validation (the server still
// validates), with a problem saying why. The budgets themselves (worst-case cost, subschema
// count) are the caller's: see Limits.

// MaxSchemaDepth caps the nesting of subschemas.
const MaxSchemaDepth = 64

// schemaLimits are the budgets one schema is measured against.
type schemaLimits struct {
	maxCost  int64
	maxNodes int
	maxDepth int
}

// schemaStats is what measureSchema found.
type schemaStats struct {
	nodes int   // subschemas, counted once each
	depth int   // deepest nesting of subschemas
	cost  int64 // worst-case applications per instance location (saturates above the budget)
	// recursive: the schema reaches itself through properties or items, so its cost grows
	// with the instance's depth (cost is for instances up to costDepth deep).
	recursive bool
}

// Keywords whose value is one subschema, an array of subschemas, or a map of name to
// subschema (drafts 4 through 2020-12). Anything else in a schema object is data (enum,
// const, default, examples, annotations) or an unknown keyword: the validator never applies
// it as a schema.
var (
	oneSchemaKeywords = map[string]bool{
		"not": true, "if": true, "then": true, "else": true, "items": true, "additionalItems": true,
		"additionalProperties": true, "contains": true, "propertyNames": true,
		"unevaluatedItems": true, "unevaluatedProperties": true, "contentSchema": true,
	}
	schemaArrayKeywords = map[string]bool{
		"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true, "items": true,
	}
	schemaMapKeywords = map[string]bool{
		"properties": true, "patternProperties": true, "dependentSchemas": true, "dependencies": true,
		"$defs": true, "definitions": true,
	}
	// definitionKeywords hold subschemas that apply only when referenced.
	definitionKeywords = map[string]bool{"$defs": true, "definitions": true}
)

// errUnresolvedRef is wrapped by measureSchema's error for a $ref it cannot resolve inside
// the schema (its cost is unknown).
var errUnresolvedRef = errors.New("its $ref cannot be resolved inside the schema, so its cost is unknown")

// schemaNode is one subschema found by the indexing pass.
type schemaNode struct {
	ptr  string // JSON pointer from the document root
	v    any    // map[string]any or bool
	base string // base URI in effect (its own $id applied)
}

// schemaMeter measures one schema document.
type schemaMeter struct {
	lim     schemaLimits
	nodes   map[string]*schemaNode // by JSON pointer
	ids     map[string]string      // absolute $id (no fragment) -> pointer
	anchors map[string]string      // absolute base + "#" + anchor -> pointer
	dynamic map[string][]string    // $dynamicAnchor name -> pointers
	draft4  bool
	stats   schemaStats
	memo    map[memoKey]int64
	busy    map[memoKey]bool
	onStack map[string]int // frames of cost running per subschema
	err     error
	// recursive is set when a subschema reaches itself (through $ref): its cost then
	// depends on the instance's depth.
	recursive bool
}

// rootBase is the base URI of a schema without $id; it matches Compile's resource.
const rootBase = "urn:mcpbridge:inputSchema"

// measureSchema measures doc (as decoded by decodeJSON) against lim. It returns
// an error saying which budget the schema is over, or that a $ref could not be resolved
// (such a schema does not compile either: external references are refused).
func measureSchema(doc any, lim schemaLimits) (schemaStats, error) {
	m := &schemaMeter{
		lim:     lim,
		nodes:   map[string]*schemaNode{},
		ids:     map[string]string{},
		anchors: map[string]string{},
		dynamic: map[string][]string{},
		memo:    map[memoKey]int64{},
		busy:    map[memoKey]bool{},
		onStack: map[string]int{},
	}
	if obj, ok := doc.(map[string]any); ok {
		if s, ok := obj["$schema"].(string); ok && strings.Contains(s, "draft-04") {
			m.draft4 = true
		}
	}
	if err := m.index(doc, "", rootBase, 1); err != nil {
		return m.stats, err
	}
	m.stats.cost = m.cost("", costDepth)
	m.stats.recursive = m.recursive
	if m.err != nil {
		return m.stats, m.err
	}
	if m.stats.cost > lim.maxCost {
		return m.stats, fmt.Errorf("its worst-case validation work (each $ref, allOf, anyOf and oneOf branch counted every time it is reached) is over the budget of %d (Options.MaxSchemaCost)", lim.maxCost)
	}
	return m.stats, nil
}

// index records every subschema of v (at pointer ptr, base URI base) and counts nodes and
// depth against the budget.
func (m *schemaMeter) index(v any, ptr, base string, depth int) error {
	obj, isObj := v.(map[string]any)
	if _, isBool := v.(bool); !isObj && !isBool {
		return nil // not a schema; the compiler reports it
	}
	m.stats.nodes++
	if depth > m.stats.depth {
		m.stats.depth = depth
	}
	if m.stats.nodes > m.lim.maxNodes {
		return fmt.Errorf("it has more than %d subschemas (Options.MaxSchemaNodes)", m.lim.maxNodes)
	}
	if depth > m.lim.maxDepth {
		return fmt.Errorf("its subschemas nest more than %d levels deep", m.lim.maxDepth)
	}
	if !isObj {
		m.nodes[ptr] = &schemaNode{ptr: ptr, v: v, base: base}
		return nil
	}
	idKey := "$id"
	if m.draft4 {
		idKey = "id"
	}
	if id, ok := obj[idKey].(string); ok && id != "" {
		if abs, ok := resolveURI(base, id); ok {
			noFrag, frag, _ := strings.Cut(abs, "#")
			base = noFrag
			m.ids[noFrag] = ptr
			if frag != "" && !strings.HasPrefix(frag, "/") { // draft 4-7 "#name" ids are anchors
				m.anchors[noFrag+"#"+frag] = ptr
			}
		}
	}
	if a, ok := obj["$anchor"].(string); ok && a != "" {
		m.anchors[base+"#"+a] = ptr
	}
	if a, ok := obj["$dynamicAnchor"].(string); ok && a != "" {
		m.anchors[base+"#"+a] = ptr
		m.dynamic[a] = append(m.dynamic[a], ptr)
	}
	m.nodes[ptr] = &schemaNode{ptr: ptr, v: v, base: base}
	return m.eachChild(obj, ptr, true, func(child any, cptr string) error {
		return m.index(child, cptr, base, depth+1)
	})
}

// eachChild calls f for every subschema directly inside obj. withDefs includes $defs and
// definitions, which apply only when referenced.
func (m *schemaMeter) eachChild(obj map[string]any, ptr string, withDefs bool, f func(child any, ptr string) error) error {
	for k, v := range obj {
		kp := ptr + "/" + escapePointer(k)
		if definitionKeywords[k] && !withDefs {
			continue
		}
		switch val := v.(type) {
		case map[string]any:
			switch {
			case schemaMapKeywords[k]:
				for name, sub := range val {
					if err := f(sub, kp+"/"+escapePointer(name)); err != nil {
						return err
					}
				}
			case oneSchemaKeywords[k]:
				if err := f(val, kp); err != nil {
					return err
				}
			}
		case bool:
			if oneSchemaKeywords[k] {
				if err := f(val, kp); err != nil {
					return err
				}
			}
		case []any:
			if schemaArrayKeywords[k] {
				for i, sub := range val {
					if err := f(sub, kp+"/"+strconv.Itoa(i)); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// costDepth is the instance depth the worst-case cost is measured for. Subschemas nest at
// most MaxSchemaDepth levels, so for a schema without recursion the cost at costDepth is
// the cost for any instance; a recursive schema's cost grows with the instance's depth, and
// arguments nested deeper than costDepth are not validated against it (see lazySchema).
const costDepth = MaxSchemaDepth

// Keywords whose subschemas apply to the same instance location as the schema itself (the
// others apply to its properties or items, one level down).
var sameLocationKeywords = map[string]bool{
	"allOf": true, "anyOf": true, "oneOf": true, "not": true, "if": true, "then": true, "else": true,
	"dependentSchemas": true, "dependencies": true,
}

// cost is the worst-case number of subschema applications when the schema at ptr is applied
// to an instance at most d levels deep: 1 for itself, plus every subschema and reference
// target it applies to the same location, plus (at d-1) those it applies one level down,
// each counted every time it is reached, as if every branch were taken. A same-location
// cycle counts 1 (the validator stops it with an error); a recursion through properties or
// items is bounded by d. Results are memoized by (ptr, d), so the pass is linear in the
// schema's size times d. The sum saturates just above the budget.
func (m *schemaMeter) cost(ptr string, d int) int64 {
	if d < 0 {
		return 0
	}
	key := memoKey{ptr, d}
	if c, ok := m.memo[key]; ok {
		return c
	}
	if m.busy[key] || m.err != nil {
		m.recursive = true
		return 1
	}
	n := m.nodes[ptr]
	if n == nil {
		return 1
	}
	obj, ok := n.v.(map[string]any)
	if !ok {
		m.memo[key] = 1
		return 1
	}
	if m.onStack[ptr] > 0 {
		m.recursive = true
	}
	m.onStack[ptr]++
	m.busy[key] = true
	total := int64(1)
	limit := m.lim.maxCost + 1
	add := func(c int64) {
		total += c
		if total > limit {
			total = limit
		}
	}
	_ = m.eachChild(obj, ptr, false, func(_ any, cptr string) error {
		if sameLocationKeywords[firstToken(cptr[len(ptr):])] {
			add(m.cost(cptr, d))
		} else {
			add(m.cost(cptr, d-1))
		}
		return nil
	})
	for _, kw := range [...]string{"$ref", "$recursiveRef", "$dynamicRef"} {
		ref, ok := obj[kw].(string)
		if !ok {
			continue
		}
		add(m.refCost(n.base, ref, d))
		if _, name, found := strings.Cut(ref, "#"); found && kw == "$dynamicRef" {
			for _, p := range m.dynamic[name] {
				add(m.cost(p, d))
			}
		}
	}
	delete(m.busy, key)
	m.onStack[ptr]--
	m.memo[key] = total
	return total
}

// memoKey is a subschema at an instance depth budget.
type memoKey struct {
	ptr string
	d   int
}

// firstToken returns the first token of a relative JSON pointer ("/allOf/0" -> "allOf").
func firstToken(rel string) string {
	rel = strings.TrimPrefix(rel, "/")
	tok, _, _ := strings.Cut(rel, "/")
	return tok
}

// refCost resolves ref against base and returns its target's cost. An unresolvable
// reference sets m.err.
func (m *schemaMeter) refCost(base, ref string, d int) int64 {
	ptr, ok := m.resolve(base, ref)
	if !ok {
		if m.err == nil {
			m.err = fmt.Errorf("%w: %q", errUnresolvedRef, redact.Line(ref, 300))
		}
		return 1
	}
	return m.cost(ptr, d)
}

// resolve finds the subschema a reference points to: an absolute URI of a resource ($id),
// optionally with a JSON pointer or an anchor as the fragment.
func (m *schemaMeter) resolve(base, ref string) (string, bool) {
	abs, ok := resolveURI(base, ref)
	if !ok {
		return "", false
	}
	doc, frag, _ := strings.Cut(abs, "#")
	docPtr, ok := m.ids[doc]
	if !ok {
		if doc != rootBase {
			return "", false
		}
		docPtr = ""
	}
	if frag == "" {
		return docPtr, m.nodes[docPtr] != nil
	}
	if !strings.HasPrefix(frag, "/") {
		p, ok := m.anchors[doc+"#"+frag]
		return p, ok
	}
	// A JSON pointer within the resource. Percent-decoding applies to URI fragments.
	if u, err := url.PathUnescape(frag); err == nil {
		frag = u
	}
	p := docPtr + frag
	if _, ok := m.nodes[p]; ok {
		return p, true
	}
	return "", false
}

// resolveURI resolves ref against base; both may be URNs.
func resolveURI(base, ref string) (string, bool) {
	r, err := url.Parse(ref)
	if err != nil {
		return "", false
	}
	if r.IsAbs() {
		return r.String(), true
	}
	b, err := url.Parse(base)
	if err != nil {
		return "", false
	}
	if b.Opaque != "" { // a URN base: only fragments resolve against it
		if r.Scheme == "" && r.Host == "" && r.Path == "" {
			if r.Fragment == "" && r.RawFragment == "" {
				return base, true
			}
			return base + "#" + r.EscapedFragment(), true
		}
		return "", false
	}
	return b.ResolveReference(r).String(), true
}

// escapePointer escapes a key for a JSON pointer (RFC 6901).
func escapePointer(k string) string {
	if !strings.ContainsAny(k, "~/") {
		return k
	}
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}
