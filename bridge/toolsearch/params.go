package toolsearch

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
)

const (
	// maxParams bounds the parameters taken from one schema (and indexed per document).
	maxParams = 200
	// maxParamDepth bounds how deep Params looks into nested objects, arrays and
	// combinators.
	maxParamDepth = 4
	// maxEnum bounds the enum values taken into one parameter's description.
	maxEnum = 32
	// maxNesting bounds the brackets open at once while skipping a value: deeper input is
	// malformed for Params.
	maxNesting = 10000
)

// Params lists the parameters of a JSON Schema (a tool's inputSchema) for a Document: the
// properties of the top-level object in schema order with their descriptions, then those
// of nested objects, array items and anyOf/oneOf/allOf branches, up to four levels deep
// and 200 parameters. A description is the property's title and description, then the
// string values of its enum, the first 32, in parentheses ("Travel mode (driving, walking,
// transit)"): they are the words of what the tool can do. $refs are not followed. A schema
// that is not a JSON object, or that is cut short, gives none; a description or title that
// is not a string is left out.
//
// The schema is read in one pass over its bytes: nothing is decoded twice, and values
// Params does not need are skipped, not decoded.
func Params(schema json.RawMessage) []Param {
	p := schemaParser{b: schema}
	p.space()
	root := p.node(0)
	p.space()
	if p.bad || root == nil {
		return nil
	}
	var out []Param
	root.collect(0, &out)
	return out
}

// schemaNode is what Params needs of one schema object.
type schemaNode struct {
	description, title string
	enum               []string // the string values of enum, at most maxEnum
	props              []schemaProp
	items              *schemaNode
	groups             []*schemaNode // anyOf, then oneOf, then allOf branches, in that order
	groupOf            []int         // which of the three each of groups is from
}

type schemaProp struct {
	name   string
	schema *schemaNode // nil when the property's value is not an object
}

// collect appends the node's parameters in the order Params documents: its properties,
// then each property's own, then items', then the combinators' branches.
func (n *schemaNode) collect(depth int, out *[]Param) {
	if n == nil || depth > maxParamDepth || len(*out) >= maxParams {
		return
	}
	var took int
	for _, p := range n.props {
		if len(*out) >= maxParams {
			break
		}
		var desc string
		if p.schema != nil {
			desc = p.schema.description
			if p.schema.title != "" {
				desc = p.schema.title + ". " + desc
			}
			if len(p.schema.enum) > 0 {
				desc += " (" + strings.Join(p.schema.enum, ", ") + ")"
			}
		}
		*out = append(*out, Param{Name: p.name, Description: desc})
		took++
	}
	for _, p := range n.props[:took] {
		p.schema.collect(depth+1, out)
	}
	n.items.collect(depth+1, out)
	for g := range 3 {
		for i, b := range n.groups {
			if n.groupOf[i] == g {
				b.collect(depth+1, out)
			}
		}
	}
}

// schemaParser reads a schema once. bad is set at the first byte that cannot continue
// JSON; every method then returns at once.
type schemaParser struct {
	b   []byte
	i   int
	bad bool
}

