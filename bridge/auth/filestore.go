package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// MaxTokenFile bounds the token file read into memory (listed in bridge/limits.go).
const MaxTokenFile = 4 << 20

// readFile reads a token file (FileTokenStore's): a JSON object of grants by key.
// A missing file is empty. It refuses a file that group or others can read (on Unix) and
// one larger than 4 MiB. T is the grant type (StoredToken).
func readFile[T any](path string) (map[string]*T, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]*T{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("token store: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("token store: %w", err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("token store: %s is readable by others (mode %v); refusing to use it: chmod 600 it", path, fi.Mode().Perm())
	}
	if fi.Size() > MaxTokenFile {
		return nil, fmt.Errorf("token store: %s is larger than %d bytes", path, MaxTokenFile)
	}
	m := map[string]*T{}
	if err := json.NewDecoder(f).Decode(&m); err != nil {
		return nil, fmt.Errorf("token store: %s is not a token file: %w", path, err)
	}
	return m, nil
}

// writeFile replaces the token file at path with m, atomically: readable only by its owner
// (0600, in a 0700 directory).
func writeFile[T any](path string, m map[string]*T) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".tokens-*")
	if err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil && runtime.GOOS != "windows" {
		tmp.Close()
		return fmt.Errorf("token store: %w", err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("token store: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	return nil
}
