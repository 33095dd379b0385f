// Package eino gives a Set's MCP tools to CloudWeGo Eino (github.com/cloudwego/eino) as its
// own tool values: each bridge.Tool becomes a tool.InvokableTool whose Info is a
// *schema.ToolInfo with the tool's inputSchema, for a compose.ToolsNode, the ReAct flow
// (flow/agent/react) or an ADK ChatModelAgent (adk.ToolsConfig).
//
//	set, err := bridge.Connect(ctx, cfgs, nil)
//	...
//	tools, err := eino.Tools(set.Tools(), nil)
//	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
//		Model: model, ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: tools}},
//	})
//
// # Schema
//
// Eino holds a tool's parameters as an *eino-contrib/jsonschema.Schema. The inputSchema is
// decoded into one keyword by keyword: the order of "properties" is kept (the type keeps
// it), and so is every number as the server spelled it (minimum, enum, default, const and
// examples included: they are decoded as json.Number, never float64). What Eino's type has
// no field for ("definitions", "dependencies", draft-4's boolean exclusiveMaximum, a tuple
// "items" array, "x-" extensions, ...) is kept in Schema.Extras, so it is sent too. Lost:
// the order of keywords within a schema object (Eino writes its fields in their order, then
// the extras sorted by name), string escapes (re-encoded), and the spelling of an empty
// subschema: {} is written as true, which means the same. A schema Eino's type cannot
// hold at all is an error of Tools naming the tool; the bridge has already validated it.
//
// # Errors
//
// InvokableRun returns what bridge.ForModel makes of the call: a tool's own failure, invalid
// arguments, a BeforeCall denial and a tool the server no longer offers come back as text
// with a nil error, so the ToolsNode answers the model and the agent's run goes on;
// transport failures, a closed server and the context ending are errors, which stop the
// run as Eino stops it for any failing tool.
//
// # Context and progress
//
// The ctx Eino passes to InvokableRun is the call's: cancelling the agent's run cancels the
// call on the server, and bridge.WithProgress set on the run's ctx works as anywhere. With
// Options.AgentEvents, inside an ADK agent's run (adk.ChatModelAgent, through adk.Runner),
// each progress notification of a call in flight is sent into the agent's event stream
// with adk.SendEvent instead, as an *adk.AgentEvent whose Output.CustomizedOutput is a
// bridge.Progress. Eino's callbacks (OnStart, OnEnd) carry no
// intermediate events, and a compose graph or the ReAct flow has no event stream: there
// progress reaches only a WithProgress callback. Images and other non-text content reach
// the model as the bridge's text (see package results).
package eino
