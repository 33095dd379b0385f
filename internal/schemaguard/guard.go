package schemaguard

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/ttalk/mcpbridge/internal/redact"
)

const (
	// MaxSchemaBytes caps a schema the bridge decodes for validation: larger ones are offered
	// without validation, before any decoding work. bridge/limits.go lists it with every
	// other limit, as it does CallWorkFactor, MaxSchemaDepth and MaxNullDepth.
	MaxSchemaBytes = 2 << 20
	// keepCompiledNodes: a schema with more subschemas than this stays compiled after the
	// assembly check (recompiling it on first use would cost noticeable time); smaller ones
	// are dropped (a compiled schema costs about 20 KB) and compiled again on first use.
	keepCompiledNodes = 100
	// inlineWork: validations whose worst case is at most this many subschema applications
	// run on the caller's goroutine; larger ones run on their own so that the caller's
	// deadline holds.
	inlineWork = 20_000
	// CallWorkFactor bounds one validation: at most Limits.MaxCost*CallWorkFactor subschema
	// applications in the worst case; larger value/schema pairs are not validated.
	CallWorkFactor = 100
)

// ErrNotCompiled is wrapped by Validate's error for a schema that turned out not to compile
// on first use (the listing's deadline left no time to compile it then): the value is not
// validated, and the caller reports the schema's problem as it is reported when listed.
var ErrNotCompiled = errors.New("the schema does not compile")

// ErrValidationSkipped reports a value too large (or too deep for a recursive schema) to
// validate within the work budget; the value is passed on unvalidated.
var ErrValidationSkipped = errors.New("validation skipped")

// Schema is one tool schema that passed the budget check when it was listed: compiled on
// first use (or during assembly, while the connect deadline allows), and then kept.
// Compiling runs on its own goroutine, so a caller whose deadline ends first returns at once;
// the compile still finishes (bounded by MaxSchemaNodes) and serves the next call.
type Schema struct {
	raw     json.RawMessage
	stats   schemaStats
	maxWork int64 // per validation, worst case
	keep    bool  // keep the schema compiled by the assembly check
	// fast is the schema's fast form (fast.go), nil when it is outside that subset: a value
	// it accepts is valid without compiling; a fast schema is not compiled at assembly.
	fast *fastSchema

	mu        sync.Mutex // guards the fields below
	sch       *Compiled
	err       error         // the compile error, for good
	compiling chan struct{} // non-nil while a compile runs; closed when it ends
}

// Cache holds a server's measured schemas by their bytes, so a re-listing (after
// tools/list_changed, or a redial) compiles only the schemas whose bytes changed. It keys
// them by the bytes' SHA-256, not by a copy of the bytes: the tool keeps its schema's bytes
// already, and a copy per schema was a twelfth of a connected server's heap.
type Cache struct {
	mu   sync.Mutex // guards m
	m    map[schemaKey]*schemaEntry
	used map[schemaKey]*schemaEntry // entries of the listing being converted
}

// schemaKey is a schema's key in a Cache: the SHA-256 of its bytes.
type schemaKey [sha256.Size]byte

// schemaEntry is a measured schema: a Schema, or the reason validation is off.
type schemaEntry struct {
	l          *Schema
	err        error // non-nil: over budget or not compilable
	overBudget bool
}

// Begin starts converting a listing; End keeps only the schemas that listing used.
func (c *Cache) Begin() {
	c.mu.Lock()
	c.used = map[schemaKey]*schemaEntry{}
	c.mu.Unlock()
}

func (c *Cache) End() {
	c.mu.Lock()
	c.m, c.used = c.used, nil
	c.mu.Unlock()
}

// Limits are the budgets of one schema: MaxCost, the worst-case number of subschema
// applications for one instance location ($ref targets and allOf/anyOf/oneOf branches counted
// each time they are reached, as if every branch were taken); MaxNodes, the subschemas of one
// schema, which bounds compile time (quadratic in the validator library).
type Limits struct {
	MaxCost  int
	MaxNodes int
}

func (lim Limits) schemaLimits() schemaLimits {
	return schemaLimits{maxCost: int64(lim.MaxCost), maxNodes: lim.MaxNodes, maxDepth: MaxSchemaDepth}
}

