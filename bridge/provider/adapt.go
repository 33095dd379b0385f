package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Adapted is a tool's parameters schema rewritten for one target, with what changed, what
// the target still rejects, and the way back for the model's arguments.
//
// Adaptation only ever widens what the schema accepts or moves a constraint into the
// description, with one exception: OpenAI strict mode needs every property required and no
// undeclared properties, so optional properties become required-but-nullable and the nulls
// the model then sends are dropped again by MapArguments. Every other constraint the
// adapted schema no longer states is still enforced: the bridge validates arguments
// against the server's own schema before calling the server.
type Adapted struct {
	// Target is the field the schema was adapted for.
	Target Target
	// Schema is what to send: the server's schema when nothing needed changing (byte for
	// byte), else the adapted one (key order kept).
	Schema json.RawMessage
	// Changes says what the adapter did, one line per kind of change.
	Changes []string
	// Remaining is what Target still rejects in Schema. Empty means the adaptation worked.
	Remaining []Finding

	shape *shape // where the adapter made optional properties nullable
}

// OK reports whether nothing the target rejects is left.
func (a *Adapted) OK() bool { return len(a.Remaining) == 0 }

// Adapt rewrites a parameters schema for target. It fails only when schema is not a JSON
// object; anything it cannot fix is reported in Remaining.
func Adapt(schema json.RawMessage, target Target) (*Adapted, error) {
	if _, err := ParseTarget(string(target)); err != nil {
		return nil, err
	}
	v, err := decode(schema)
	if err != nil {
		return nil, fmt.Errorf("parameters schema: %w", err)
	}
	orig, ok := v.(*object)
	if !ok {
		return nil, errors.New("parameters schema is not a JSON object")
	}
	a := &Adapted{Target: target}
	if len(lintTree(orig, target)) == 0 {
		a.Schema = bytes.TrimSpace(slices.Clone(schema))
		return a, nil
	}
	root := clone(orig).(*object)
	ad := &adapter{target: target, changes: map[string]int{}}
	root = ad.fixRoot(root)
	if target == Gemini || target == GeminiParameters || target == OpenAIStrict {
		if hasLocalRefs(root) {
			root = ad.inline(root)
		}
	}
	a.shape = ad.node(root, true, 0)
	if ad.changes["draft-4 boolean exclusiveMinimum rewritten"]+ad.changes["draft-4 boolean exclusiveMaximum rewritten"] > 0 {
		if _, ok := root.get("$schema"); ok {
			root.del("$schema") // the rewritten keywords are 2020-12's, the default
			ad.note(`"$schema" removed (the schema now uses draft 2020-12 keywords)`)
		}
	}
	a.Schema = encode(root)
	a.Changes = ad.list()
	a.Remaining = lintTree(root, target)
	if target == GeminiParameters && emptyObject(root) {
		a.Remaining = withoutEmptyRoot(a.Remaining)
		ad.note(`no properties: send the declaration without "parameters"`)
		a.Changes = ad.list()
	}
	return a, nil
}

// MapArguments turns the model's arguments for the adapted schema into arguments for the
// server's schema: the nulls OpenAI strict mode made the model send for optional properties
// are dropped. Arguments that need nothing are returned unchanged.
func (a *Adapted) MapArguments(args json.RawMessage) (json.RawMessage, error) {
	if a.shape == nil || !a.shape.hasNulled() {
		return args, nil
	}
	t := bytes.TrimSpace(args)
	if len(t) == 0 || t[0] != '{' {
		return args, nil // the bridge's own checks report it
	}
	v, err := decode(t)
	if err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	v, changed := mapBack(v, a.shape, 0)
	if !changed {
		return args, nil
	}
	return encode(v), nil
}

// shape mirrors the object, array and anyOf structure of an adapted schema where the
// adapter made optional properties nullable.
type shape struct {
	props  map[string]*shape
	nulled map[string]bool // properties made nullable: a null from the model means "absent"
	items  *shape
	anyOf  []*shape
}

func (s *shape) hasNulled() bool {
	if s == nil {
		return false
	}
	if len(s.nulled) > 0 || s.items.hasNulled() {
		return true
	}
	for _, p := range s.props {
		if p.hasNulled() {
			return true
		}
	}
	for _, b := range s.anyOf {
		if b.hasNulled() {
			return true
		}
	}
	return false
}

