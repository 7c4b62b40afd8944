//go:build unix

package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// How real editors save what an ACP client is asked to write: Neovim (under
// CodeCompanion.nvim or avante.nvim) writes a new file beside the old and
// renames it over the path, so the inode changes, and its buffer's lines
// come back with one final newline more or fewer; Zed and VS Code-like
// clients may save with the file's own line ends. These are confirmed
// writes; a save that leaves other text, or a symlink swapped in, is not,
// and the report says what is there.

// renamingEditor saves as Neovim does: the text, as save makes it, to a
// temporary file in the same directory, renamed over the path.
type renamingEditor struct {
	save  func(content string) string // what the saved file holds
	after func(path string)           // runs once the save is done
	saves int
}

func (e *renamingEditor) host() *TextFileHost {
	return &TextFileHost{
		Read: func(_ context.Context, path string) (string, error) {
			data, err := os.ReadFile(path)
			return string(data), err
		},
		Write: func(_ context.Context, path, content string) error {
			e.saves++
			tmp := filepath.Join(filepath.Dir(path), "4913") // Neovim's probe name
			if err := os.WriteFile(tmp, []byte(e.save(content)), 0o644); err != nil {
				return err
			}
			if err := os.Rename(tmp, path); err != nil {
				return err
			}
			if e.after != nil {
				e.after(path)
			}
			return nil
		},
	}
}

func TestHostWriteEditorSaves(t *testing.T) {
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	for _, tc := range []struct {
		name     string
		old, new string // the file before, the text the edit writes
		save     func(string) string
		after    func(t *testing.T, path, outside string)
		kind     string // "" for a confirmed write
		says     []string
	}{
		{name: "a final newline added (CodeCompanion.nvim)", old: "a\nb\n", new: "a\nB\n",
			save: func(s string) string { return s + "\n" }},
		{name: "a final newline added to text without one", old: "a\nb", new: "a\nB",
			save: func(s string) string { return s + "\n" }},
		{name: "the final newline stripped (avante.nvim)", old: "a\nb\n", new: "a\nB\n",
			save: func(s string) string { return strings.TrimSuffix(s, "\n") }},
		{name: "CRLF line ends", old: "a\r\nb\r\n", new: "a\nB\n", save: crlf},
		{name: "CRLF and a final newline added", old: "a\r\nb\r\n", new: "a\nB\n",
			save: func(s string) string { return crlf(s + "\n") }},
		{name: "LF from an edit in CRLF", old: "a\r\nb\r\n", new: "a\r\nB\r\n",
			save: func(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }},
		{name: "the text as asked", old: "a\n", new: "A\n", save: func(s string) string { return s }},
		{name: "other text", old: "a\nb\n", new: "a\nB\n",
			save: func(s string) string { return strings.ToUpper(s) },
			kind: "write_unverified", says: []string{"holds other text than the edit's", "not the file checked before the write"}},
		{name: "two final newlines added", old: "a\n", new: "A\n",
			save: func(s string) string { return s + "\n\n" },
			kind: "write_unverified", says: []string{"holds other text than the edit's"}},
		{name: "a symlink swapped in after the save", old: "a\n", new: "A\n",
			save: func(s string) string { return s },
			after: func(t *testing.T, path, outside string) {
				if err := os.Rename(path, path+".keep"); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(filepath.Join(outside, "f.txt"), path); err != nil {
					t.Fatal(err)
				}
			},
			kind: "write_unverified", says: []string{"notes.txt is now a symlink to ", "outside/f.txt: the editor's write may have gone there"}},
		{name: "a directory on the way swapped for a symlink", old: "a\n", new: "A\n",
			save: func(s string) string { return s },
			after: func(t *testing.T, path, outside string) {
				dir := filepath.Dir(path)
				if err := os.Rename(dir, dir+".keep"); err != nil {
					t.Fatal(err)
				}
				os.Mkdir(filepath.Join(outside, "sub"), 0o755)
				os.WriteFile(filepath.Join(outside, "sub", "notes.txt"), []byte("A\n"), 0o644)
				if err := os.Symlink("../outside/sub", dir); err != nil {
					t.Fatal(err)
				}
			},
			kind: "write_unverified", says: []string{"/sub is now a symlink to ", "/outside/sub: the editor's write may have gone there"}},
		{name: "a hard link made after the save", old: "a\n", new: "A\n",
			save: func(s string) string { return s },
			after: func(t *testing.T, path, outside string) {
				if err := os.Link(path, filepath.Join(outside, "hl.txt")); err != nil {
					t.Fatal(err)
				}
			},
			kind: "write_unverified", says: []string{"notes.txt has 2 hard links"}},
		{name: "a FIFO put in its place", old: "a\n", new: "A\n",
			save: func(s string) string { return s },
			after: func(t *testing.T, path, outside string) {
				os.Remove(path)
				if err := syscall.Mkfifo(path, 0o644); err != nil {
					t.Fatal(err)
				}
			},
			kind: "write_unverified", says: []string{"notes.txt is now a FIFO (named pipe), not a regular file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			fs, ws, outside, _ := hostileWorkspace(t)
			os.Mkdir(filepath.Join(ws, "sub"), 0o755)
			path := filepath.Join(ws, "sub", "notes.txt")
			if err := os.WriteFile(path, []byte(tc.old), 0o644); err != nil {
				t.Fatal(err)
			}
			ed := &renamingEditor{save: tc.save}
			if tc.after != nil {
				ed.after = func(p string) { tc.after(t, p, outside) }
			}
			fs.SetTextFileHost(ed.host())

			_, err := fs.WriteTextFile(ctx, path, tc.new, "", false)
			assertEqual(t, "the editor saved once", 1, ed.saves)
			assertEqual(t, "the write's kind", tc.kind, kindOf(err))
			for _, want := range tc.says {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("the report: %v\nwant it to say %q", err, want)
				}
			}
			if err != nil && strings.Contains(err.Error(), "swapped in after the bridge checked") {
				t.Errorf("the report blames a swapped link without finding one: %v", err)
			}
		})
	}
}

