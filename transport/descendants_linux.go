//go:build linux

package transport

import (
	"bytes"
	"log/slog"
	"os"
	"strconv"
	"syscall"
)

// killTagged SIGKILLs every process (of this user; others' environments are unreadable)
// whose environment holds TagEnv=tag: the descendants of a stdio server that left its
// process group. It repeats while it finds some (a dying daemon may have forked again), at
// most a few rounds, and returns how many it signalled.
func killTagged(tag string, log *slog.Logger) int {
	if tag == "" {
		return 0
	}
	want := []byte(TagEnv + "=" + tag)
	self := os.Getpid()
	total := 0
	for range 4 {
		n := 0
		for _, pid := range taggedPIDs(want, self) {
			// os.FindProcess holds a pidfd on Linux, so the signal reaches this process
			// even if its PID is reused meanwhile; re-check the tag through it first.
			p, err := os.FindProcess(pid)
			if err != nil {
				continue
			}
			if hasEnv(pid, want) && p.Signal(syscall.SIGKILL) == nil {
				n++
				log.Debug("killed a descendant that left the server's process group", "pid", pid)
			}
			_ = p.Release()
		}
		total += n
		if n == 0 {
			break
		}
	}
	return total
}

// taggedPIDs lists the processes whose environment holds want, except self.
func taggedPIDs(want []byte, self int) []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil
	}
	var pids []int
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self || pid <= 1 {
			continue
		}
		if hasEnv(pid, want) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// hasEnv reports whether process pid's initial environment holds the entry want.
func hasEnv(pid int, want []byte) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for len(env) > 0 {
		entry, rest, _ := bytes.Cut(env, []byte{0})
		if bytes.Equal(entry, want) {
			return true
		}
		env = rest
	}
	return false
}
