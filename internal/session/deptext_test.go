package session

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// go-sdk's stdio connection reports a line over MaxLineLength with the text sdkFrameTooLarge
// matches.
func TestDepTextFrameTooLarge(t *testing.T) {
	r, w := io.Pipe()
	defer r.Close()
	conn, err := (&mcp.IOTransport{Reader: r, Writer: nopWriteCloser{}, MaxLineLength: 64}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go func() { _, _ = w.Write([]byte(`{"jsonrpc":"2.0","method":"` + strings.Repeat("x", 1024) + "\n")) }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = conn.Read(ctx)
	if err == nil || !sdkFrameTooLarge(err) {
		t.Fatalf("Read of an oversized line = %v; sdkFrameTooLarge no longer recognises go-sdk's error", err)
	}
}

type nopWriteCloser struct{}

func (nopWriteCloser) Write(p []byte) (int, error) { return len(p), nil }
func (nopWriteCloser) Close() error                { return nil }

// A request on a go-sdk session whose connection is closing fails with the error
// sdkClientClosing matches (so notSent can tell it never reached the server).
func TestDepTextClientClosing(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	_ = cs.Close()
	err = cs.Ping(context.Background(), nil)
	if err == nil || !sdkClientClosing(err) {
		t.Fatalf("Ping after Close = %v; sdkClientClosing no longer recognises go-sdk's error", err)
	}
}
