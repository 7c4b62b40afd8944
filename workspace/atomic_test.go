package workspace

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const atomicWriterEnv = "OH_BRIDGE_TEST_ATOMIC_WRITER"

// Different sizes make a torn file obvious: it would match neither.
var (
	atomicOld = strings.Repeat("old content line\r\n", 64<<10)  // ~1.1 MiB
	atomicNew = strings.Repeat("new\n", 512<<10) + "no newline" // ~2 MiB
)

// TestAtomicWriterProcess is not a test: it is the child process of
// TestAtomicWriteSurvivesKill, writing alternating contents until killed.
func TestAtomicWriterProcess(t *testing.T) {
	target := os.Getenv(atomicWriterEnv)
	if target == "" {
		t.Skip("helper process for TestAtomicWriteSurvivesKill")
	}
	roots, err := NewRoots([]string{filepath.Dir(target)})
	if err != nil {
		t.Fatal(err)
	}
	fs := New(roots, Options{})
	for i := 0; ; i++ {
		content := atomicNew
		if i%2 == 1 {
			content = atomicOld
		}
		if _, err := fs.WriteTextFile(context.Background(), target, content, "", false); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			os.Stdout.WriteString("ready\n")
		}
	}
}

// TestAtomicWriteSurvivesKill SIGKILLs a writer at random moments; the file
// must always hold one complete content, never a mix or a truncation.
func TestAtomicWriteSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(target, []byte(atomicOld), 0o644); err != nil {
		t.Fatal(err)
	}
	const iterations = 25
	for i := range iterations {
		// Wait until the child has completed a write, then kill it at a
		// random point of a later one. The random delay is the point of
		// the test, not a synchronisation.
		cmd, _ := startChild(t, "TestAtomicWriterProcess", "ready", 30*time.Second, atomicWriterEnv+"="+target)
		time.Sleep(time.Duration(rand.IntN(40_000)) * time.Microsecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		got := readFile(t, target)
		if got != atomicOld && got != atomicNew {
			t.Fatalf("iteration %d: torn file: %d bytes, starting %q", i, len(got), got[:min(len(got), 40)])
		}
	}
	// Killed writers may leave temporaries behind; they must be recognisable.
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != "f.txt" && !strings.HasPrefix(e.Name(), ".f.txt"+tmpMarker) {
			t.Errorf("unexpected file %s", e.Name())
		}
	}
}
