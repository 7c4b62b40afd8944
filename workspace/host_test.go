package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeEditor is an editor that reads and writes files itself: it holds
// buffers, and records what it was asked.
type fakeEditor struct {
	buffers map[string]string
	asked   []string
	failing error
}

func (e *fakeEditor) host(read, write bool) *TextFileHost {
	h := &TextFileHost{}
	if read {
		h.Read = func(ctx context.Context, path string) (string, error) {
			e.asked = append(e.asked, "read "+path)
			if e.failing != nil {
				return "", e.failing
			}
			if text, ok := e.buffers[path]; ok {
				return text, nil
			}
			data, err := os.ReadFile(path)
			return string(data), err
		}
	}
	if write {
		h.Write = func(ctx context.Context, path, content string) error {
			e.asked = append(e.asked, "write "+path)
			if e.failing != nil {
				return e.failing
			}
			e.buffers[path] = content
			return nil
		}
	}
	return h
}

func TestTextFileHost(t *testing.T) {
	ctx := context.Background()
	fs, root := newFS(t, map[string]string{"a.txt": "disk\n"})
	a := filepath.Join(root, "a.txt")
	ed := &fakeEditor{buffers: map[string]string{a: "buffer\n"}}
	fs.SetTextFileHost(ed.host(true, true))

	f, err := fs.ReadTextFile(ctx, a, 0, 0)
	assertEqual(t, "read through the editor", "", kindOf(err))
	assertEqual(t, "read through the editor", "buffer\n", f.Content)

	_, err = fs.WriteTextFile(ctx, a, "new\n", f.Version, false)
	assertEqual(t, "write through the editor", "", kindOf(err))
	assertEqual(t, "the editor's buffer", "new\n", ed.buffers[a])
	data, _ := os.ReadFile(a)
	assertEqual(t, "the disk under the editor's buffer", "disk\n", string(data))

	_, err = fs.WriteTextFile(ctx, a, "newer\n", f.Version, false)
	assertEqual(t, "a write with an old version", "stale_version", kindOf(err))

	nested := filepath.Join(root, "d", "e", "b.txt")
	res, err := fs.WriteTextFile(ctx, nested, "b\n", "", true)
	assertEqual(t, "a new file in new directories", "", kindOf(err))
	assertEqual(t, "a new file is reported created", true, res.Created)
	if fi, err := os.Stat(filepath.Dir(nested)); err != nil || !fi.IsDir() {
		t.Errorf("the new file's directories were not made: %v", err)
	}

	ed.asked = nil
	outside := filepath.Join(t.TempDir(), "x.txt")
	_, err = fs.ReadTextFile(ctx, outside, 0, 0)
	assertEqual(t, "a read outside the roots", "path_outside_workspace", kindOf(err))
	_, err = fs.WriteTextFile(ctx, outside, "x", "", false)
	assertEqual(t, "a write outside the roots", "path_outside_workspace", kindOf(err))
	assertEqual(t, "the editor is never asked about paths outside the roots", 0, len(ed.asked))

	ed.failing = errors.New("buffer is read-only")
	_, err = fs.WriteTextFile(ctx, a, "x\n", "", false)
	var he *HostError
	if !errors.As(err, &he) || !strings.Contains(err.Error(), a) || !strings.Contains(err.Error(), "buffer is read-only") {
		t.Errorf("a failed editor write: %v, want it to name the path and the editor's reason", err)
	}
	_, err = fs.ReadTextFile(ctx, filepath.Join(root, "missing.txt"), 0, 0)
	assertEqual(t, "a missing file the editor cannot read", "not_found", kindOf(err))
}

// TestTextFileHostWriteOnly reads the disk and writes through the editor.
func TestTextFileHostWriteOnly(t *testing.T) {
	ctx := context.Background()
	fs, root := newFS(t, map[string]string{"a.txt": "disk\n"})
	a := filepath.Join(root, "a.txt")
	ed := &fakeEditor{buffers: map[string]string{a: "buffer\n"}}
	fs.SetTextFileHost(ed.host(false, true))
	f, _ := fs.ReadTextFile(ctx, a, 0, 0)
	assertEqual(t, "a read with a write-only editor", "disk\n", f.Content)
	fs.WriteTextFile(ctx, a, "new\n", "", false)
	assertEqual(t, "a write with a write-only editor", "new\n", ed.buffers[a])
	assertEqual(t, "what the editor was asked", "write "+a, strings.Join(ed.asked, ","))
}