// Schema returns the validator of raw (what: "inputSchema" or "outputSchema"), or nil and a
// problem saying why validation is off. The first time a schema's bytes are seen it is
// measured against lim, whatever is left of ctx (measuring is linear in the schema's size,
// which is capped, so a finding never depends on the machine's load), and, while ctx
// allows, compiled to find errors (compiling is quadratic; a schema not compiled in time is
// compiled on first use). An inputSchema is not compiled here but on its first use (its
// tool's first call), once: most listed tools are never called, and compiling them all
// at assembly was a seventh of its time at 1,000 servers.
func (c *Cache) Schema(ctx context.Context, raw json.RawMessage, what string, lim Limits) (*Schema, string) {
	key := schemaKey(sha256.Sum256(raw))
	c.mu.Lock()
	e := c.m[key]
	if e == nil {
		e = c.used[key]
	}
	c.mu.Unlock()
	if e == nil {
		e = measure(raw, lim.schemaLimits())
	}
	if e.l != nil && what != "inputSchema" { // an inputSchema is compiled on its first call
		if err := e.l.check(ctx); err != nil {
			e = &schemaEntry{err: err}
		}
	}
	c.mu.Lock()
	if c.used != nil {
		c.used[key] = e
	}
	c.mu.Unlock()
	if e.err != nil {
		return nil, schemaProblem(what, e.overBudget, e.err)
	}
	return e.l, ""
}

// measure decodes raw and checks it against the budgets.
func measure(raw json.RawMessage, lim schemaLimits) *schemaEntry {
	if len(raw) > MaxSchemaBytes {
		return &schemaEntry{err: fmt.Errorf("it is larger than %d bytes", MaxSchemaBytes), overBudget: true}
	}
	doc, err := decodeJSON(raw)
	if err != nil {
		return &schemaEntry{err: err}
	}
	stats, err := measureSchema(doc, lim)
	if errors.Is(err, errUnresolvedRef) {
		// Most likely an external reference, which the compiler refuses: say so. (The node
		// count is within budget, so compiling is bounded.)
		if _, cerr := compileDoc(doc); cerr != nil {
			return &schemaEntry{err: cerr}
		}
	}
	if err != nil {
		return &schemaEntry{err: err, overBudget: true}
	}
	return &schemaEntry{l: &Schema{
		raw:     raw,
		stats:   stats,
		maxWork: lim.maxCost * CallWorkFactor,
		keep:    stats.nodes > keepCompiledNodes,
		fast:    compileFast(doc),
	}}
}

// schemaProblem words the ToolProblem of a schema that is not used: over a budget, or not
// compilable.
func schemaProblem(what string, overBudget bool, err error) string {
	verdict := "does not compile"
	if overBudget {
		verdict = "is over the validation budget"
	}
	consequence := ", arguments are not validated"
	if what == "outputSchema" {
		consequence = ""
		if overBudget {
			consequence = ", structuredContent is not checked"
		}
	}
	return what + " " + verdict + consequence + ": " + redact.Line(err.Error(), 300)
}

// check compiles the schema to find errors, waiting no longer than ctx; a compile that
// outlives ctx finishes in the background. Once the schema compiled, a small one is dropped
// again (see keepCompiledNodes).
func (l *Schema) check(ctx context.Context) error {
	if ctx.Err() != nil || (l.fast != nil && !l.keep) {
		// No time left, or a small schema of the fast subset (which always compiles, and
		// is compiled only when a value fails the fast walk): compile on first use.
		return nil
	}
	l.mu.Lock()
	known := l.sch != nil || l.err != nil
	l.mu.Unlock()
	if known {
		return l.compileErr()
	}
	sch, err := l.get(ctx)
	if err != nil && ctx.Err() != nil {
		return nil
	}
	if sch != nil && !l.keep {
		l.mu.Lock()
		if l.sch == sch {
			l.sch = nil
		}
		l.mu.Unlock()
	}
	return l.compileErr()
}

func (l *Schema) compileErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// get returns the compiled schema, compiling it if needed, or ctx's error when ctx ends
// first. A schema that does not compile returns its compile error every time.
func (l *Schema) get(ctx context.Context) (*Compiled, error) {
	l.mu.Lock()
	if l.sch != nil || l.err != nil {
		defer l.mu.Unlock()
		return l.sch, l.err
	}
	ch := l.compiling
	if ch == nil {
		ch = make(chan struct{})
		l.compiling = ch
		go l.compile(ch)
	}
	l.mu.Unlock()
	select {
	case <-ch:
		l.mu.Lock()
		sch, err := l.sch, l.err
		l.mu.Unlock()
		if sch == nil && err == nil { // dropped by check meanwhile: compile again, unlocked
			return Compile(l.raw)
		}
		return sch, err
	case <-ctx.Done():
		return nil, fmt.Errorf("compiling the schema did not finish in time: %w", ctx.Err())
	}
}

