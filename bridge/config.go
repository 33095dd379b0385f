package bridge

import "errors"

// LoadConfig reads a servers file.
func LoadConfig(path string) ([]ServerConfig, error) { return nil, errors.New("not implemented") }
