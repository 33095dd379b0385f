package callheaders_test

import (
	"context"
	"fmt"
	"net/http"

	"github.com/ttalk/mcpbridge/internal/callheaders"
)

func Example() {
	ctx := callheaders.With(context.Background(), http.Header{"authorization": {"Bearer a"}, "Mcp-Session-Id": {"forged"}})
	ctx = callheaders.With(ctx, http.Header{"X-Tenant": {"t2"}})
	h := callheaders.From(ctx)
	fmt.Println(h.Get("Authorization"), h.Get("X-Tenant"), h.Get("Mcp-Session-Id") == "")
	// Output: Bearer a t2 true
}
