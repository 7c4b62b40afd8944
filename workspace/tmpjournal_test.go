package workspace

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	stallWriterEnv  = "OH_BRIDGE_TEST_STALL_WRITER"
	stallJournalEnv = "OH_BRIDGE_TEST_STALL_JOURNAL"
)

// TestStalledWriterProcess is not a test: it is the child process of
// TestTempLeftByKillIsCleaned. It writes a large file and stops just before
// the rename, with the temporary file complete, until it is killed.
func TestStalledWriterProcess(t *testing.T) {
	target := os.Getenv(stallWriterEnv)
	if target == "" {
		t.Skip("helper process for TestTempLeftByKillIsCleaned")
	}
	pendingWritesDir = os.Getenv(stallJournalEnv)
	roots, err := NewRoots([]string{filepath.Dir(target)})
	if err != nil {
		t.Fatal(err)
	}
	testHookBeforeRename = func(tmp string) {
		os.Stdout.WriteString("stalled " + tmp + "\n")
		select {} // until SIGKILL
	}
	New(roots, Options{}).WriteTextFile(context.Background(), target, strings.Repeat("new\n", 1<<18), "", false)
	t.Fatal("the write returned; it should have stalled")
}

// TestTempLeftByKillIsCleaned kills a writer with SIGKILL mid-write: the
// old content must be intact, and the temporary file it left is removed
// when the next FS starts, once it is older than staleTempAge, while a file
// of ours that no journal names is left alone.
func TestTempLeftByKillIsCleaned(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	journals := useJournalDir(t)
	fs, root := newFS(t, map[string]string{"big.txt": "old\n"})
	target := filepath.Join(root, "big.txt")
	// A name like ours that no journal names: not ours to remove.
	stranger := filepath.Join(root, ".notes.txt"+tmpMarker+"0123456789abcdef")
	writeFiles(t, root, map[string]string{filepath.Base(stranger): "keep"})

	cmd, tmp := startChild(t, "TestStalledWriterProcess", "stalled ", 60*time.Second,
		stallWriterEnv+"="+target, stallJournalEnv+"="+journals)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	assertEqual(t, "big.txt after the kill", "old\n", readFile(t, target))
	if fi, err := os.Stat(tmp); err != nil || fi.Size() != 4<<18 {
		t.Fatalf("the killed writer's temporary file %s: %v, want it complete", tmp, err)
	}
	// Too young: another machine could still be writing it.
	New(fs.Roots(), Options{})
	if _, err := os.Stat(tmp); err != nil {
		t.Fatalf("a temporary file younger than %v was removed: %v", staleTempAge, err)
	}
	// As if the crash had happened a minute ago.
	old := time.Now().Add(-time.Minute)
	os.Chtimes(tmp, old, old)
	os.Chtimes(stranger, old, old)
	removed := fs.Roots().cleanStaleTemps(slog.New(slog.DiscardHandler))
	assertEqual(t, "removed", tmp, strings.Join(removed, " "))
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the temporary file is still there: %v", err)
	}
	assertEqual(t, "the stranger", "keep", readFile(t, stranger))
	assertEqual(t, "big.txt", "old\n", readFile(t, target))
	if ents, _ := os.ReadDir(journals); len(ents) != 0 {
		t.Errorf("journals left: %v", ents)
	}
}

// TestJournalEmptiesWhenIdle checks that a process's journal holds nothing
// once its writes are done, so a clean exit leaves nothing to clean.
func TestJournalEmptiesWhenIdle(t *testing.T) {
	journals := useJournalDir(t)
	fs, _ := newFS(t, nil)
	var inFlight string
	testHookBeforeRename = func(tmp string) {
		b, _ := os.ReadFile(filepath.Join(journals, journalID+".log"))
		inFlight = string(b)
	}
	defer func() { testHookBeforeRename = nil }()
	if _, err := fs.WriteTextFile(context.Background(), "a.txt", "x", "", false); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(inFlight, "+") || !strings.Contains(inFlight, tmpMarker) {
		t.Errorf("the journal during the write: %q, want the temporary file", inFlight)
	}
	b, err := os.ReadFile(filepath.Join(journals, journalID+".log"))
	if err != nil || len(b) != 0 {
		t.Errorf("the journal after the write: %q, %v; want it empty", b, err)
	}
}
