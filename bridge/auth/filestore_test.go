package auth_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ttalk/mcpbridge/bridge/auth"
)

// A token file others can read is refused, never used.
func TestFileTokenStoreRefusesReadableFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX modes")
	}
	p := filepath.Join(t.TempDir(), "tokens.json")
	if err := os.WriteFile(p, []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := (&auth.FileTokenStore{Path: p}).LoadToken(context.Background(), "k")
	if err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Fatalf("err = %v", err)
	}
}
