package realserver

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVenv: an environment counts as installed only once install.sh's
// marker is in the directory named by the lock's hash, as install.sh
// names it; until then the error says what to run.
func TestVenv(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("OH_BRIDGE_OPENHANDS_CACHE", cache)
	data, err := os.ReadFile(filepath.Join(LockDir(), Latest+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	dir := filepath.Join(cache, Latest+"-"+hex.EncodeToString(sum[:])[:16])

	_, err = Venv(Latest)
	var ni *NotInstalledError
	if !errors.As(err, &ni) || ni.Dir != dir || !strings.Contains(err.Error(), "run `"+InstallCommand+"`") || ni.Kind() != "not_installed" {
		t.Fatalf("with nothing installed: %v", err)
	}
	// A build interrupted before its marker was written.
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Venv(Latest); !errors.As(err, &ni) {
		t.Fatalf("without the marker: %v", err)
	}
	os.WriteFile(filepath.Join(dir, marker), []byte("lock "+Latest+".txt\n"), 0o644)
	if got, err := Venv(Latest); err != nil || got != dir {
		t.Fatalf("installed: %q, %v; want %q", got, err, dir)
	}
	if _, err := Venv("no-such-lock"); err == nil || !strings.Contains(err.Error(), `no lock file for "no-such-lock"`) {
		t.Errorf("an unknown lock: %v", err)
	}
}
