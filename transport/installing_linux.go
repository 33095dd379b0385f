//go:build linux

package transport

import (
	"bytes"
	"os"
	"path"
	"strconv"
	"strings"
)

// maxTreeProcs bounds how many processes of a server's tree npmInstalling looks at, and
// maxStatReads how many /proc/<pid>/stat files it reads to find them.
const (
	maxTreeProcs = 256
	maxStatReads = 4096
)

// npmInstalling reports whether the process tree under root holds an npm process none of
// whose children runs a package or script (see Conn.Installing).
func npmInstalling(root int) bool {
	comms, children := procTable(root)
	queue := []int{root}
	for seen := 0; len(queue) > 0 && seen < maxTreeProcs; seen++ {
		pid := queue[0]
		queue = queue[1:]
		kids := children[pid]
		if isNPM(pid, comms[pid]) && !anyRuns(kids) {
			return true
		}
		queue = append(queue, kids...)
	}
	return false
}

// procTable reads the command name and parent of root and of the processes started since
// root (its descendants are among them; see pidWindow) from /proc/<pid>/stat, at most
// maxStatReads, and returns the names and each parent's children.
func procTable(root int) (comms map[int]string, children map[int][]int) {
	comms, children = map[int]string{}, map[int][]int{}
	d, err := os.Open("/proc")
	if err != nil {
		return comms, children
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return comms, children
	}
	inWindow := pidWindow(root)
	reads := 0
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid != root && !inWindow(pid) {
			continue
		}
		if reads == maxStatReads {
			break
		}
		reads++
		stat, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
		open, end := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(string(stat[end+1:]))
		if len(fields) < 2 {
			continue
		}
		ppid, err := strconv.Atoi(fields[1])
		if err != nil {
			continue
		}
		comms[pid] = string(stat[open+1 : end])
		children[ppid] = append(children[ppid], pid)
	}
	return comms, children
}

// isNPM reports whether process pid, named comm, is npm or npx: npm names itself
// "npm exec <package>" (npx) or "npm <command>" once it runs; before that it is node
// running npm's or npx's script.
func isNPM(pid int, comm string) bool {
	switch {
	case comm == "npm", comm == "npx", strings.HasPrefix(comm, "npm "):
		return true
	case comm != "node" && comm != "nodejs":
		return false
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	args := strings.Split(string(cmdline), "\x00")
	if len(args) < 2 {
		return false
	}
	switch path.Base(args[1]) {
	case "npx", "npm", "npx-cli.js", "npm-cli.js":
		return true
	}
	return false
}

// anyRuns reports whether one of pids is a package or script npm runs: its environment's
// npm_lifecycle_event names an event other than an install step (npx for the package npx
// runs, start, test, …).
func anyRuns(pids []int) bool {
	for _, pid := range pids {
		switch ev := lifecycleEvent(pid); ev {
		case "", "preinstall", "install", "postinstall", "prepare", "preprepare", "postprepare":
		default:
			return true
		}
	}
	return false
}

// lifecycleEvent is the npm_lifecycle_event in process pid's initial environment, "" if
// none (or unreadable).
func lifecycleEvent(pid int) string {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return ""
	}
	for len(env) > 0 {
		var entry []byte
		entry, env, _ = bytes.Cut(env, []byte{0})
		if v, ok := bytes.CutPrefix(entry, []byte("npm_lifecycle_event=")); ok {
			return string(v)
		}
	}
	return ""
}
