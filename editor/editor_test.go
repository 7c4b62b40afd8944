package editor_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/oh-bridge/oh-bridge/editor"
	"github.com/oh-bridge/oh-bridge/workspace"
)

// newEditor returns an editor over a fresh temporary root holding files.
func newEditor(t testing.TB, opts editor.Options, files map[string]string) (*editor.Editor, *workspace.FS, string) {
	t.Helper()
	roots, err := workspace.NewRoots([]string{t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	root := roots.First()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fs := workspace.New(roots, workspace.Options{})
	return editor.New(fs, opts), fs, root
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func toolKind(err error) string {
	var te *editor.ToolError
	if errors.As(err, &te) {
		return te.Kind
	}
	return fmt.Sprintf("%T", err)
}

// TestEdits covers the behaviours that are ours rather than OHEditor's
// texts: line endings, encodings, relative paths, the insert fix.
func TestEdits(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		file    string // initial content of f.txt
		run     func(ed *editor.Editor, root string) (*editor.Result, error)
		want    string // content of f.txt afterwards
		wantErr string // ToolError kind or Go type of the error
	}{
		{
			name: "crlf kept by str_replace",
			file: "a\r\nb\r\nc\r\n",
			run: func(ed *editor.Editor, root string) (*editor.Result, error) {
				return ed.StrReplace(ctx, root+"/f.txt", "b\nc", "B\nC", "")
			},
			want: "a\r\nB\r\nC\r\n",
		},
		{
			name: "crlf kept by insert",
			file: "a\r\nb\r\n",
			run: func(ed *editor.Editor, root string) (*editor.Result, error) {
				return ed.Insert(ctx, root+"/f.txt", 1, "x\ny", "")
			},
			want: "a\r\nx\r\ny\r\nb\r\n",
		},
		{
			name: "lf file stays lf",
			file: "a\nb\n",
			run: func(ed *editor.Editor, root string) (*editor.Result, error) {
				return ed.StrReplace(ctx, root+"/f.txt", "b", "c", "")
			},
			want: "a\nc\n",
		},
		{
			name: "no trailing newline preserved",
			file: "a\nb",
			run: func(ed *editor.Editor, root string) (*editor.Result, error) {
				return ed.StrReplace(ctx, root+"/f.txt", "b", "c", "")
			},
			want: "a\nc",
		},
		{
			name: "insert after a last line without newline starts a new line",
			file: "a\nb",
			run: func(ed *editor.Editor, root string) (*editor.Result, error) {
				return ed.Insert(ctx, root+"/f.txt", 2, "c", "")
			},
			want: "a\nb\nc\n",
		},
		{
			name: "latin-1 is refused, not mangled",
			file: "caf\xe9\n",
			run: func(ed *editor.Editor, root string) (*editor.Result, error) {
				return ed.StrReplace(ctx, root+"/f.txt", "caf", "tea", "")
			},
			want:    "caf\xe9\n",
			wantErr: editor.KindInvalidUTF8,
		},
		{
			name: "relative path resolved against the first root",
			file: "a\n",
			run: func(ed *editor.Editor, root string) (*editor.Result, error) {
				return ed.StrReplace(ctx, "f.txt", "a", "b", "")
			},
			want: "b\n",
		},
		{
			name: "outside the roots passes the workspace error through",
			file: "a\n",
			run: func(ed *editor.Editor, root string) (*editor.Result, error) {
				return ed.View(ctx, "/etc/passwd", nil)
			},
			want:    "a\n",
			wantErr: "*workspace.OutsideRootsError",
		},
		{
			name: "dot-dot escape",
			file: "a\n",
			run: func(ed *editor.Editor, root string) (*editor.Result, error) {
				return ed.StrReplace(ctx, "../../etc/passwd", "root", "toor", "")
			},
			want:    "a\n",
			wantErr: "*workspace.OutsideRootsError",
		},
		{
			name: "stale expected version",
			file: "a\n",
			run: func(ed *editor.Editor, root string) (*editor.Result, error) {
				return ed.StrReplace(ctx, root+"/f.txt", "a", "b", "0000")
			},
			want:    "a\n",
			wantErr: "*workspace.StaleVersionError",
		},
		{
			name: "matching expected version",
			file: "a\n",
			run: func(ed *editor.Editor, root string) (*editor.Result, error) {
				return ed.StrReplace(ctx, root+"/f.txt", "a", "b", workspace.Version([]byte("a\n")))
			},
			want: "b\n",
		},
		{
			name: "create makes parents without RequireAbsolutePaths",
			file: "a\n",
			run: func(ed *editor.Editor, root string) (*editor.Result, error) {
				return ed.Create(ctx, "x/y/z.txt", "z\n")
			},
			want: "a\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ed, _, root := newEditor(t, editor.Options{}, map[string]string{"f.txt": tt.file})
			res, err := tt.run(ed, root)
			gotErr := ""
			if err != nil {
				gotErr = toolKind(err)
			}
			assertEqual(t, tt.name+" (error)", tt.wantErr, gotErr)
			assertEqual(t, tt.name+" (file)", tt.want, readFile(t, root+"/f.txt"))
			if err == nil && res.Version != workspace.Version([]byte(res.Text)) {
				t.Errorf("%s: Version %s does not match Text %q", tt.name, res.Version, res.Text)
			}
		})
	}
}

func TestCreateWithoutParentsInOpenHandsMode(t *testing.T) {
	ed, _, root := newEditor(t, editor.Options{RequireAbsolutePaths: true}, nil)
	_, err := ed.Create(context.Background(), root+"/x/y.py", "y\n")
	want := fmt.Sprintf("Ran into [Errno 2] No such file or directory: '%s/x/y.py' while trying to write to %s/x/y.py", root, root)
	var te *editor.ToolError
	if !errors.As(err, &te) {
		t.Fatalf("want ToolError, got %v", err)
	}
	assertEqual(t, "create "+root+"/x/y.py", want, te.Message)
}

func TestUndo(t *testing.T) {
	ctx := context.Background()
	t.Run("ten steps, oldest dropped", func(t *testing.T) {
		ed, _, root := newEditor(t, editor.Options{}, map[string]string{"f.txt": "v0\n"})
		p := root + "/f.txt"
		for i := 1; i <= 12; i++ {
			if _, err := ed.StrReplace(ctx, p, fmt.Sprintf("v%d", i-1), fmt.Sprintf("v%d", i), ""); err != nil {
				t.Fatal(err)
			}
		}
		for i := 11; i >= 2; i-- {
			if _, err := ed.Undo(ctx, p); err != nil {
				t.Fatalf("undo to v%d: %v", i, err)
			}
			assertEqual(t, fmt.Sprintf("undo to v%d", i), fmt.Sprintf("v%d\n", i), readFile(t, p))
		}
		_, err := ed.Undo(ctx, p)
		assertEqual(t, "11th undo", editor.KindNoEditHistory, toolKind(err))
	})
	t.Run("refused after an outside change", func(t *testing.T) {
		ed, _, root := newEditor(t, editor.Options{}, map[string]string{"f.txt": "a\n"})
		p := root + "/f.txt"
		if _, err := ed.StrReplace(ctx, p, "a", "b", ""); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("human\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ed.Undo(ctx, p)
		assertEqual(t, "undo after outside change", editor.KindChangedOutsideEditor, toolKind(err))
		assertEqual(t, "file untouched", "human\n", readFile(t, p))
		_, err = ed.Undo(ctx, p)
		assertEqual(t, "history discarded", editor.KindNoEditHistory, toolKind(err))
	})
	t.Run("edit after an outside change drops older history", func(t *testing.T) {
		ed, _, root := newEditor(t, editor.Options{}, map[string]string{"f.txt": "a\n"})
		p := root + "/f.txt"
		if _, err := ed.StrReplace(ctx, p, "a", "b", ""); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(p, []byte("human b\n"), 0o644)
		if _, err := ed.StrReplace(ctx, p, "human", "agent", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := ed.Undo(ctx, p); err != nil {
			t.Fatal(err)
		}
		assertEqual(t, "first undo restores the human's text", "human b\n", readFile(t, p))
		_, err := ed.Undo(ctx, p)
		assertEqual(t, "second undo", editor.KindNoEditHistory, toolKind(err))
	})
	t.Run("undo restores crlf bytes", func(t *testing.T) {
		ed, _, root := newEditor(t, editor.Options{}, map[string]string{"f.txt": "a\r\nb\r\n"})
		p := root + "/f.txt"
		if _, err := ed.StrReplace(ctx, p, "a", "x", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := ed.Undo(ctx, p); err != nil {
			t.Fatal(err)
		}
		assertEqual(t, "undo", "a\r\nb\r\n", readFile(t, p))
	})
}

// TestConcurrentStrReplace: 50 goroutines each replace their own marker in
// one file; per-path serialization must not lose any.
func TestConcurrentStrReplace(t *testing.T) {
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, "marker-%02d\n", i)
	}
	ed, _, root := newEditor(t, editor.Options{}, map[string]string{"f.txt": b.String()})
	p := root + "/f.txt"
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := ed.StrReplace(context.Background(), p, fmt.Sprintf("marker-%02d", i), fmt.Sprintf("done-%02d", i), "")
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	got := readFile(t, p)
	for i := range 50 {
		if !strings.Contains(got, fmt.Sprintf("done-%02d\n", i)) {
			t.Errorf("edit %d lost; file:\n%s", i, got)
		}
	}
}

// recordingBuffers is a fake editor that applies every edit.
type recordingBuffers struct {
	mu    sync.Mutex
	calls []string
}

func (r *recordingBuffers) ApplyFullText(_ context.Context, path, oldText, newText string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, fmt.Sprintf("%s: %q -> %q", filepath.Base(path), oldText, newText))
	return true, nil
}

func TestEditsReachOpenBuffers(t *testing.T) {
	ctx := context.Background()
	ed, fs, root := newEditor(t, editor.Options{}, map[string]string{"f.txt": "disk\n"})
	p := root + "/f.txt"
	buffers := &recordingBuffers{}
	fs.SetBufferEditor(buffers)
	if err := fs.Overlay().DidOpen(p, "unsaved buffer\n", 1); err != nil {
		t.Fatal(err)
	}
	res, err := ed.StrReplace(ctx, p, "unsaved", "edited", "")
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, "buffer calls", `f.txt: "unsaved buffer\n" -> "edited buffer\n"`, strings.Join(buffers.calls, "; "))
	assertEqual(t, "disk untouched", "disk\n", readFile(t, p))
	view, err := ed.View(ctx, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, "view sees the buffer", "Here's the result of running `cat -n` on "+p+":\n     1\tedited buffer\n     2\t\n", view.Output)
	assertEqual(t, "version of the buffer", workspace.Version([]byte("edited buffer\n")), res.Version)
}

func TestTooLarge(t *testing.T) {
	roots, err := workspace.NewRoots([]string{t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	p := roots.First() + "/big.txt"
	if err := os.WriteFile(p, make([]byte, 3<<19), 0o644); err != nil { // 1.5 MiB
		t.Fatal(err)
	}
	ed := editor.New(workspace.New(roots, workspace.Options{MaxFileSize: 1 << 20}), editor.Options{})
	_, err = ed.View(context.Background(), p, nil)
	var te *editor.ToolError
	if !errors.As(err, &te) {
		t.Fatalf("want a ToolError, got %v", err)
	}
	// research §4.1: validate_file's size message.
	assertEqual(t, "view "+p, "File validation failed for "+p+": File is too large (1.5MB). Maximum allowed size is 1MB.", te.Message)
	assertEqual(t, "kind", editor.KindTooLarge, te.Kind)
}
