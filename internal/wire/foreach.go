package wire

import (
	"bytes"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// wireMessage is the subset of a JSON-RPC message the capture needs.
type wireMessage struct {
	ID     any             `json:"id"`
	Method *string         `json:"method"`
	Result json.RawMessage `json:"result"`
}

// ForEachMessage decodes data as one JSON-RPC message or a batch (array) of
// them and calls f for each element that decodes. Invalid input is ignored:
// go-sdk reports protocol errors, the callers only observe.
func ForEachMessage(data []byte, f func(id jsonrpc.ID, method *string, result json.RawMessage)) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return
	}
	one := func(raw []byte) {
		var m wireMessage
		if json.Unmarshal(raw, &m) != nil {
			return
		}
		id, err := jsonrpc.MakeID(m.ID)
		if err != nil || !id.IsValid() {
			return
		}
		f(id, m.Method, m.Result)
	}
	if data[0] != '[' {
		one(data)
		return
	}
	var batch []json.RawMessage
	if json.Unmarshal(data, &batch) != nil {
		return
	}
	for _, raw := range batch {
		one(raw)
	}
}
