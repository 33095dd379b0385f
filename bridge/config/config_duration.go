package config

import (
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

func (p *parser) timeouts(s *serverState, k, v *yaml.Node) {
	n := deref(v)
	if n == nil || n.Kind != yaml.MappingNode {
		p.errorf(v, "server %q: timeouts must be a map with connect, call and/or task", s.id)
		return
	}
	for _, e := range p.pairs(n, "key") {
		switch e.key {
		case "connect":
			if p.claim(s, slotConnect, e.k) {
				s.sc.ConnectTimeout = p.duration(s, e.v, "timeouts.connect", 0)
			}
		case "call":
			if p.claim(s, slotCall, e.k) {
				s.sc.CallTimeout = p.duration(s, e.v, "timeouts.call", 0)
			}
		case "task":
			if p.claim(s, slotTaskTime, e.k) {
				s.sc.TaskTimeout = p.duration(s, e.v, "timeouts.task", 0)
			}
		case "list", "initialize", "init":
			p.errorf(e.k, "server %q: timeouts.%s is not supported: timeouts.connect covers start-up, initialize and tools/list", s.id, e.key)
		default:
			p.errorf(e.k, "server %q: unknown key %q in timeouts (want connect, call or task)", s.id, e.key)
		}
	}
}

// duration reads a positive duration: a Go duration string ("30s"), or, when unit is not 0,
// a number of units.
func (p *parser) duration(s *serverState, v *yaml.Node, field string, unit time.Duration) time.Duration {
	n := deref(v)
	if n == nil || n.Kind != yaml.ScalarNode || isNull(n) {
		p.errorf(v, "server %q: %s must be a duration such as 30s", s.id, field)
		return 0
	}
	var d time.Duration
	if n.Tag == "!!int" || n.Tag == "!!float" {
		if unit == 0 {
			p.errorf(v, "server %q: %s: %s has no unit (write %ss)", s.id, field, n.Value, n.Value)
			return 0
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err != nil || math.IsNaN(f) || f*float64(unit) > float64(MaxTimeout) {
			p.errorf(v, "server %q: %s: %s is not a usable number", s.id, field, n.Value)
			return 0
		}
		d = time.Duration(f * float64(unit))
	} else {
		var err error
		d, err = time.ParseDuration(n.Value)
		if err != nil {
			p.errorf(v, "server %q: %s: %w", s.id, field, err)
			return 0
		}
	}
	if d <= 0 {
		p.errorf(v, "server %q: %s must be greater than 0", s.id, field)
		return 0
	}
	if d > MaxTimeout {
		p.errorf(v, "server %q: %s is longer than %s", s.id, field, MaxTimeout)
		return 0
	}
	return d
}

// geminiTimeout reads "timeout": milliseconds (Gemini CLI). A number under 1000 is taken as
// seconds, Cline's unit for the same key, since a sub-second call timeout is never meant.
func (p *parser) geminiTimeout(s *serverState, v *yaml.Node) time.Duration {
	d := p.duration(s, v, "timeout", time.Millisecond)
	if n := deref(v); d > 0 && d < time.Second && (n.Tag == "!!int" || n.Tag == "!!float") {
		p.warnf(v, "server %q: timeout %s is read as seconds (Cline); Gemini's is milliseconds: write timeouts: {call: ...} to be explicit", s.id, n.Value)
		d *= 1000
	}
	return d
}

// connectTimeoutIn reads ServerConfig.ConnectTimeout: a Go duration, or a number of units.
func connectTimeoutIn(unit time.Duration) keyReader {
	return func(p *parser, s *serverState, k, v *yaml.Node) {
		s.sc.ConnectTimeout = p.duration(s, v, k.Value, unit)
	}
}

// callTimeoutIn reads ServerConfig.CallTimeout: a Go duration, or a number of units.
func callTimeoutIn(unit time.Duration) keyReader {
	return func(p *parser, s *serverState, k, v *yaml.Node) {
		s.sc.CallTimeout = p.duration(s, v, k.Value, unit)
	}
}

// readGeminiTimeout reads "timeout" into ServerConfig.CallTimeout.
func readGeminiTimeout(p *parser, s *serverState, _, v *yaml.Node) {
	s.sc.CallTimeout = p.geminiTimeout(s, v)
}
