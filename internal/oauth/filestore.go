package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

// maxTokenFile bounds the token file read into memory.
const maxTokenFile = 4 << 20

// FileTokenStore keeps tokens in one JSON file readable only by its owner (0600, in a 0700
// directory). It refuses to read a file that group or others can read (on Unix). Safe for
// concurrent use within one process; writes replace the file atomically.
type FileTokenStore struct {
	Path string

	mu sync.Mutex // serialises read-modify-write of the file
}

// DefaultTokenStore is the per-user token file: <user config dir>/mcpbridge/tokens.json
// (e.g. ~/.config/mcpbridge/tokens.json on Linux, ~/Library/Application Support on macOS,
// %AppData% on Windows).
func DefaultTokenStore() (*FileTokenStore, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return nil, fmt.Errorf("no per-user config directory for the token store: %w", err)
	}
	return &FileTokenStore{Path: filepath.Join(dir, "mcpbridge", "tokens.json")}, nil
}

// LoadToken implements TokenStore.
func (s *FileTokenStore) LoadToken(_ context.Context, key string) (*StoredToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.read()
	if err != nil {
		return nil, err
	}
	return m[key], nil
}

// SaveToken implements TokenStore.
func (s *FileTokenStore) SaveToken(_ context.Context, key string, t *StoredToken) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.read()
	if err != nil {
		return err
	}
	m[key] = t
	return s.write(m)
}

// DeleteToken implements TokenStore.
func (s *FileTokenStore) DeleteToken(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.read()
	if err != nil {
		return err
	}
	if _, ok := m[key]; !ok {
		return nil
	}
	delete(m, key)
	return s.write(m)
}

func (s *FileTokenStore) read() (map[string]*StoredToken, error) {
	f, err := os.Open(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]*StoredToken{}, nil
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
		return nil, fmt.Errorf("token store: %s is readable by others (mode %v); refusing to use it: chmod 600 it", s.Path, fi.Mode().Perm())
	}
	if fi.Size() > maxTokenFile {
		return nil, fmt.Errorf("token store: %s is larger than %d bytes", s.Path, maxTokenFile)
	}
	m := map[string]*StoredToken{}
	if err := json.NewDecoder(f).Decode(&m); err != nil {
		return nil, fmt.Errorf("token store: %s is not a token file: %w", s.Path, err)
	}
	return m, nil
}

func (s *FileTokenStore) write(m map[string]*StoredToken) error {
	dir := filepath.Dir(s.Path)
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
	if err := os.Rename(tmp.Name(), s.Path); err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	return nil
}
