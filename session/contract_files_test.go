package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/oh-bridge/oh-bridge/session"
)

// kindOf is an error's kind, as every face maps it.
func kindOf(err error) string {
	var k interface{ Kind() string }
	if errors.As(err, &k) {
		return k.Kind()
	}
	return ""
}

func ptr(s string) *string { return &s }

// buffers plays an editor that lands edits of open documents in its
// buffers (the editor face's workspace/applyEdit).
type buffers struct {
	mu    sync.Mutex
	edits []string // path: old → new
	s     *session.Session
}

func (b *buffers) ApplyFullText(ctx context.Context, path, oldText, newText string) (bool, error) {
	b.mu.Lock()
	b.edits = append(b.edits, filepath.Base(path)+": "+oldText+" → "+newText)
	b.mu.Unlock()
	// The editor applies it and reports its new buffer, as a client's
	// didChange would.
	return true, b.s.ChangeDocument(path, newText, 2)
}

// TestFilesWithOpenBuffers: reads and edits through the session see the
// text the person has open, unsaved, rather than the disk's; an edit of an
// open document lands in the editor's buffer when the editor takes edits,
// and on disk otherwise; undo restores the text before the edit.
func TestFilesWithOpenBuffers(t *testing.T) {
	cases := []struct {
		name       string
		buffers    bool
		wantEdits  int    // edits the editor was sent
		wantDisk   string // the disk after the edit
		wantUndone string // the disk after undo
	}{
		{"the editor takes edits of open documents", true, 1, "on disk\n", "on disk\n"},
		{"an editor that does not: the edit goes to the disk", false, 0, "unsaved edited\n", "unsaved buffer\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := &buffers{}
			o := session.Options{}
			if tc.buffers {
				o.Buffers = b
			}
			s, dir := newSession(t, o)
			b.s = s
			ctx := context.Background()
			path := filepath.Join(dir, "a.txt")
			if err := os.WriteFile(path, []byte("on disk\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := s.OpenDocument(path, "unsaved buffer\n", 1); err != nil {
				t.Fatal(err)
			}
			f, err := s.ReadTextFile(ctx, "a.txt", 1, 0)
			if err != nil || f.Content != "unsaved buffer\n" || f.TotalLines != 1 || f.Version == "" {
				t.Fatalf("read %+v, %v: want the unsaved buffer", f, err)
			}
			r, err := s.StrReplace(ctx, path, ptr("buffer"), ptr("edited"), "")
			if err != nil {
				t.Fatal(err)
			}
			if r.Text != "unsaved edited\n" || !strings.Contains(r.Diff, "+unsaved edited") {
				t.Fatalf("the edit %+v: want it made on the buffer's text", r)
			}
			if f, _ := s.ReadTextFile(ctx, path, 1, 0); f.Content != "unsaved edited\n" || f.Version != r.Version {
				t.Errorf("read after the edit: %+v, want the edited text at version %s", f, r.Version)
			}
			if disk, _ := os.ReadFile(path); string(disk) != tc.wantDisk {
				t.Errorf("disk %q, want %q", disk, tc.wantDisk)
			}
			if len(b.edits) != tc.wantEdits {
				t.Errorf("the editor was sent %q, want %d edit(s)", b.edits, tc.wantEdits)
			}
			if _, err := s.Undo(ctx, path); err != nil {
				t.Fatal(err)
			}
			if f, _ := s.ReadTextFile(ctx, path, 1, 0); f.Content != "unsaved buffer\n" {
				t.Errorf("read after undo: %q, want the buffer as it was", f.Content)
			}
			if disk, _ := os.ReadFile(path); string(disk) != tc.wantUndone {
				t.Errorf("disk after undo %q, want %q", disk, tc.wantUndone)
			}
			if err := s.CloseDocument(path); err != nil {
				t.Fatal(err)
			}
			if f, _ := s.ReadTextFile(ctx, path, 1, 0); f.Content != tc.wantUndone {
				t.Errorf("read after close: %q, want the disk's %q", f.Content, tc.wantUndone)
			}
		})
	}
}

