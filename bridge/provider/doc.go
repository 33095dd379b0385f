// Package provider hands bridge tools to model APIs in the shape each one expects, and
// brings the model's tool calls back to the tools' Handlers.
//
// A bridge.Tool marshals to {name, description, parameters} with the server's inputSchema
// byte for byte. OpenAI (Chat Completions and Responses), Anthropic and Gemini each want a
// different envelope, and several reject schemas MCP servers commonly send. New builds a
// Toolset for one Format; it speaks JSON, for any client:
//
//	ts, err := provider.New(provider.FormatOpenAI, set.Tools(), &provider.Options{Strict: true})
//	tools, err := json.Marshal(ts)         // the request's "tools": [{"type":"function","function":{…}}]
//	reply, err := ts.Handle(ctx, toolCall) // a tool_calls element's JSON in, a "tool" message's JSON out
//
// With an official SDK, use its glue module instead, each a Toolset in the SDK's own types
// (the SDK's tool params for the request, its tool-call values in, its tool-result params out) and its own Go
// module: bridge/provider/openai (openai-go/v3: Chat Completions and Responses),
// bridge/provider/anthropic (anthropic-sdk-go/v2) and bridge/provider/gemini
// (google.golang.org/genai).
//
// Toolset.Run and Toolset.ResultMessage are the two halves of Handle for hosts that want the
// Go error (a *results.ToolError, bridge.ErrInvalidArguments, bridge.ErrUnknownTool, or a server
// error; bridge.ForModel tells the model's from the host's); the model always gets the text.
// The examples are runnable agent-loop turns without network, one per API. The package
// depends on no provider SDK; integration tests decode its output into the official SDKs'
// types.
//
// # Formats
//
// Each Format is one value in format.go holding everything that differs per model API: its
// envelope (the shape of the "tools" array), its call parser (a tool call in), its result
// message (a tool result out) and its schema choice (the Target schemas are written for,
// per Options). The doc of each Format constant gives the three shapes. Formats lists them
// all; adding a model API is adding one such value.
//
// # Schema adaptation (opt-in)
//
// By default schemas go out as the server sent them. With Options.Strict (OpenAI),
// Options.Adapt or Options.GeminiParameters each schema is rewritten for its target field
// (see Target and Adapt): top-level combinators merged away, local $refs inlined, keywords
// the target refuses removed and, where they constrain values, restated in the description,
// and for OpenAI strict mode every property required with the optional ones made nullable.
// Property order is kept. In detail: top-level anyOf/oneOf/allOf are merged into the
// object, local $refs inlined (recursion cut at 8 references, size bounded), draft-4 boolean
// exclusiveMinimum rewritten, keywords the field refuses removed and, when they constrain
// values, restated in the description (minLength: 1, format uri), const turned into a
// one-value enum, type lists into nullable or anyOf for Gemini, and for OpenAI strict every
// property required with the optional ones made nullable and additionalProperties: false
// everywhere.
//
// The model's arguments are mapped back before the Handler runs: the nulls strict mode made
// it send for optional properties are dropped (strict mode cannot say "absent"), and the
// Handler still validates them against the server's own schema, so the server only ever sees
// what its schema allows. A tool that cannot be made strict (a free-form object or map, an
// array without items, an untyped value) is sent with "strict": false; one that does not fit
// Gemini's "parameters" goes in "parametersJsonSchema"; Toolset.Reports says which and why.
// A property-based test generates arguments valid for every schema of the npm servers in
// integration/ (captured in testdata/servers) and for hand-written hard cases, and checks
// that each adapted schema accepts them and that the mapping back restores them.
//
// # Deferred loading
//
// Hundreds of tools cost a model tens of thousands of tokens on every turn. With
// Options.Defer the model starts with a search instead and loads what it needs, each API
// its own way (after the vendors' documentation):
//
//		ts, err := provider.New(format, set.Tools(), &provider.Options{Defer: &provider.Deferral{}})
//		conv := ts.Conversation()          // per conversation
//		tools, err := json.Marshal(conv)   // this turn's tools
//		out, err := conv.Handle(ctx, call) // tool calls and search calls alike
//
//	  - OpenAI Responses: the deferred functions of each server go into one
//	    {"type":"namespace"} (named after the server, described by the first paragraph of its
//	    instructions, or its name, and its tool names) with "defer_loading": true, plus
//	    {"type":"tool_search"}: hosted (SearchHosted), or "execution":"client" (the default),
//	    whose tool_search_call items Handle answers with a tool_search_output item holding the
//	    namespaces and functions the index found. Calls arrive as function_call items with a
//	    "namespace"; ParseCall reads them as any call.
//	  - Anthropic: deferred tools carry "defer_loading": true, plus Anthropic's tool search tool
//	    (tool_search_tool_bm25_20251119 with SearchHosted, tool_search_tool_regex_20251119 with
//	    SearchRegex) or, by default, a search_tools tool whose tool_result holds tool_reference
//	    blocks naming what the index found.
//	  - Chat Completions and Gemini have no deferral: deferred tools are left out and a
//	    search_tools function returns the found tools' definitions as text (Result.Loaded names
//	    them). A Conversation remembers them and adds them to the next request's tools.
//
// What stays loaded: Deferral.Load globs, then Deferral.Defer globs, then the server's
// ServerConfig.Defer (servers.yaml "defer: true|false"), then the automatic threshold
// (MaxTools, MaxTokens). Run and Handle call deferred tools exactly as loaded ones. The
// client-side search is the bridge's own index (package bridge/toolsearch) over the deferred
// tools: names, descriptions, parameters, servers and their instructions. Toolset.Upfront is
// what the model reads before it searches; for the 450 tools of the compatibility sweep that
// is 1.3 to 1.8 % of the whole list (BENCHMARKS.md).
//
// # Lint
//
// Lint and LintSchema report what a Target rejects, by rule (see Rules: each has an ID,
// the targets it applies to and a one-line reason with the API's own error). The targets are
// openai, openai-strict, anthropic, gemini (parametersJsonSchema) and gemini-parameters (the
// OpenAPI subset). Adapt reports in Adapted.Remaining what is left after adapting. The lint
// and the adapter share one table of rules; mcpbridge probe prints both per server (--json:
// per tool), and mcpbridge tools FILE --format F [--strict] [--adapt] [--gemini-parameters]
// prints exactly what would be sent.
//
// On the npm servers in integration/ (go test ./integration -run TestProviderSchemas -v),
// tools rejected as sent → still rejected after adapting:
//
//	| server          | tools | openai | openai-strict | anthropic | gemini | gemini-parameters |
//	|-----------------|-------|--------|---------------|-----------|--------|-------------------|
//	| everything      | 13    | 0      | 13 → 0        | 0         | 0      | 13 → 0            |
//	| filesystem      | 14    | 0      | 14 → 0        | 0         | 0      | 14 → 0            |
//	| memory          | 9     | 0      | 9 → 0         | 0         | 0      | 9 → 0             |
//	| basic-vanillajs | 1     | 0      | 1 → 0         | 0         | 0      | 1 → 0             |
//	| system-monitor  | 1     | 0      | 1 → 0         | 0         | 0      | 1 → 0             |
//
// $schema alone makes Gemini's "parameters" reject every tool, and every optional property
// breaks strict mode.
//
// # Compatibility
//
// integration/sweep/run (a plain shell script, opt-in because it installs a lot) installs the
// popular npm MCP servers pinned in integration/sweep/package.json without their install
// scripts and probes each one through the bridge, with placeholder tokens where a server wants
// one at start-up and no real credentials. It rewrites the table below; integration/sweep/run
// --check fails instead when the result differs, so a regression against real servers shows
// up. The servers of integration/package.json stay in CI. Columns per model API field: tools
// rejected as sent → still rejected after adapting.
//
// The sweep's table (integration/sweep/run writes it):
//
//	| server | version | status | tools | openai | openai-strict | anthropic | gemini | gemini-parameters | notes |
//	|---|---|---|---|---|---|---|---|---|---|
//	| github | 2025.4.8 | ok | 26 | 0 | 18 → 0 | 0 | 0 | 26 → 0 | |
//	| gitlab | 2025.4.25 | ok | 9 | 0 | 8 → 0 | 0 | 0 | 9 → 0 | |
//	| gitlab-zereight | 2.1.64 | ok | 118 | 0 | 118 → 0 | 0 | 0 | 9 → 0 | |
//	| slack | 2025.4.25 | ok | 8 | 0 | 8 → 0 | 0 | 0 | 0 | |
//	| brave-search | 0.6.2 | ok | 2 | 0 | 2 → 0 | 0 | 0 | 0 | |
//	| google-maps | 0.6.2 | ok | 7 | 0 | 7 → 0 | 0 | 0 | 0 | |
//	| sequential-thinking | 2026.8.31 | ok | 1 | 0 | 1 → 0 | 0 | 0 | 1 → 0 | |
//	| puppeteer | 2025.5.12 | ok | 7 | 0 | 7 → 1 | 0 | 0 | 1 → 1 | |
//	| playwright | 0.0.83 | ok | 25 | 0 | 20 → 1 | 0 | 0 | 25 → 1 | |
//	| chrome-devtools | 1.11.0 | ok | 32 | 0 | 25 → 0 | 0 | 0 | 32 → 0 | |
//	| notion | 2.5.2 | ok | 24 | 0 | 24 → 7 | 0 | 24 → 0 | 24 → 8 | |
//	| sentry | 0.39.0 | ok | 9 | 0 | 9 → 1 | 0 | 0 | 9 → 1 | |
//	| supabase | 0.13.0 | failed (tools/list) | | | | | | | page 1: calling "tools/list": fetch failed |
//	| context7 | 4.1.1 | ok | 2 | 0 | 2 → 0 | 0 | 0 | 2 → 0 | |
//	| kubernetes | 4.1.7 | ok | 23 | 0 | 23 → 4 | 0 | 0 | 8 → 4 | |
//	| azure | 2.0.5 | ok | 61 | 0 | 61 → 55 | 0 | 0 | 61 → 55 | |
//	| hubspot | 0.4.0 | ok | 21 | 1 → 0 | 13 → 3 | 0 | 0 | 21 → 5 | |
//	| circleci | 0.20.0 | ok | 13 | 0 | 13 → 1 | 0 | 0 | 13 → 2 | |
//	| desktop-commander | 0.2.52 | ok | 26 | 0 | 13 → 2 | 0 | 0 | 26 → 3 | |
//	| firecrawl | 3.26.0 | ok | 29 | 0 | 23 → 1 | 0 | 0 | 29 → 10 | |
//	| tavily | 0.2.22 | ok | 5 | 0 | 5 → 0 | 0 | 0 | 0 | |
//	| exa | 3.4.1 | ok | 2 | 0 | 2 → 0 | 0 | 0 | 2 → 0 | |
//
//	21 of 22 servers connect, 450 tools.
//
// End of the sweep's table.
package provider
