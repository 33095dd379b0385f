// Package tasks is the client side of MCP tasks, which go-sdk v1.8.0 does not speak: the
// experimental tasks of protocol 2025-11-25 (a tools/call augmented with "task", then
// tasks/get, tasks/result, tasks/cancel) and the tasks extension io.modelcontextprotocol/tasks
// of 2026-07-28 (the server answers any tools/call with a task handle when it likes; then
// tasks/get, which carries the result, tasks/update for input, tasks/cancel).
//
// wire.go reads the two versions' shapes, leniently and bounded; client.go holds one
// server's policy (which calls run as tasks, Tap and Budget) and its tasks in flight; run.go
// is the lifecycle (poll at a bounded pollInterval, answer input, fetch the result, cancel
// when the caller gives up); notify.go wakes it on the server's status notifications, which
// the session layer hands to Client.Notified (a [Sink]). The package knows no bridge type: it sends through a
// [Requester] (the session layer's request on the live session) and tells the host through
// the hooks of [Config]. The public types (Task, Status, Error) are aliased by package
// bridge; the task mode (Mode) is aliased by bridge/config as TaskMode.
package tasks
