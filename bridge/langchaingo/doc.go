// Package langchaingo gives a Set's MCP tools to langchaingo (github.com/tmc/langchaingo)
// two ways:
//
//   - Tools: each bridge.Tool as a tools.Tool, for langchaingo's agents (agents.NewExecutor
//     over agents.NewOneShotAgent, agents.NewConversationalAgent or
//     agents.NewOpenAIFunctionsAgent). The interface has no slot for a schema, so the
//     tool's inputSchema is written into its Description, and the agent's text input is
//     read as the JSON arguments.
//   - Functions and Run: for function calling with an llms.Model directly. Functions gives
//     the llms.Tool values for llms.WithTools, each with the inputSchema as its
//     FunctionDefinition.Parameters; Run answers one llms.ToolCall of the model's reply
//     with the llms.ToolCallResponse for the next message.
//
// # Schema
//
// In Functions, Parameters is the inputSchema as a json.RawMessage, the bytes the server
// sent: a provider that writes the request with encoding/json (langchaingo's openai,
// anthropic and ollama clients do) sends it unchanged but for white space. A provider that
// converts the schema into its own type (googleai's genai.Schema) keeps what that type
// has. In Tools the schema is text in the description, compacted, byte for byte as sent;
// what the model makes of it is up to the model. langchaingo's OpenAIFunctionsAgent offers
// every tool as one string argument (__arg1) whatever its schema: the model sees the
// schema only in the description there too.
//
// # Errors
//
// A failure the model can act on (a tool's own failure, invalid arguments, a BeforeCall
// denial, a tool the server does not offer) comes back as text with a nil error (see
// bridge.ForModel): the agent reads it as the observation and its run goes on. Transport
// failures, a closed server and the context ending are errors; the agent's executor stops
// on them.
//
// # Context and progress
//
// The ctx the agent or the caller passes reaches the server: cancelling it cancels the
// call, and progress reaches a callback set with bridge.WithProgress on it. langchaingo
// has no channel for a tool's progress (its callbacks.Handler has tool start, end and
// error only). Images and other non-text content reach the model as the bridge's text (see
// package results).
package langchaingo
