package slack_test

import (
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/internal/slack"
)

func TestLimit(t *testing.T) {
	for _, want := range []time.Duration{0, time.Second, time.Minute} {
		if l := slack.Limit(want); l < 2*want+10*time.Second {
			t.Errorf("Limit(%s) = %s, less than 2×want + 10s", want, l)
		}
	}
}

// A duration within the limit passes; one past it is reported.
func TestWithin(t *testing.T) {
	var rec recorder
	slack.Within(&rec, "fast", time.Second, time.Second)
	if rec.failed {
		t.Error("a duration within the limit was reported")
	}
	slack.Within(&rec, "slow", slack.Limit(time.Second)+time.Millisecond, time.Second)
	if !rec.failed {
		t.Error("a duration past the limit was not reported")
	}
}

type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }

func Example() {
	start := time.Now()
	// ... an operation bounded by a 1s timeout, against a real process ...
	took := time.Since(start)
	_ = took // in a test: slack.Within(t, "Connect", took, time.Second)
}
