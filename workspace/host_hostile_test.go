//go:build unix

package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/internal/ohtest/shellplant"
)

// A write through the editor (TextFileHost.Write) is done by the editor,
// by path. These tests plant what an agent's terminal command can plant in
// its workspace, and write through an editor that writes by path in place,
// as VS Code's fs.writeFile does (os.WriteFile: open with O_TRUNC, follow
// links, write the inode).

// hostileWorkspace is a root ws with a sibling directory outside it that
// holds outside/f.txt; the FS writes through byPathEditor.
func hostileWorkspace(t *testing.T) (f *FS, ws, outside string, ed *byPathEditor) {
	t.Helper()
	tmp := t.TempDir()
	ws, outside = filepath.Join(tmp, "ws"), filepath.Join(tmp, "outside")
	for _, d := range []string{ws, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(outside, "f.txt"), []byte("outside\n"), 0o644)
	roots, err := NewRoots([]string{ws})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { roots.Close() })
	f = New(roots, Options{})
	ed = &byPathEditor{}
	f.SetTextFileHost(ed.host())
	return f, roots.First(), outside, ed
}

// byPathEditor reads and writes by path, as an editor does; inWrite, when
// set, runs in the middle of its write, before it opens the file.
type byPathEditor struct {
	writes  []string
	inWrite func()
	after   func()
}

func (e *byPathEditor) host() *TextFileHost {
	return &TextFileHost{
		Read: func(_ context.Context, path string) (string, error) {
			data, err := os.ReadFile(path)
			return string(data), err
		},
		Write: func(_ context.Context, path, content string) error {
			e.writes = append(e.writes, path)
			if e.inWrite != nil {
				e.inWrite()
			}
			err := os.WriteFile(path, []byte(content), 0o644)
			if e.after != nil {
				e.after()
			}
			return err
		},
	}
}

// TestHostWriteRefusesHardLink: the agent links a file from outside into
// the workspace; a write through the editor to it is refused before the
// editor is asked, and the outside file keeps its text.
func TestHostWriteRefusesHardLink(t *testing.T) {
	ctx := context.Background()
	fs, ws, outside, ed := hostileWorkspace(t)
	shellplant.Run(t, ws, "ln ../outside/f.txt hl.txt")
	hl := filepath.Join(ws, "hl.txt")

	_, err := fs.WriteTextFile(ctx, hl, "agent\n", "", false)
	assertEqual(t, "a write to a file with two hard links", "hard_linked", kindOf(err))
	if err != nil && (!strings.Contains(err.Error(), "2 hard links") || !strings.Contains(err.Error(), "nothing was written")) {
		t.Errorf("the refusal: %v, want it to say the links and that nothing was written", err)
	}
	assertEqual(t, "the editor was not asked", 0, len(ed.writes))
	assertEqual(t, "the outside file", "outside\n", readFile(t, filepath.Join(outside, "f.txt")))

	// Once the agent breaks the link, as the refusal says, the write goes.
	shellplant.Run(t, ws, "cp hl.txt hl.txt.copy && mv hl.txt.copy hl.txt")
	_, err = fs.WriteTextFile(ctx, hl, "agent\n", "", false)
	assertEqual(t, "a write once the link is broken", "", kindOf(err))
	assertEqual(t, "the file", "agent\n", readFile(t, hl))
	assertEqual(t, "the outside file after", "outside\n", readFile(t, filepath.Join(outside, "f.txt")))
}

// TestHostWriteRefusesSymlinkSwappedIn: the agent's command replaces the
// file with a symlink to outside after the path was resolved and before
// the write; the write is refused and the editor is not asked.
func TestHostWriteRefusesSymlinkSwappedIn(t *testing.T) {
	ctx := context.Background()
	fs, ws, outside, ed := hostileWorkspace(t)
	os.WriteFile(filepath.Join(ws, "f.txt"), []byte("inside\n"), 0o644)
	defer SetWriteHookForTest(func(string) { shellplant.Run(t, ws, "ln -sf ../outside/f.txt f.txt") })()

	_, err := fs.WriteTextFile(ctx, filepath.Join(ws, "f.txt"), "agent\n", "", false)
	assertEqual(t, "a write to a path swapped for a symlink", "symlink_swapped", kindOf(err))
	assertEqual(t, "the editor was not asked", 0, len(ed.writes))
	assertEqual(t, "the outside file", "outside\n", readFile(t, filepath.Join(outside, "f.txt")))
}