// TestHostWriteEditorSavesTwice: the second edit of a file the editor saved
// with an extra final newline reads its text and writes again, confirmed.
func TestHostWriteEditorSavesTwice(t *testing.T) {
	ctx := context.Background()
	fs, ws, _, _ := hostileWorkspace(t)
	path := filepath.Join(ws, "notes.txt")
	os.WriteFile(path, []byte("one\n"), 0o644)
	ed := &renamingEditor{save: func(s string) string { return s + "\n" }}
	fs.SetTextFileHost(ed.host())
	for _, text := range []string{"two\n", "three\n"} {
		_, err := fs.WriteTextFile(ctx, path, text, "", false)
		assertEqual(t, "a write of "+text, "", kindOf(err))
	}
	assertEqual(t, "the file", "three\n\n", readFile(t, path))
}

// TestHostReadRefusesFIFO: a FIFO is refused before the editor is asked to
// read it (an editor reading it by path would wait for a writer).
func TestHostReadRefusesFIFO(t *testing.T) {
	ctx := context.Background()
	fs, ws, _, _ := hostileWorkspace(t)
	fifo := filepath.Join(ws, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	asked := 0
	fs.SetTextFileHost(&TextFileHost{Read: func(context.Context, string) (string, error) {
		asked++
		return "", nil
	}})
	_, err := fs.ReadTextFile(ctx, fifo, 0, 0)
	assertEqual(t, "a read of a FIFO", "not_regular_file", kindOf(err))
	if err != nil && !strings.Contains(err.Error(), "FIFO") {
		t.Errorf("the refusal: %v, want it to name the FIFO", err)
	}
	assertEqual(t, "the editor was asked", 0, asked)
}

func TestSavedAs(t *testing.T) {
	for _, tc := range []struct {
		saved, content string
		want           bool
	}{
		{"a\nb\n", "a\nb\n", true},
		{"a\nb\n\n", "a\nb\n", true},   // Neovim's extra last line
		{"a\nb", "a\nb\n", true},       // the final newline lost
		{"a\nb\n", "a\nb", true},       // one added to text without
		{"a\r\nb\r\n", "a\nb\n", true}, // CRLF for LF
		{"a\nb\n", "a\r\nb\r\n", true}, // LF for CRLF
		{"a\r\nb\n", "a\nb\r\n", true}, // mixed, each CRLF as LF
		{"a\r\nb\r\n\r\n", "a\nb\n", true},
		{"a\r\nb", "a\nb\n", true},
		{"", "", true},
		{"\n", "", true},
		{"", "\n", true},
		{"a\nb\n\n\n", "a\nb\n", false}, // two added
		{"a", "a\n\n", false},           // two lost
		{"a\nb\n", "a\nB\n", false},
		{"a\rb\r", "a\nb\n", false}, // a lone CR is a character
		{"a\n\nb\n", "a\nb\n", false},
		{"\na\nb", "a\nb\n", false},
		{"a\nb \n", "a\nb\n", false},
		{"\ufeffa\n", "a\n", false},
		{"a\n", "", false},
	} {
		if got := savedAs(tc.saved, tc.content); got != tc.want {
			t.Errorf("savedAs(%q, %q) = %v, want %v", tc.saved, tc.content, got, tc.want)
		}
	}
}
