// Package catalog turns a server's tools/list into the bridge's catalogue: it fetches every
// page with the raw tool objects the transport captured, within a budget (List), converts
// them into Tools (Converter: schemas checked and compiled, MCP Apps metadata, task
// support, problems found), releases go-sdk's decoded copies once they are converted
// (Release), applies a server's include and exclude globs (Selected), caps descriptions and
// explains tools go-sdk dropped, makes a re-listing follow the catalogue it replaces (Merge,
// Relister) and names tools for the model, deterministically and uniquely within a set
// (Namer, Sanitize).
//
// It knows no type of package bridge: the bridge holds the catalogue under its own lock and
// calls these functions, each a step of assembly, re-listing or a user's listing. Limits it
// applies are rows of bridge/limits.go's table; those it does not declare (Limits) the
// caller passes in.
package catalog