// TestFilesThroughTheEditor: with ReadText and WriteText (an ACP client's
// fs/read_text_file and fs/write_text_file) the session reads and writes
// through the editor, with resolved paths inside the roots only; without
// them, through the disk. The session builds the file host itself.
func TestFilesThroughTheEditor(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	held := map[string]string{}
	read := func(ctx context.Context, path string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, "read "+path)
		if text, ok := held[path]; ok {
			return text, nil
		}
		data, err := os.ReadFile(path)
		return string(data), err
	}
	write := func(ctx context.Context, path, content string) error {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, "write "+path)
		held[path] = content // unsaved, in the editor's buffer
		return nil
	}
	cases := []struct {
		name        string
		read, write bool
		wantRead    string // what reading a.txt gives after the write
		wantCalls   []string
	}{
		{"reads and writes through the editor", true, true, "from the agent\n", []string{"write a.txt", "read a.txt"}},
		{"reads through the editor, writes to the disk", true, false, "from the agent\n", []string{"read a.txt"}},
		{"neither: the disk", false, false, "from the agent\n", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			calls, held = nil, map[string]string{}
			mu.Unlock()
			o := session.Options{}
			if tc.read {
				o.ReadText = read
			}
			if tc.write {
				o.WriteText = write
			}
			s, dir := newSession(t, o)
			ctx := context.Background()
			if _, err := s.WriteTextFile(ctx, "a.txt", "from the agent\n", "", false); err != nil {
				t.Fatal(err)
			}
			f, err := s.ReadTextFile(ctx, "a.txt", 1, 0)
			if err != nil || f.Content != tc.wantRead {
				t.Fatalf("read %+v, %v; want %q", f, err, tc.wantRead)
			}
			if _, err := s.WriteTextFile(ctx, filepath.Join(dir, "..", "out.txt"), "x", "", false); kindOf(err) != "path_outside_workspace" {
				t.Errorf("a write outside the roots: %v, want path_outside_workspace", err)
			}
			mu.Lock()
			defer mu.Unlock()
			var got []string
			for _, c := range calls {
				op, path, _ := strings.Cut(c, " ")
				if filepath.Dir(path) != dir {
					t.Errorf("the editor was asked about %s, outside the root or unresolved", path)
				}
				// A write may be checked by reading it back: repeats count once.
				if c := op + " " + filepath.Base(path); len(got) == 0 || got[len(got)-1] != c {
					got = append(got, c)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.wantCalls, ",") {
				t.Errorf("the editor was asked %q, want %q", got, tc.wantCalls)
			}
		})
	}
}

// TestEditsAndUndo: the str_replace editor's commands through the session,
// each answering OHEditor's text or a failure of a kind the faces map
// (*session.EditError), and undo back through them, as far as the
// session keeps.
func TestEditsAndUndo(t *testing.T) {
	s, dir := newSession(t, session.Options{MaxUndoPerFile: 2})
	ctx := context.Background()
	path := filepath.Join(dir, "e.txt")
	steps := []struct {
		name string
		do   func() (*session.EditResult, error)
		text string // the file's text after, or
		kind string // the failure's kind
	}{
		{"create", func() (*session.EditResult, error) { return s.Create(ctx, path, "one\ntwo\n") }, "one\ntwo\n", ""},
		{"create again", func() (*session.EditResult, error) { return s.Create(ctx, path, "x") }, "", "file_exists"},
		{"str_replace", func() (*session.EditResult, error) { return s.StrReplace(ctx, path, ptr("two"), ptr("2"), "") }, "one\n2\n", ""},
		{"str_replace of nothing there", func() (*session.EditResult, error) { return s.StrReplace(ctx, path, ptr("zzz"), ptr("2"), "") }, "", "old_str_not_found"},
		{"insert", func() (*session.EditResult, error) { return s.Insert(ctx, path, 0, "zero", "") }, "zero\none\n2\n", ""},
		{"str_replace deleting", func() (*session.EditResult, error) { return s.StrReplace(ctx, path, ptr("one\n"), nil, "") }, "zero\n2\n", ""},
		{"stale version", func() (*session.EditResult, error) { return s.Insert(ctx, path, 0, "x", "v0") }, "", "stale_version"},
		{"undo", func() (*session.EditResult, error) { return s.Undo(ctx, path) }, "zero\none\n2\n", ""},
		{"undo", func() (*session.EditResult, error) { return s.Undo(ctx, path) }, "one\n2\n", ""},
		{"undo past what is kept", func() (*session.EditResult, error) { return s.Undo(ctx, path) }, "", "no_edit_history"},
		{"view", func() (*session.EditResult, error) { return s.View(ctx, path, nil) }, "", ""},
	}
	for i, st := range steps {
		r, err := st.do()
		switch {
		case st.kind != "":
			var ee *session.EditError
			if err == nil || kindOf(err) != st.kind {
				t.Fatalf("step %d (%s): %+v, %v; want a %s failure", i, st.name, r, err, st.kind)
			}
			if errors.As(err, &ee) && ee.Error() == "" {
				t.Errorf("step %d (%s): an edit failure without OHEditor's words", i, st.name)
			}
		case err != nil:
			t.Fatalf("step %d (%s): %v", i, st.name, err)
		case st.name == "view":
			if !strings.Contains(r.Output, "     1\tone") {
				t.Errorf("view: %q", r.Output)
			}
		default:
			disk, _ := os.ReadFile(path)
			if r.Text != st.text || string(disk) != st.text || r.Output == "" {
				t.Fatalf("step %d (%s): result %q, disk %q; want %q", i, st.name, r.Text, disk, st.text)
			}
		}
	}
}
