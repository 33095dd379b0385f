package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"runtime"
)

// errNoBrowser means there is no desktop to open a browser on: the URL is only printed.
var errNoBrowser = errors.New("no browser here (no DISPLAY or WAYLAND_DISPLAY)")

// openBrowser opens u in the system browser and does not wait for it. u must be https, or
// http on a loopback host; it is passed as one argument, never through a shell.
func openBrowser(u string) error {
	cmd, err := browserCommand(runtime.GOOS, u, os.Getenv)
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("opening a browser: %w", err)
	}
	go func() { _ = cmd.Wait() }() // the opener exits at once; reap it
	return nil
}

// browserCommand is the command that opens u on goos: open (macOS), rundll32's URL handler
// (Windows), xdg-open elsewhere when there is a display.
func browserCommand(goos, u string, getenv func(string) string) (*exec.Cmd, error) {
	if err := browsable(u); err != nil {
		return nil, err
	}
	switch goos {
	case "darwin":
		return exec.Command("open", u), nil
	case "windows":
		return exec.Command("rundll32", "url.dll,FileProtocolHandler", u), nil
	}
	if getenv("DISPLAY") == "" && getenv("WAYLAND_DISPLAY") == "" {
		return nil, errNoBrowser
	}
	return exec.Command("xdg-open", u), nil
}

// browsable refuses what a URL handler could run or misread: any scheme but https (http
// only to a loopback host), and anything that is not an absolute URL.
func browsable(u string) error {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return errors.New("the authorization URL is not an absolute URL")
	}
	switch p.Scheme {
	case "https":
		return nil
	case "http":
		if ip := net.ParseIP(p.Hostname()); (ip != nil && ip.IsLoopback()) || p.Hostname() == "localhost" {
			return nil
		}
	}
	return fmt.Errorf("not opening a browser on a %s: URL to %s: want https", p.Scheme, p.Hostname())
}
