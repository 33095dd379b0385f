package config

import (
	"errors"
	"fmt"
)

// CheckIDs rejects a list of servers in which a server has no ID, or two servers have one
// ID (the check of bridge.Connect and bridge.Dial): the errors name the servers by their
// place in the list, from 1.
func CheckIDs(cfgs []ServerConfig) error {
	seen := make(map[string]int, len(cfgs))
	var errs []error
	for i, cfg := range cfgs {
		if cfg.ID == "" {
			errs = append(errs, fmt.Errorf("server #%d has no ID", i+1))
			continue
		}
		if j, dup := seen[cfg.ID]; dup {
			errs = append(errs, fmt.Errorf("duplicate server ID %q (servers #%d and #%d)", cfg.ID, j+1, i+1))
			continue
		}
		seen[cfg.ID] = i
	}
	return errors.Join(errs...)
}
