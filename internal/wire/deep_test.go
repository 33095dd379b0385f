package wire

import (
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestTooDeepAnswer(t *testing.T) {
	deep := strings.Repeat(`[`, maxDepth+5) + strings.Repeat(`]`, maxDepth+5)
	tests := []struct {
		line   string
		wantID any // nil: no answer (the line stays noise)
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{"tools":` + deep + `}}`, "7"},
		{`{"result":{"x":` + deep + `},"jsonrpc":"2.0","id":"a\"b"}`, `a"b`},
		{`{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":` + deep + `}`, nil}, // a request
		{`{"jsonrpc":"2.0","method":"notifications/message","params":` + deep + `}`, nil},
		{`{"jsonrpc":"2.0","id":null,"result":` + deep + `}`, nil},
		{`[{"jsonrpc":"2.0","id":1,"result":` + deep + `}]`, nil}, // a batch
		{`{"jsonrpc":"2.0","id":1,"result":` + deep, nil},         // unterminated
		{`{"jsonrpc":"2.0","id":1,"result":"x"} trailing`, nil},
	}
	for _, tt := range tests {
		r := TooDeepAnswer([]byte(tt.line))
		switch {
		case tt.wantID == nil && r != nil:
			t.Errorf("%.60s…: answered %v, want no answer", tt.line, r.ID)
		case tt.wantID != nil && (r == nil || fmt.Sprint(r.ID.Raw()) != tt.wantID || r.Error == nil):
			t.Errorf("%.60s…: %+v, want an error answer for ID %v", tt.line, r, tt.wantID)
		case r != nil:
			if je, ok := r.Error.(*jsonrpc.Error); !ok || je.Code != jsonrpc.CodeParseError || !strings.Contains(je.Message, "nests deeper than 1000 levels") {
				t.Errorf("error = %v", r.Error)
			}
		}
	}
}
