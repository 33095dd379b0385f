package auth

import (
	"testing"
	"time"
)

// The proactive refresh comes at most half a token's lifetime early, whatever the jitter:
// with the default one-minute jitter a 60 s token is used for at least 20 s (60 - 30 - the
// 10 s expiry delta) before it is refreshed, never on every call.
func TestEarlyByBoundedByLifetime(t *testing.T) {
	tests := []struct {
		name         string
		share        float64
		jitter, life time.Duration
		want         time.Duration
	}{
		{"no jitter", 0.9, 0, time.Hour, 0},
		{"jitter below half the life", 0.5, time.Minute, time.Hour, 30 * time.Second},
		{"short token caps the jitter", 0.99, time.Minute, 60 * time.Second, time.Duration(0.99 * float64(30*time.Second))},
		{"share zero", 0, time.Minute, 60 * time.Second, 0},
		{"no expiry known", 0.5, time.Minute, 0, 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := earlyBy(tt.share, tt.jitter, tt.life); got != tt.want {
				t.Errorf("earlyBy(%v, %v, %v) = %v, want %v", tt.share, tt.jitter, tt.life, got, tt.want)
			}
		})
	}
	// For every share, a fresh 60 s token stays usable for at least 20 s.
	for i := range 100 {
		share := float64(i) / 100
		if used := 60*time.Second - expiryDelta - earlyBy(share, time.Minute, 60*time.Second); used < 20*time.Second {
			t.Errorf("share %.2f: a 60 s token is used for only %v before its refresh", share, used)
		}
	}
}