func (l *Schema) compile(done chan struct{}) {
	sch, err := Compile(l.raw)
	l.mu.Lock()
	l.sch, l.err, l.compiling = sch, err, nil
	l.mu.Unlock()
	close(done)
}

// Validate checks a decoded value against the schema within the work budget and ctx. It
// returns ErrValidationSkipped (wrapped) when the worst case of this value is over the
// budget, ctx's error (wrapped) when ctx ended first, and a validation error (wrapping
// ErrInvalidArguments) when the value does not match.
func (l *Schema) Validate(ctx context.Context, inst any) error {
	nodes, depth := valueSize(inst, costDepth+1)
	if depth > costDepth && l.stats.recursive {
		return fmt.Errorf("%w: the value nests more than %d levels deep and the schema is recursive", ErrValidationSkipped, costDepth)
	}
	work := l.stats.cost
	if work > 0 && nodes > l.maxWork/work {
		return fmt.Errorf("%w: %d values against a schema of worst-case cost %d is over the work budget of %d", ErrValidationSkipped, nodes, work, l.maxWork)
	}
	if l.fast != nil && l.fast.accepts(inst) {
		return nil
	}
	sch, err := l.get(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("%w: %w", ErrNotCompiled, err)
	}
	if work*nodes <= inlineWork {
		return validateInstance(sch, inst)
	}
	done := make(chan error, 1)
	go func() { done <- validateInstance(sch, inst) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("validation did not finish in time: %w", ctx.Err())
	}
}

// valueSize counts the values in v and its nesting depth, stopping at maxDepth.
func valueSize(v any, maxDepth int) (nodes int64, depth int) {
	var walk func(v any, d int)
	walk = func(v any, d int) {
		nodes++
		if d > depth {
			depth = d
		}
		if d > maxDepth {
			return
		}
		switch v := v.(type) {
		case map[string]any:
			for _, c := range v {
				walk(c, d+1)
			}
		case []any:
			for _, c := range v {
				walk(c, d+1)
			}
		}
	}
	walk(v, 1)
	return nodes, depth
}

// ValidateJSON validates a call's arguments (a JSON object NormalizeArgs accepted) against
// the schema, within the work budget and ctx: see Validate. Arguments over the budget give
// an error wrapping ErrValidationSkipped; the caller passes them on unvalidated (the server
// validates them).
func (l *Schema) ValidateJSON(ctx context.Context, args json.RawMessage) error {
	if l.fast != nil && l.fast.acceptsJSON(args) {
		return nil // read in place: no decoding, no compiling
	}
	inst, err := DecodeArgs(args)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidArguments, err)
	}
	return l.Validate(ctx, inst)
}

// CheckOutput checks a result's structuredContent (as go-sdk decoded it) against the tool's
// outputSchema and logs, under tool, when it does not match (Warn) or could not be checked
// (Debug). A mismatch is the server's problem, never the call's. It returns an error only
// for a schema found not to compile (wrapping ErrNotCompiled), for the caller to report.
func (l *Schema) CheckOutput(ctx context.Context, structured any, log *slog.Logger, tool string) error {
	err := l.Validate(ctx, ToValue(structured))
	switch {
	case err == nil:
	case errors.Is(err, ErrNotCompiled):
		return err
	case errors.Is(err, ErrValidationSkipped):
		log.Debug("structuredContent not checked against the outputSchema", "tool", tool, "reason", err)
	case ctx.Err() != nil:
		log.Debug("structuredContent not checked against the outputSchema", "tool", tool, "reason", err)
	default:
		msg := strings.TrimPrefix(err.Error(), ErrInvalidArguments.Error()+": ")
		log.Warn("structuredContent does not match the tool's outputSchema", "tool", tool, "err", redact.Line(msg, 300))
	}
	return nil
}

// NotCompiledProblem words the ToolProblem of a schema (what: "inputSchema" or
// "outputSchema") found not to compile on first use; err wraps ErrNotCompiled.
func NotCompiledProblem(what string, err error) string {
	return schemaProblem(what, false, errors.New(strings.TrimPrefix(err.Error(), ErrNotCompiled.Error()+": ")))
}

// Nodes is the number of subschemas the schema was measured to have (0 while measuring is
// deferred to first use).
func (l *Schema) Nodes() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats.nodes
}

// Compiled reports whether the compiled schema is kept now.
func (l *Schema) Compiled() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sch != nil
}
