// Package provider hands bridge tools to model APIs in the shape each one expects, and
// brings the model's tool calls back to the tools' Handlers.
//
// A bridge.Tool marshals to {name, description, parameters} with the server's inputSchema
// byte for byte. OpenAI (Chat Completions and Responses), Anthropic and Gemini each want a
// different envelope, and several reject schemas MCP servers commonly send. New builds a
// Toolset for one Format:
//
//	ts, err := provider.New(provider.FormatOpenAI, set.Tools(), &provider.Options{Strict: true})
//	req.Tools = ts            // json.Marshal(ts) is the request's "tools" array
//	reply, err := ts.Handle(ctx, toolCall) // a tool-call object in, the tool-result object out
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
// Property order is kept. The model's arguments are mapped back before the Handler runs
// (the nulls strict mode made it send for optional properties are dropped), and the Handler
// still validates them against the server's own schema, so the server only ever sees what
// its schema allows. A tool that cannot be made strict is sent with "strict": false; one
// that does not fit Gemini's "parameters" goes in "parametersJsonSchema"; Toolset.Reports
// says which and why.
//
// # Lint
//
// Lint and LintSchema report what a Target rejects, by rule (see Rules: each has an ID,
// the targets it applies to and a one-line reason). Adapt reports in Adapted.Remaining what
// is left after adapting. The lint and the adapter share one table of rules, and
// mcpbridge probe prints both.
package provider
