// Package results turns the result of an MCP tools/call (a go-sdk *mcp.CallToolResult) into
// what an agent's model reads: one string from [Flatten], plus typed [Part] values from
// [Parts] for hosts whose model also takes images or audio (text, image, audio, resource and
// resource link parts, with MIME types and sizes).
//
// Flattening follows these rules, in order:
//
//  1. If structuredContent is present (and the tool is not an MCP App tool), the text starts
//     with its compact JSON (no HTML escaping): the bytes the server sent, compacted, in its
//     key order and with its numbers as written (strings spelt without needless escapes),
//     when the caller has them ([Options].Structured), else the encoding of the decoded
//     value. Then each fact is read once: a text block is dropped when it is a copy,
//     that is when, with the structured content's members being itself and every value in
//     it at any depth,
//     (a) it equals the compact JSON up to whitespace (or, for a string value, the string),
//     or it equals a string member as it is or trimmed; or
//     (b) it is one JSON value, in any formatting and key order, equal to a member that is
//     an object, an array, a string or a number; or
//     (c) it is a concatenation, with at least one member, of members and labels joined by
//     glue, where a member is written as a string member's text, a number member's
//     literal (any spelling of the same value; not inside a longer number or word), or a
//     JSON object, array or string equal to a member (JSON equal to no member or key
//     keeps the block); a label is an object key (ASCII
//     case ignored, or quoted as a JSON string); glue is whitespace, the separators
//     : , ; = | ( ) [ ] { } " ' and `, and runs of the marks - * # > . • that are
//     followed by whitespace, a separator or the end. Members and labels end on a word
//     boundary; true, false and null are facts of their own, never matched this way.
//     A block that carries anything else stays, in order, on following lines. The check
//     is bounded against hostile servers: the members indexed (200,000 values, 64 deep),
//     the blocks scanned for (c) (1 MiB each), the work per
//     byte of a block and per result; what runs past a bound keeps its block.
//  2. Otherwise the content blocks are rendered in order, one per line: text blocks as they
//     are, embedded text resources as a "[resource: <uri> (<mime>)]" header line followed by
//     their text, and images, audio, binary resources and resource links as short labelled
//     placeholders such as "[image: image/png, 5.4 KB]" or
//     "[resource link: demo://x (name, text/plain, 3 B)]". A block of a type this version
//     does not know (see [UnknownContentKey]) reads "[video: video/mp4, 1.2 MB]": its type,
//     MIME type and size when it gives them, cut and escaped. Binary payloads (and the
//     payload part of data: URIs) never appear in the text.
//  3. If that yields nothing (no content, or only empty or whitespace-only text blocks), the
//     text is the whole result as compact JSON with binary payloads elided to a size note and
//     without the _meta keys the MCP spec reserves for the protocol (such as the go-sdk's
//     "io.modelcontextprotocol/serverInfo"); an entirely empty result reads {"content":[]}.
//  4. For MCP App tools ([Options].App) the model reads content only: structuredContent is
//     meant for the App's UI and is ignored by rules 1 and 3.
//  5. The text is capped (default [DefaultMaxBytes]; package bridge takes the cap from
//     Options.MaxResultBytes) by [Truncate], which keeps the head and the tail and says how
//     many bytes it cut, never splitting UTF-8. A tool error keeps at least [MinErrorBytes].
//
// The text is always valid UTF-8 (invalid sequences in server data become U+FFFD) and never
// empty. A result with isError set is also returned as a *[ToolError] whose Text is the
// flattened text, so callers can tell a tool's own failure from a transport failure with
// errors.As.
//
// All functions are safe for concurrent use; they never modify the result they are given.
package results