func mapBack(v any, s *shape, depth int) (any, bool) {
	if s == nil || depth > maxDepth {
		return v, false
	}
	changed := false
	switch x := v.(type) {
	case *object:
		if s.props == nil {
			if b := s.branch(x); b != nil {
				return mapBack(v, b, depth+1)
			}
			return v, false
		}
		for _, k := range slices.Clone(x.keys) {
			if x.vals[k] == nil && s.nulled[k] {
				x.del(k)
				changed = true
				continue
			}
			if c, ch := mapBack(x.vals[k], s.props[k], depth+1); ch {
				x.vals[k] = c
				changed = true
			}
		}
	case []any:
		is := s.items
		if is == nil {
			if b := s.branch(x); b != nil {
				return mapBack(v, b, depth+1)
			}
			return v, false
		}
		for i := range x {
			if c, ch := mapBack(x[i], is, depth+1); ch {
				x[i] = c
				changed = true
			}
		}
	}
	return v, changed
}

// branch picks the anyOf variant a value was written for: for an object, the first variant
// declaring every key it has; for an array, the first array variant.
func (s *shape) branch(v any) *shape {
	for _, b := range s.anyOf {
		switch x := v.(type) {
		case *object:
			if b.props == nil {
				continue
			}
			all := true
			for _, k := range x.keys {
				if _, ok := b.props[k]; !ok {
					all = false
					break
				}
			}
			if all {
				return b
			}
		case []any:
			if b.items != nil {
				return b
			}
		}
	}
	return nil
}

// adapter rewrites one schema for one target and counts what it did.
type adapter struct {
	target  Target
	changes map[string]int
	order   []string
	nodes   int
}

func (ad *adapter) note(change string) {
	if ad.changes[change] == 0 {
		ad.order = append(ad.order, change)
	}
	ad.changes[change]++
}

func (ad *adapter) list() []string {
	out := make([]string, len(ad.order))
	for i, c := range ad.order {
		out[i] = c
		if n := ad.changes[c]; n > 1 {
			out[i] += fmt.Sprintf(" (×%d)", n)
		}
	}
	return out
}

// describe appends notes on constraints the adapted schema no longer states to n's
// description, so the model still reads them.
func describe(n *object, notes []string) {
	if len(notes) == 0 {
		return
	}
	add := strings.Join(notes, "; ")
	if d, ok := n.str("description"); ok && d != "" {
		n.set("description", d+" ("+add+")")
		return
	}
	n.set("description", add)
}

// fixRoot makes the top level an object schema: "type": "object" added or narrowed from a
// list, top-level anyOf/oneOf/allOf replaced by their properties merged in as optional ones
// (the bridge still validates against the server's schema), top-level enum/not dropped.
func (ad *adapter) fixRoot(root *object) *object {
	switch t := root.vals["type"].(type) {
	case nil:
		if _, has := root.get("type"); !has {
			root = withFirst(root, "type", "object")
			ad.note(`added "type": "object" at the top level`)
		}
	case []any:
		if slices.Contains(t, any("object")) {
			root.set("type", "object")
			ad.note(`top-level "type" list narrowed to "object"`)
		}
	}
	var notes []string
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		branches, ok := root.vals[k].([]any)
		if !ok {
			continue
		}
		if ad.target == Gemini && k != "allOf" {
			continue // parametersJsonSchema takes a top-level anyOf/oneOf as it is
		}
		root.del(k)
		merged := mergeProperties(root, branches, k == "allOf")
		notes = append(notes, combinatorNote(k, branches))
		if merged > 0 {
			ad.note(fmt.Sprintf("top-level %s removed, %d properties of its variants merged in", k, merged))
		} else {
			ad.note(fmt.Sprintf("top-level %s removed", k))
		}
	}
	if ad.target == OpenAI || ad.target == OpenAIStrict {
		for _, k := range []string{"enum", "not"} {
			if v, ok := root.get(k); ok {
				root.del(k)
				notes = append(notes, k+": "+compact(v))
				ad.note(fmt.Sprintf("top-level %s removed", k))
			}
		}
	}
	if root.obj("properties") == nil {
		if _, has := root.get("properties"); !has && root.vals["type"] == "object" {
			root.set("properties", newObject())
		}
	}
	describe(root, notes)
	return root
}

// combinatorNote says in words what a removed top-level combinator required, for the model.
func combinatorNote(k string, branches []any) string {
	var reqs []string
	for _, b := range branches {
		o, ok := b.(*object)
		if !ok {
			continue
		}
		if r := requiredList(o); len(r) > 0 {
			reqs = append(reqs, strings.Join(r, "+"))
		}
	}
	if len(reqs) == len(branches) && len(reqs) > 0 {
		switch k {
		case "allOf":
			return "requires " + strings.Join(reqs, ", ")
		case "oneOf":
			return "requires exactly one of: " + strings.Join(reqs, " | ")
		}
		return "requires at least one of: " + strings.Join(reqs, " | ")
	}
	return fmt.Sprintf("must match %s of %d variants", map[string]string{"anyOf": "at least one", "oneOf": "exactly one", "allOf": "all"}[k], len(branches))
}