func (p *schemaParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

// peek is the next byte after white space, or 0 at the end.
func (p *schemaParser) peek() byte {
	p.space()
	if p.i >= len(p.b) {
		return 0
	}
	return p.b[p.i]
}

// expect consumes c after white space, or marks the input bad.
func (p *schemaParser) expect(c byte) {
	if p.peek() != c {
		p.bad = true
		return
	}
	p.i++
}

// node reads the value at the cursor: a schema object as a node, any other value skipped
// (nil). Below maxParamDepth+1 levels objects are skipped too: Params would not use them.
func (p *schemaParser) node(depth int) *schemaNode {
	if p.peek() != '{' || depth > maxParamDepth+1 {
		p.skip()
		return nil
	}
	n := &schemaNode{}
	p.i++
	if p.peek() == '}' {
		p.i++
		return n
	}
	for !p.bad {
		key, ok := p.str(true)
		p.expect(':')
		if !ok || p.bad {
			p.bad = true
			return nil
		}
		// encoding/json matches keys without regard to case: schemas read as they did.
		switch key = foldKey(key); key {
		case "properties":
			n.props = p.props(depth) // a repeated key: the last one counts, as in encoding/json
		case "items":
			n.items = p.node(depth + 1)
		case "anyOf", "oneOf", "allOf":
			g := 0
			switch key {
			case "oneOf":
				g = 1
			case "allOf":
				g = 2
			}
			n.groups, n.groupOf = p.branches(depth, g, n.groups, n.groupOf)
		case "enum":
			n.enum = p.enum()
		case "description", "title":
			if p.peek() == '"' {
				s, _ := p.str(true)
				if key == "description" {
					n.description = s
				} else {
					n.title = s
				}
			} else {
				p.skip()
			}
		default:
			p.skip()
		}
		switch p.peek() {
		case ',':
			p.i++
		case '}':
			p.i++
			return n
		default:
			p.bad = true
		}
	}
	return nil
}

// props reads a "properties" object: each member a parameter, in document order.
func (p *schemaParser) props(depth int) []schemaProp {
	if p.peek() != '{' {
		p.skip()
		return nil
	}
	p.i++
	var out []schemaProp
	if p.peek() == '}' {
		p.i++
		return out
	}
	for !p.bad {
		name, ok := p.str(true)
		p.expect(':')
		if !ok || p.bad {
			p.bad = true
			return nil
		}
		if len(out) < maxParams {
			out = append(out, schemaProp{name: name, schema: p.node(depth + 1)})
		} else {
			p.skip()
		}
		switch p.peek() {
		case ',':
			p.i++
		case '}':
			p.i++
			return out
		default:
			p.bad = true
		}
	}
	return nil
}

// branches reads an anyOf, oneOf or allOf array, appending its object branches.
func (p *schemaParser) branches(depth, group int, nodes []*schemaNode, of []int) ([]*schemaNode, []int) {
	if p.peek() != '[' {
		p.skip()
		return nodes, of
	}
	// A repeated key replaces the earlier branches of the same group.
	for i := range slices.Backward(nodes) {
		if of[i] == group {
			nodes, of = append(nodes[:i], nodes[i+1:]...), append(of[:i], of[i+1:]...)
		}
	}
	p.i++
	if p.peek() == ']' {
		p.i++
		return nodes, of
	}
	for !p.bad {
		if n := p.node(depth + 1); n != nil {
			nodes, of = append(nodes, n), append(of, group)
		}
		switch p.peek() {
		case ',':
			p.i++
		case ']':
			p.i++
			return nodes, of
		default:
			p.bad = true
		}
	}
	return nodes, of
}

// enum reads an "enum" array: its string values, the first maxEnum; other values skipped.
func (p *schemaParser) enum() []string {
	if p.peek() != '[' {
		p.skip()
		return nil
	}
	p.i++
	var out []string
	if p.peek() == ']' {
		p.i++
		return out
	}
	for !p.bad {
		if p.peek() == '"' && len(out) < maxEnum {
			s, _ := p.str(true)
			out = append(out, s)
		} else {
			p.skip()
		}
		switch p.peek() {
		case ',':
			p.i++
		case ']':
			p.i++
			return out
		default:
			p.bad = true
		}
	}
	return nil
}

// str reads a JSON string at the cursor. With decode it returns its value (escapes
// decoded, invalid UTF-8 as U+FFFD, like encoding/json); without, it only skips it.
func (p *schemaParser) str(decode bool) (string, bool) {
	if p.peek() != '"' {
		p.bad = true
		return "", false
	}
	start := p.i
	p.i++
	escaped := false
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			if !decode {
				return "", true
			}
			raw := p.b[start+1 : p.i-1]
			if !escaped && utf8.Valid(raw) {
				return string(raw), true
			}
			var s string
			if json.Unmarshal(p.b[start:p.i], &s) != nil {
				p.bad = true
				return "", false
			}
			return s, true
		case c == '\\':
			escaped = true
			p.i += 2
		case c < 0x20:
			p.bad = true
			return "", false
		default:
			p.i++
		}
	}
	p.bad = true
	return "", false
}

// skip passes over one value of any kind without decoding it: strings are scanned for
// their end, objects and arrays for their closing bracket.
func (p *schemaParser) skip() {
	switch c := p.peek(); {
	case c == '"':
		p.str(false)
		return
	case c == '{' || c == '[':
	case c == 0:
		p.bad = true
		return
	default: // a number, true, false or null
		start := p.i
		for p.i < len(p.b) && !isDelim(p.b[p.i]) {
			p.i++
		}
		if p.i == start {
			p.bad = true
		}
		return
	}
	var stack []byte
	for !p.bad {
		switch c := p.peek(); c {
		case '{', '[':
			if len(stack) >= maxNesting {
				p.bad = true
				return
			}
			stack = append(stack, c)
			p.i++
		case '}', ']':
			open := byte('[')
			if c == '}' {
				open = '{'
			}
			if len(stack) == 0 || stack[len(stack)-1] != open {
				p.bad = true
				return
			}
			stack = stack[:len(stack)-1]
			p.i++
			if len(stack) == 0 {
				return
			}
		case '"':
			p.str(false)
		case 0:
			p.bad = true
			return
		default:
			p.i++
		}
	}
}

// foldKey is the schema keyword key stands for, matched without regard to case as
// encoding/json matches struct fields, or key itself.
func foldKey(key string) string {
	for _, k := range [...]string{"properties", "items", "anyOf", "oneOf", "allOf", "description", "title", "enum"} {
		if strings.EqualFold(key, k) {
			return k
		}
	}
	return key
}

func isDelim(c byte) bool {
	switch c {
	case ',', '}', ']', ':', ' ', '\t', '\r', '\n', '"', '{', '[':
		return true
	}
	return false
}
