//go:build linux

package transport

import (
	"os/exec"
	"testing"
)

// The PIDs a descendant can have: those handed out after the server's, up to the last one,
// across a wrap at pid_max; everything when the last is unknown.
func TestPIDWindow(t *testing.T) {
	tests := []struct {
		name         string
		leader, last int
		ok           bool
		in, out      []int
	}{
		{"no wrap", 100, 200, true, []int{101, 150, 200}, []int{2, 99, 100, 201, 5000}},
		{"wrapped", 30000, 50, true, []int{30001, 32767, 2, 50}, []int{51, 1000, 29999, 30000}},
		{"nothing since", 100, 100, true, nil, []int{99, 100, 101}},
		{"last unknown", 100, 0, false, []int{2, 100, 101, 99999}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := window(tt.leader, tt.last, tt.ok)
			for _, pid := range tt.in {
				if !in(pid) {
					t.Errorf("pid %d not in the window of leader %d, last %d", pid, tt.leader, tt.last)
				}
			}
			for _, pid := range tt.out {
				if in(pid) {
					t.Errorf("pid %d in the window of leader %d, last %d", pid, tt.leader, tt.last)
				}
			}
		})
	}
}

// lastPID reads the kernel's last PID: a process started just before is inside the window
// of an earlier one.
func TestLastPID(t *testing.T) {
	first := exec.Command("true")
	if err := first.Run(); err != nil {
		t.Fatal(err)
	}
	second := exec.Command("true")
	if err := second.Run(); err != nil {
		t.Fatal(err)
	}
	last, ok := lastPID()
	if !ok {
		t.Fatal("no last PID in /proc/loadavg")
	}
	if !pidWindow(first.Process.Pid)(second.Process.Pid) {
		t.Errorf("pid %d (started after %d) not in its window (last pid %d)", second.Process.Pid, first.Process.Pid, last)
	}
	if pidWindow(second.Process.Pid)(first.Process.Pid) {
		t.Errorf("pid %d (started before %d) in its window (last pid %d)", first.Process.Pid, second.Process.Pid, last)
	}
}