func requiredList(o *object) []string {
	var out []string
	if r, ok := o.vals["required"].([]any); ok {
		for _, e := range r {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// mergeProperties adds the properties of each variant to root's, as optional properties
// (allOf: their required ones too). A property defined differently by two variants accepts
// either definition. It returns how many properties were added.
func mergeProperties(root *object, branches []any, all bool) int {
	props := root.obj("properties")
	added := 0
	for _, b := range branches {
		o, ok := b.(*object)
		if !ok {
			continue
		}
		bp := o.obj("properties")
		if bp == nil {
			continue
		}
		if props == nil {
			props = newObject()
			root.set("properties", props)
		}
		for _, k := range bp.keys {
			cur, exists := props.get(k)
			switch {
			case !exists:
				props.set(k, clone(bp.vals[k]))
				added++
			case !jsonEqual(cur, bp.vals[k]):
				alt := newObject()
				alt.set("anyOf", []any{cur, clone(bp.vals[k])})
				props.set(k, alt)
			}
		}
		if all {
			req, _ := root.vals["required"].([]any)
			for _, r := range requiredList(o) {
				if !slices.Contains(req, any(r)) {
					req = append(req, r)
				}
			}
			if len(req) > 0 {
				root.set("required", req)
			}
		}
	}
	return added
}

// withFirst returns o with k set to v as its first key.
func withFirst(o *object, k string, v any) *object {
	n := newObject()
	n.set(k, v)
	for _, key := range o.keys {
		if key != k {
			n.set(key, o.vals[key])
		}
	}
	return n
}

func hasLocalRefs(root *object) bool {
	found := false
	walkSchemas(root, "", func(n *object, _ string, _ position) {
		if r, ok := n.str("$ref"); ok && strings.HasPrefix(r, "#") {
			found = true
		}
	})
	return found
}

// maxInline bounds how many references deep inlining goes; recursive definitions are cut
// there (the cut schema accepts anything).
const maxInline = 8

// maxInlineNodes bounds the size of a schema after inlining; past it the references stay.
const maxInlineNodes = 20_000

// inline replaces every local "$ref" with a copy of what it points to and drops
// "$defs"/"definitions". Keywords next to a "$ref" win over the referenced schema's.
func (ad *adapter) inline(root *object) *object {
	src := clone(root).(*object)
	var walk func(v any, stack []string) any
	walk = func(v any, stack []string) any {
		ad.nodes++
		if ad.nodes > maxInlineNodes {
			return v
		}
		switch x := v.(type) {
		case *object:
			if ref, ok := x.str("$ref"); ok && strings.HasPrefix(ref, "#") {
				if slices.Contains(stack, ref) || len(stack) >= maxInline {
					cut := newObject()
					for _, k := range x.keys {
						if k != "$ref" {
							cut.set(k, x.vals[k])
						}
					}
					describe(cut, []string{"recursive: same shape as " + ref})
					ad.note("recursive $ref cut (accepts anything there)")
					return cut
				}
				target, ok := resolvePointer(src, ref)
				if !ok {
					return x // lint reports it as a reference Gemini cannot resolve
				}
				merged := clone(target).(*object)
				merged.del("$defs")
				merged.del("definitions")
				for _, k := range x.keys {
					if k != "$ref" {
						merged.set(k, x.vals[k])
					}
				}
				ad.note("local $ref inlined")
				return walk(merged, append(stack, ref))
			}
			for _, k := range x.keys {
				x.vals[k] = walk(x.vals[k], stack)
			}
			return x
		case []any:
			for i := range x {
				x[i] = walk(x[i], stack)
			}
			return x
		}
		return v
	}
	out := clone(root).(*object)
	out.del("$defs")
	out.del("definitions")
	out = walk(out, nil).(*object)
	if ad.nodes > maxInlineNodes {
		ad.note(fmt.Sprintf("references left in place: inlining them would exceed %d values", maxInlineNodes))
		return root
	}
	return out
}

// resolvePointer finds a "#/a/b" reference in root.
func resolvePointer(root *object, ref string) (*object, bool) {
	p := strings.TrimPrefix(ref, "#")
	if p == "" {
		return root, true
	}
	if !strings.HasPrefix(p, "/") {
		return nil, false // anchors are not supported
	}
	var cur any = root
	for tok := range strings.SplitSeq(p[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case *object:
			v, ok := c.get(tok)
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			var i int
			if _, err := fmt.Sscanf(tok, "%d", &i); err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	o, ok := cur.(*object)
	return o, ok
}
