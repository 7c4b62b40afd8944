//go:build linux

package workspace_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/oh-bridge/oh-bridge/editor"
	"github.com/oh-bridge/oh-bridge/workspace"
	"golang.org/x/sys/unix"
)

// swapsWanted is how many times the race test flips its directory.
const swapsWanted = 10_000

// TestSymlinkSwapRace flips root/flip between a real directory and a
// symlink to a directory outside the root, 10,000 times, while writes,
// str_replace edits and deletes hammer root/flip/file.txt. Nothing may land
// outside (the outside directory keeps exactly its one file, unchanged), and
// every operation either succeeds inside the root or fails with an error of
// a known kind. It runs once with openat2 and once with the fallback walk.
func TestSymlinkSwapRace(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 swaps")
	}
	modes := []string{"walk"}
	if workspace.Openat2Available() {
		modes = append([]string{"openat2"}, modes...)
	} else {
		t.Log("this kernel has no openat2: only the fallback walk is tested")
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			defer workspace.SetOpenat2ForTest(mode == "openat2")()
			swapRace(t)
		})
	}
}

func swapRace(t *testing.T) {
	ctx := context.Background()
	outside := t.TempDir() // stands in for /tmp, or the user's home
	const sentinel = "outside: must never change\n"
	writeTestFile(t, filepath.Join(outside, "file.txt"), sentinel)

	rootDir := t.TempDir()
	fsys := newTestFS(t, rootDir)
	root := fsys.Roots().First()
	flip, link := filepath.Join(root, "flip"), filepath.Join(root, "flip-link")
	if err := os.Mkdir(flip, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(flip, "file.txt"), "alpha\n")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	ed := editor.New(fsys, editor.Options{})

	var (
		stop  atomic.Bool
		ops   atomic.Int64
		wrote atomic.Int64 // writes and edits that succeeded
		mu    sync.Mutex
		kinds = map[string]int{}
	)
	tally := func(op string, err error) {
		ops.Add(1)
		k := "ok"
		if err == nil && op != "delete" {
			wrote.Add(1)
		}
		if err != nil {
			k = kindOf(err)
			var out *workspace.OutsideRootsError
			if errors.As(err, &out) && out.Swapped {
				k += " (swapped in)"
			}
		}
		mu.Lock()
		kinds[op+": "+k]++
		mu.Unlock()
		switch k {
		case "ok", "path_outside_workspace", "path_outside_workspace (swapped in)", "not_found",
			"old_str_not_found", "stale_version":
		default:
			t.Errorf("%s: unexpected failure %s: %v", op, k, err)
		}
	}
	// The flipper swaps the two names atomically (RENAME_EXCHANGE), so
	// root/flip is always either the directory or the symlink. It goes on
	// past 10,000 swaps until 200 writes and edits went through meanwhile.
	var swaps int
	flipped := make(chan struct{})
	go func() {
		defer close(flipped)
		for swaps < swapsWanted || wrote.Load() < 200 {
			if err := unix.Renameat2(unix.AT_FDCWD, flip, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("swap %d: %v", swaps, err)
				return
			}
			swaps++
		}
		stop.Store(true)
	}()
	var wg sync.WaitGroup
	target := filepath.Join(root, "flip", "file.txt")
	worker := func(f func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				f()
			}
		}()
	}
	worker(func() {
		_, err := fsys.WriteTextFile(ctx, "flip/file.txt", "alpha\n", "", false)
		tally("write", err)
	})
	worker(func() {
		_, err := ed.StrReplace(ctx, target, "alpha", "beta", "")
		if kindOf(err) == "old_str_not_found" {
			_, err = ed.StrReplace(ctx, target, "beta", "alpha", "")
		}
		tally("str_replace", err)
	})
	worker(func() {
		tally("delete", fsys.Delete(ctx, target, false))
		_, err := fsys.WriteTextFile(ctx, target, "alpha\n", "", true)
		tally("create", err)
	})
	<-flipped
	wg.Wait()

	ents, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 1 || names[0] != "file.txt" {
		t.Errorf("the outside directory holds %v, want only file.txt", names)
	}
	if got := readTestFile(t, filepath.Join(outside, "file.txt")); got != sentinel {
		t.Errorf("the outside file changed: %q", got)
	}
	var lines []string
	for k, n := range kinds {
		lines = append(lines, fmt.Sprintf("  %s: %d", k, n))
	}
	sort.Strings(lines)
	t.Logf("swaps survived: %d, operations: %d\n%s", swaps, ops.Load(), strings.Join(lines, "\n"))
	if kinds["write: ok"] == 0 || kinds["str_replace: ok"] == 0 {
		t.Errorf("no write or edit ever succeeded, so the race was not exercised: %v", kinds)
	}
}
