//go:build !linux

package transport_test

import "errors"

// startDetached is only needed by the Linux daemon test.
func startDetached(string) error { return errors.New("not supported") }
