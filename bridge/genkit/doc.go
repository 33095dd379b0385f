// Package genkit gives a Set's MCP tools to Firebase Genkit for Go
// (github.com/firebase/genkit/go) as its own tools: Define registers each bridge.Tool on a
// *genkit.Genkit and returns the ai.Tool values to pass to genkit.Generate with ai.WithTools
// (or to name in a prompt); Genkit's tool loop then runs them like any tool of its own.
//
//	g := genkit.Init(ctx, genkit.WithPlugins(...))
//	set, err := bridge.Connect(ctx, cfgs, nil)
//	...
//	tools, err := mcpgenkit.Define(g, set.Tools())
//	resp, err := genkit.Generate(ctx, g, ai.WithPrompt("..."), ai.WithTools(mcpgenkit.Refs(tools)...))
//
// (Genkit's own plugins/mcp connects to MCP servers too; this package gives Genkit the
// bridge's servers file, validation, hooks, sessions and result flattening.)
//
// # Schema
//
// Genkit offers the tools to the model in an order of its own, and holds a tool's
// inputSchema as a map[string]any, and the model plugins read it
// that way, so the schema is decoded with encoding/json and what that loses is lost: key
// order (properties included: Genkit writes a map's keys sorted) and number precision
// (every number is a float64, so an integer beyond 2^53 or a long decimal changes; a
// "maximum" of 12345678901234567890 reaches the model as 12345678901234567000). The model's
// arguments are decoded by Genkit the same way before they reach the tool, so a large
// integer argument is already rounded when the bridge sends it to the server.
//
// # Errors
//
// Genkit validates a tool's input against its schema itself and stops the whole Generate
// on any tool error. These tools are registered as actions of their own, so Genkit's check
// is not made: the bridge validates the arguments, and what bridge.ForModel makes of a
// failure the model can act on (a tool's own failure, invalid arguments, a BeforeCall
// denial, a tool the server no longer offers) is the tool's output, a string the model
// reads in its next turn. Transport failures, a closed server and the context ending are
// errors, which end Generate. Being actions of their own, the tool calls get no Genkit trace
// span (the bridge's OpenTelemetry spans remain, see bridge.Options).
//
// # Context and progress
//
// Genkit passes Generate's ctx to the tools: cancelling it cancels the call on the server,
// and progress reaches a callback set with bridge.WithProgress on that ctx. Genkit has no
// channel for a tool's progress: its streaming callback (ai.WithStreaming) is not given to
// tools, and the tool-role chunk is streamed only when every tool of the turn has returned.
// Images and other non-text content reach the model as the bridge's text (see package
// results).
package genkit
