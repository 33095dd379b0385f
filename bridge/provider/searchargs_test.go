package provider

import (
	"context"
	"errors"
	"testing"

	"github.com/ttalk/mcpbridge/bridge"
)

// A search call's bad arguments are the model's to fix.
func TestSearchArgumentsAreInvalidArguments(t *testing.T) {
	ts, err := New(FormatOpenAI, []bridge.Tool{{Name: "a", Parameters: []byte(`{"type":"object","properties":{}}`)}}, &Options{Defer: &Deferral{}})
	if err != nil {
		t.Fatal(err)
	}
	r := ts.Run(context.Background(), Call{ID: "1", Name: searchToolName, Arguments: []byte(`{"query":""}`)})
	if !errors.Is(r.Err, bridge.ErrInvalidArguments) || func() bool { _, err := bridge.ForModel(r.Text, r.Err); return err != nil }() {
		t.Errorf("search with an empty query: %v, want invalid arguments", r.Err)
	}
}
