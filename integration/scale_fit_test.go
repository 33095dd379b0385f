package integration

import (
	"math"
	"testing"
)

// TestFitLine checks BenchmarkScale's least-squares fit.
func TestFitLine(t *testing.T) {
	for _, tc := range []struct {
		name             string
		xs, ys           []float64
		slope, intercept float64
	}{
		{"exact line", []float64{10, 100, 1000}, []float64{25, 205, 2005}, 2, 5},
		{"flat", []float64{10, 100, 1000}, []float64{7, 7, 7}, 0, 7},
		{"falling", []float64{0, 1, 2, 3}, []float64{3, 2, 1, 0}, -1, 3},
		{"noise around a line", []float64{0, 1, 2, 3}, []float64{1, 2, 2, 3}, 0.6, 1.1},
		{"one x", []float64{100, 100}, []float64{4, 6}, 0, 5},
		{"one point", []float64{10}, []float64{3}, 0, 3},
		{"no points", nil, nil, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slope, intercept := fitLine(tc.xs, tc.ys)
			if math.Abs(slope-tc.slope) > 1e-9 || math.Abs(intercept-tc.intercept) > 1e-9 {
				t.Errorf("fitLine = %g, %g; want %g, %g", slope, intercept, tc.slope, tc.intercept)
			}
		})
	}
}
