//go:build linux

package transport

import (
	"bytes"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// maxTaggedReads bounds the environments one round of killTagged reads (each an open, read
// and close of /proc/<pid>/environ). Only processes started since the server's own process
// are read at all (see pidWindow); past the bound the rest are skipped and logged.
const maxTaggedReads = 4096

// killTagged SIGKILLs every process (of this user; others' environments are unreadable)
// whose environment holds TagEnv=tag: the descendants of a stdio server that left its
// process group. leader is the server's own PID: a descendant was started after it, so
// only the PIDs the kernel handed out since then are looked at, not every process on the
// machine. It repeats while it finds some (a dying daemon may have forked again), at most a
// few rounds, and returns how many it signalled.
func killTagged(tag string, leader int, log *slog.Logger) int {
	if tag == "" {
		return 0
	}
	want := []byte(TagEnv + "=" + tag)
	self := os.Getpid()
	total := 0
	for range 4 {
		n := 0
		for _, pid := range taggedPIDs(want, self, pidWindow(leader), log) {
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

// pidWindow returns a func that reports whether a PID was handed out after leader: the
// kernel allocates PIDs upwards from the last one (/proc/loadavg's last field) and wraps at
// pid_max, so those are the PIDs above leader up to the last, or, after a wrap, above leader
// or up to the last. When the last PID cannot be read every PID is in the window. Not
// covered: more than pid_max process starts during the server's life (a whole lap).
func pidWindow(leader int) func(pid int) bool {
	last, ok := lastPID()
	return window(leader, last, ok)
}

// window is pidWindow's rule for a known last PID (ok false: unknown).
func window(leader, last int, ok bool) func(pid int) bool {
	switch {
	case !ok || leader <= 0:
		return func(int) bool { return true }
	case last >= leader:
		return func(pid int) bool { return pid > leader && pid <= last }
	}
	return func(pid int) bool { return pid > leader || pid <= last }
}

// lastPID reads the PID the kernel handed out last, from /proc/loadavg
// ("0.20 0.18 0.12 1/80 11206").
func lastPID() (int, bool) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, false
	}
	fields := strings.Fields(string(b))
	if len(fields) < 5 {
		return 0, false
	}
	pid, err := strconv.Atoi(fields[4])
	return pid, err == nil && pid > 0
}

// taggedPIDs lists the processes in the window whose environment holds want, except self,
// reading at most maxTaggedReads environments.
func taggedPIDs(want []byte, self int, inWindow func(int) bool, log *slog.Logger) []int {
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
	reads := 0
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self || pid <= 1 || !inWindow(pid) {
			continue
		}
		if reads == maxTaggedReads {
			log.Debug("stopped looking for descendants that left the server's process group", "read", reads)
			break
		}
		reads++
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
