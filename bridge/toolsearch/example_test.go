package toolsearch_test

import (
	"encoding/json"
	"fmt"

	"github.com/ttalk/mcpbridge/bridge/toolsearch"
)

func Example() {
	docs := []toolsearch.Document{
		{Name: "create_issue", Description: "Create a new issue in a GitHub repository", Server: "github"},
		{Name: "merge_pull_request", Description: "Merge a pull request", Server: "github"},
		{Name: "slack_post_message", Description: "Post a new message to a Slack channel", Server: "slack",
			Params: toolsearch.Params(json.RawMessage(`{"type":"object","properties":{"channel_id":{"type":"string"},"text":{"type":"string"}}}`))},
	}
	ix := toolsearch.New(docs)
	for _, h := range ix.Search("send a message to the team channel", 2) {
		fmt.Println(h.Name)
	}
	// Output:
	// slack_post_message
}
