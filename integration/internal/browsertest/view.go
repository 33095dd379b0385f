package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// A Frame is an MCP App View frame (a sandboxed srcdoc iframe, which site isolation runs as
// its own target), driven through a DevTools session of its own that speaks only the
// Runtime, Log and Input domains.
//
// It does not attach a chromedp context to the frame (chromedp.WithTargetID): chromedp then
// loads the frame's DOM tree on the caller's goroutine while its target goroutine reads the
// same node map for the DOM events of a frame that is still loading or rendering, a data race
// inside chromedp (v0.23.1, target.go documentUpdated against domEvent) that the race
// detector reports now and then. A Frame needs no DOM tracking: it evaluates JavaScript in the
// frame and clicks with real mouse events at an element's position.
type Frame struct {
	t       testing.TB
	ctx     context.Context // the tab's: its browser carries the session
	b       *chromedp.Browser
	session target.SessionID

	mu      sync.Mutex
	next    int64
	pending map[int64]chan viewReply
	console []string
}

// viewReply is the answer to one command sent to the View's session.
type viewReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// View waits for an MCP App View frame (an "iframe" target at about:srcdoc) that is not in
// seen, attaches a session to it and returns it with its target ID. The session ends with
// the test.
func View(t testing.TB, ctx context.Context, seen ...target.ID) (*Frame, target.ID) {
	t.Helper()
	deadline := time.Now().Add(Timeout)
	for time.Now().Before(deadline) {
		infos, err := chromedp.Targets(ctx)
		if err != nil {
			t.Fatalf("listing targets: %v", err)
		}
		for _, info := range infos {
			if info.Type == "iframe" && info.URL == "about:srcdoc" && !slices.Contains(seen, info.TargetID) {
				return attach(t, ctx, info.TargetID), info.TargetID
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatal("no MCP App View frame appeared")
	return nil, ""
}

// attach opens a session to the frame's target. The session is not flattened: its answers
// and events arrive as the browser's Target.receivedMessageFromTarget events, which this
// View reads on one goroutine of its own, so nothing of chromedp's target bookkeeping sees
// them.
func attach(t testing.TB, ctx context.Context, id target.ID) *Frame {
	t.Helper()
	c := chromedp.FromContext(ctx)
	if c == nil || c.Browser == nil {
		t.Fatal("browsertest.View needs the context of a started tab (browsertest.New)")
	}
	v := &Frame{t: t, ctx: ctx, b: c.Browser, pending: map[int64]chan viewReply{}}
	events, unsubscribe := v.b.Subscribe("Target.receivedMessageFromTarget")
	var res struct {
		SessionID target.SessionID `json:"sessionId"`
	}
	if err := v.b.Call(ctx, target.CommandAttachToTarget, map[string]any{"targetId": id, "flatten": false}, &res); err != nil {
		unsubscribe()
		t.Fatalf("attaching to the View frame %s: %v", id, err)
	}
	v.session = res.SessionID
	done := make(chan struct{})
	go func() {
		defer close(done)
		for raw := range events {
			v.receive([]byte(raw))
		}
	}()
	t.Cleanup(func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = v.b.Call(dctx, target.CommandDetachFromTarget, map[string]any{"sessionId": v.session}, nil)
		unsubscribe()
		<-done
	})
	v.send("Runtime.enable", nil, nil)
	v.send("Log.enable", nil, nil)
	return v
}

// receive handles one Target.receivedMessageFromTarget event: an answer to a command of this
// View, or an event of its frame (console output is kept for Console).
func (v *Frame) receive(raw []byte) {
	var ev struct {
		SessionID target.SessionID `json:"sessionId"`
		Message   string           `json:"message"`
	}
	if json.Unmarshal(raw, &ev) != nil || ev.SessionID != v.session {
		return
	}
	var msg struct {
		ID     int64           `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		viewReply
	}
	if json.Unmarshal([]byte(ev.Message), &msg) != nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if msg.ID != 0 {
		if ch, ok := v.pending[msg.ID]; ok {
			delete(v.pending, msg.ID)
			ch <- msg.viewReply
		}
		return
	}
	if line := consoleLine(msg.Method, msg.Params); line != "" && len(v.console) < 1000 {
		v.console = append(v.console, line)
	}
}

// consoleLine renders a console API call, an uncaught exception or a browser log entry (a
// CSP violation, say) as "type: text"; other events give "".
func consoleLine(method string, params json.RawMessage) string {
	switch method {
	case "Runtime.consoleAPICalled":
		var p struct {
			Type string `json:"type"`
			Args []struct {
				Value       any    `json:"value"`
				Description string `json:"description"`
			} `json:"args"`
		}
		if json.Unmarshal(params, &p) != nil {
			return ""
		}
		var text strings.Builder
		for i, a := range p.Args {
			if i > 0 {
				text.WriteByte(' ')
			}
			switch v := a.Value.(type) {
			case string:
				text.WriteString(v)
			case nil:
				text.WriteString(a.Description)
			default:
				fmt.Fprint(&text, v)
			}
		}
		return p.Type + ": " + text.String()
	case "Runtime.exceptionThrown":
		var p struct {
			ExceptionDetails struct {
				Text      string `json:"text"`
				Exception struct {
					Description string `json:"description"`
				} `json:"exception"`
			} `json:"exceptionDetails"`
		}
		if json.Unmarshal(params, &p) != nil {
			return ""
		}
		return "exception: " + p.ExceptionDetails.Text + " " + p.ExceptionDetails.Exception.Description
	case "Log.entryAdded":
		var p struct {
			Entry struct {
				Level string `json:"level"`
				Text  string `json:"text"`
			} `json:"entry"`
		}
		if json.Unmarshal(params, &p) != nil {
			return ""
		}
		return p.Entry.Level + ": " + p.Entry.Text
	}
	return ""
}

// send runs one command in the View's session and decodes its result into res (when not
// nil), failing the test on an error or after Timeout.
func (v *Frame) send(method string, params, res any) {
	v.t.Helper()
	if err := v.call(method, params, res); err != nil {
		v.t.Fatalf("View %s: %v", method, err)
	}
}

// call is send that returns the error.
func (v *Frame) call(method string, params, res any) error {
	v.mu.Lock()
	v.next++
	id := v.next
	ch := make(chan viewReply, 1)
	v.pending[id] = ch
	v.mu.Unlock()
	defer func() {
		v.mu.Lock()
		delete(v.pending, id)
		v.mu.Unlock()
	}()
	msg, err := json.Marshal(map[string]any{"id": id, "method": method, "params": orEmpty(params)})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(v.ctx, Timeout)
	defer cancel()
	if err := v.b.Call(ctx, "Target.sendMessageToTarget", map[string]any{"sessionId": v.session, "message": string(msg)}, nil); err != nil {
		return err
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return fmt.Errorf("%s (%d)", r.Error.Message, r.Error.Code)
		}
		if res != nil {
			return json.Unmarshal(r.Result, res)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("no answer: %w", ctx.Err())
	}
}

// orEmpty gives an empty object for nil params: DevTools wants an object or nothing.
func orEmpty(params any) any {
	if params == nil {
		return map[string]any{}
	}
	return params
}

// eval evaluates expr in the View's frame (awaiting a promise) and decodes its value into
// out; an exception is an error.
func (v *Frame) eval(expr string, out any) error {
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := v.call("Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true}, &res); err != nil {
		return err
	}
	if d := res.ExceptionDetails; d != nil {
		return fmt.Errorf("%s %s", d.Text, d.Exception.Description)
	}
	if out == nil || len(res.Result.Value) == 0 {
		return nil
	}
	return json.Unmarshal(res.Result.Value, out)
}

// Poll waits until the JavaScript expression is truthy in the View's frame; an expression
// that throws counts as not yet.
func (v *Frame) Poll(what, expr string) {
	v.t.Helper()
	deadline := time.Now().Add(Timeout)
	var last error
	for time.Now().Before(deadline) {
		var ok bool
		if last = v.eval("Boolean("+expr+")", &ok); last == nil && ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	v.t.Fatalf("waiting for %s in the View (%s): %v", what, expr, last)
}

// EvalView evaluates expr in v's frame and decodes its value.
func EvalView[T any](v *Frame, expr string) T {
	v.t.Helper()
	var out T
	if err := v.eval(expr, &out); err != nil {
		v.t.Fatalf("evaluating %s in the View: %v", expr, err)
	}
	return out
}

// Click clicks, in order, the elements that the CSS selectors name in the View's frame: it
// waits for each, scrolls it into view and clicks its centre with the mouse (pressed and
// released, as a user does: the App sees a trusted click).
func (v *Frame) Click(what string, selectors ...string) {
	v.t.Helper()
	for _, selector := range selectors {
		sel, _ := json.Marshal(selector)
		v.Poll(what, "document.querySelector("+string(sel)+") !== null")
		var at struct{ X, Y float64 }
		if err := v.eval(`(() => { const e = document.querySelector(`+string(sel)+`); e.scrollIntoView({block: "center", inline: "center"});
			const r = e.getBoundingClientRect(); return {X: r.left + r.width / 2, Y: r.top + r.height / 2}; })()`, &at); err != nil {
			v.t.Fatalf("%s: locating %s: %v", what, selector, err)
		}
		for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
			p := map[string]any{"type": typ, "x": at.X, "y": at.Y}
			if typ != "mouseMoved" {
				p["button"], p["clickCount"] = "left", 1
			}
			if err := v.call("Input.dispatchMouseEvent", p, nil); err != nil {
				v.t.Fatalf("%s: clicking %s: %v", what, selector, err)
			}
		}
	}
}

// Console returns what the View's frame has written to its console so far (console API
// calls, uncaught exceptions, browser log entries such as CSP violations), at most 1,000
// lines.
func (v *Frame) Console() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.console)
}
