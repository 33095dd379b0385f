package tasks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ttalk/mcpbridge/internal/tasks"
)

// server is a Requester standing in for a session with a 2026-07-28 server whose task
// completes on the first tasks/get.
type server struct{}

func (server) Request(_ context.Context, _ time.Duration, _, method string, p *tasks.Params) (json.RawMessage, tasks.Flavour, error) {
	if method != "tasks/get" {
		return json.RawMessage(`{}`), tasks.FlavourExt, nil
	}
	return json.RawMessage(`{"taskId":"` + p.TaskID + `","status":"completed",
		"result":{"content":[{"type":"text","text":"42"}]}}`), tasks.FlavourExt, nil
}

func (server) Live() (tasks.Caps, tasks.Flavour, bool) {
	return tasks.Caps{Extension: true}, tasks.FlavourExt, true
}

func Example() {
	c := tasks.New(tasks.Config{Server: "calc", CallTimeout: time.Minute, TaskTimeout: time.Hour, Requester: server{}})
	ctx := context.Background()
	// The server answered a tools/call with a task handle.
	handle := json.RawMessage(`{"resultType":"task","taskId":"t1","status":"working","pollIntervalMs":0}`)
	run, err := c.Created(ctx, "answer", handle, "session 1", func(_ context.Context, t tasks.Task) {
		fmt.Println("status:", t.Status)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := c.Await(ctx, run)
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := json.Marshal(res.Content)
	fmt.Println(string(b))
	// Output:
	// status: working
	// status: completed
	// [{"type":"text","text":"42"}]
}
