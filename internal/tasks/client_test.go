package tasks

import (
	"testing"
	"time"
)

// The budget and the tap state one policy: a call is given the task timeout exactly when
// its tools/call is tapped as one that may become a task (force aside).
func TestBudgetMatchesTap(t *testing.T) {
	const call, task = time.Minute, time.Hour
	for _, mode := range []Mode{Auto, Always, Never} {
		c := New(Config{Mode: mode, CallTimeout: call, TaskTimeout: task})
		for _, caps := range []Caps{{}, {ToolsCall: true}, {ToolsCall: true, Cancel: true}, {Extension: true}} {
			for _, support := range []string{"", "forbidden", "optional", "required"} {
				_, tap, err := c.Tap(caps, support, `tool "x"`, false)
				if err != nil {
					t.Fatalf("mode %s caps %+v support %q: Tap: %v", mode, caps, support, err)
				}
				budget, isTask := c.Budget(call, caps, true, func() string { return support })
				if isTask != tap || (budget == task) != tap {
					t.Errorf("mode %s caps %+v support %q: tap %v, budget %s (task %v)", mode, caps, support, tap, budget, isTask)
				}
			}
			if b, isTask := c.Budget(call, caps, false, nil); b != call || isTask {
				t.Errorf("mode %s caps %+v, no session: budget %s (task %v)", mode, caps, b, isTask)
			}
		}
	}
}
