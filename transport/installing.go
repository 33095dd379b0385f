package transport

// Running reports, for stdio, whether the server's process was started and has not exited
// yet. It is false for http and sse.
func (c *Conn) Running() bool {
	if c.pid() == 0 {
		return false
	}
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// Installing reports, for a stdio server whose process is running, whether it is npm (npx,
// npm exec) still installing the package it will run rather than the server itself: on a
// cold start npx downloads the package first, and until then nothing answers on stdin. On
// Linux the process tree is read from /proc: an npm process (the server's process or a
// descendant) none of whose children runs the package (npm starts it with
// npm_lifecycle_event=npx in its environment, install scripts with preinstall, install or
// postinstall). On other systems, and for http and sse, it is false.
func (c *Conn) Installing() bool {
	return c.Running() && npmInstalling(c.pid())
}