// TestHostWriteUnverified: the symlink is swapped in after the bridge's
// check, while the editor writes by path, and swapped back: the write
// landed outside, and the bridge says so instead of reporting success.
func TestHostWriteUnverified(t *testing.T) {
	ctx := context.Background()
	fs, ws, outside, ed := hostileWorkspace(t)
	f := filepath.Join(ws, "f.txt")
	os.WriteFile(f, []byte("inside\n"), 0o644)
	ed.inWrite = func() { shellplant.Run(t, ws, "mv f.txt f.keep && ln -s ../outside/f.txt f.txt") }
	ed.after = func() { shellplant.Run(t, ws, "rm f.txt && mv f.keep f.txt") }

	_, err := fs.WriteTextFile(ctx, f, "agent\n", "", false)
	assertEqual(t, "a write the editor carried outside", "write_unverified", kindOf(err))
	if err != nil && !strings.Contains(err.Error(), "f.txt holds other text than the edit's") {
		t.Errorf("the report: %v, want it to say what the file holds", err)
	}
	assertEqual(t, "where it went (the race this reports)", "agent\n", readFile(t, filepath.Join(outside, "f.txt")))

	// Left in place, the link is found too.
	os.WriteFile(filepath.Join(outside, "f.txt"), []byte("outside\n"), 0o644)
	ed.after = nil
	_, err = fs.WriteTextFile(ctx, f, "agent\n", "", false)
	assertEqual(t, "a write through a link left in place", "write_unverified", kindOf(err))
	if err != nil && !strings.Contains(err.Error(), "f.txt is now a symlink to "+filepath.Join(outside, "f.txt")+": the editor's write may have gone there") {
		t.Errorf("the report: %v, want it to name the link and where it leads", err)
	}
}

// TestHostWriteUnsavedBuffer: an editor that keeps the write in an unsaved
// buffer (the disk unchanged) is believed when it reads the new text back
// and the file on disk is still the one checked; an editor that cannot
// read it back is not.
func TestHostWriteUnsavedBuffer(t *testing.T) {
	ctx := context.Background()
	fs, ws, _, _ := hostileWorkspace(t)
	f := filepath.Join(ws, "f.txt")
	os.WriteFile(f, []byte("disk\n"), 0o644)
	buffers := map[string]string{}
	h := &TextFileHost{
		Read: func(_ context.Context, path string) (string, error) { return buffers[path], nil },
		Write: func(_ context.Context, path, content string) error {
			buffers[path] = content
			return nil
		},
	}
	fs.SetTextFileHost(h)
	_, err := fs.WriteTextFile(ctx, f, "buffer\n", "", false)
	assertEqual(t, "a write held in the editor's buffer", "", kindOf(err))
	_, err = fs.WriteTextFile(ctx, filepath.Join(ws, "new.txt"), "new\n", "", false)
	assertEqual(t, "a new file held in the editor's buffer", "", kindOf(err))

	// A CRLF file the editor saves with its own line ends.
	h.Write = func(_ context.Context, path, content string) error {
		return os.WriteFile(path, []byte(strings.ReplaceAll(content, "\n", "\r\n")), 0o644)
	}
	_, err = fs.WriteTextFile(ctx, f, "a\nb\n", "", false)
	assertEqual(t, "a write saved with CRLF line ends", "", kindOf(err))

	h.Write = func(_ context.Context, path, content string) error { return nil }
	h.Read = nil
	_, err = fs.WriteTextFile(ctx, f, "lost\n", "", false)
	assertEqual(t, "a write-only editor whose write is not on disk", "write_unverified", kindOf(err))
}
