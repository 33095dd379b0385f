package serve_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The page follows a call that runs as an MCP task: GET /api/calls/{id} shows the task's
// status lines and its request for input, POST /api/calls/{id}/input answers it, and the
// call then completes with what the answer made. Unknown calls and answers are refused.
func TestCallsFollowTask(t *testing.T) {
	h := startAskHost(t)
	hdr := map[string]string{"Cookie": "mcpbridge_token_" + h.Origin()[strings.LastIndex(h.Origin(), ":")+1:] + "=" + token(h), "Content-Type": "application/json"}

	result := make(chan string, 1)
	go func() { // not the test goroutine: no t.Fatal here
		req, _ := http.NewRequestWithContext(t.Context(), "POST", h.Origin()+"/api/call",
			strings.NewReader(`{"server":"ask","tool":"greet-later","arguments":{},"callId":"call-1"}`))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			result <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		result <- string(b)
	}()
	var view struct {
		Lines []string
		Input *struct{ ID, TaskID, Mode, Message string }
	}
	deadline := time.Now().Add(30 * time.Second)
	for view.Input == nil {
		if time.Now().After(deadline) {
			t.Fatalf("no request for input shown; last view %+v", view)
		}
		time.Sleep(20 * time.Millisecond) // polling the page's API, as the page does; bounded by the deadline
		resp, body := send(t, "GET", h.Origin()+"/api/calls/call-1", hdr, "")
		if resp.StatusCode == 200 {
			_ = json.Unmarshal([]byte(body), &view)
		}
	}
	if view.Input.TaskID != "greet-1" || view.Input.Message != "Whom shall I greet?" || view.Input.Mode != "form" {
		t.Errorf("input = %+v", view.Input)
	}
	if !strings.Contains(strings.Join(view.Lines, "\n"), `task "greet-1": working: looking`) {
		t.Errorf("lines = %q, want the task's status", view.Lines)
	}
	for _, bad := range []struct{ path, body string }{
		{"/api/calls/call-1/input", `{"input":"999","action":"accept"}`},
		{"/api/calls/nope/input", `{"input":"` + view.Input.ID + `","action":"accept"}`},
		{"/api/calls/call-1/input", `{"input":"` + view.Input.ID + `","action":"maybe"}`},
	} {
		if resp, body := send(t, "POST", h.Origin()+bad.path, hdr, bad.body); resp.StatusCode == 200 {
			t.Errorf("POST %s %s = 200 %s, want refused", bad.path, bad.body, body)
		}
	}
	resp, body := send(t, "POST", h.Origin()+"/api/calls/call-1/input", hdr, `{"input":"`+view.Input.ID+`","action":"accept","content":{"name":"Ada"}}`)
	if resp.StatusCode != 200 {
		t.Fatalf("answer = %d %s", resp.StatusCode, body)
	}
	var r struct{ ModelText, Error string }
	_ = json.Unmarshal([]byte(<-result), &r)
	if r.ModelText != "hello accept:Ada" || r.Error != "" {
		t.Errorf("call = %+v, want the greeting made from the answer", r)
	}
	if resp, _ := send(t, "GET", h.Origin()+"/api/calls/call-1", hdr, ""); resp.StatusCode != 404 {
		t.Errorf("a finished call is still followed: %d", resp.StatusCode)
	}
}
