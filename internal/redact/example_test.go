package redact_test

import (
	"errors"
	"fmt"

	"github.com/ttalk/mcpbridge/internal/redact"
)

func Example() {
	fmt.Println(redact.URL("https://user:pw@mcp.example.com/mcp?sk-live-abc&region=eu"))
	fmt.Println(redact.Args([]string{"-y", "server", "--api-key", "k-123", "--token=t-456", "--port", "8080"}))
	fmt.Println(redact.Keys(map[string]string{"GITHUB_TOKEN": "ghp_x", "DEBUG": "1"}))
	err := errors.New(`post "https://h/mcp?key=s3cret": connection refused`)
	fmt.Println(redact.Error(err, []string{"s3cret"}))
	// Output:
	// https://***@mcp.example.com/mcp?***&region=***
	// [-y server --api-key *** --token=*** --port 8080]
	// {DEBUG=***,GITHUB_TOKEN=***}
	// post "https://h/mcp?key=***": connection refused
}

// An untrusted server's message goes into an error as one bounded, quoted line.
func ExampleQuote() {
	msg := "bad\nrequest: \x1b[31mred"
	fmt.Println(redact.Quote(redact.OneLine(msg), 12))
	fmt.Println(redact.Line("first\nsecond third", 12))
	// Output:
	// "bad request:…"
	// first second…
}
