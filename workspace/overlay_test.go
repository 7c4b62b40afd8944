package workspace

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeBuffers stands in for the editor: it records every call and applies
// or declines as told.
type fakeBuffers struct {
	mu      sync.Mutex
	calls   []string
	decline bool
	fail    error
}

func (f *fakeBuffers) ApplyFullText(_ context.Context, path, oldText, newText string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("%s: %q -> %q", filepath.Base(path), oldText, newText))
	return !f.decline && f.fail == nil, f.fail
}

func TestOverlay(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		buffers   *fakeBuffers // nil: no BufferEditor
		write     string
		expected  string // expected version; "buffer" means the buffer's
		wantErr   string
		wantCalls string
		wantRead  string // ReadTextFile content afterwards
		wantDisk  string
	}{
		{
			name: "applied through the editor", buffers: &fakeBuffers{}, write: "agent\n",
			wantCalls: `a.txt: "buffer\n" -> "agent\n"`, wantRead: "agent\n", wantDisk: "disk\n",
		},
		{
			name: "version is the buffer's", buffers: &fakeBuffers{}, write: "agent\n", expected: "buffer",
			wantCalls: `a.txt: "buffer\n" -> "agent\n"`, wantRead: "agent\n", wantDisk: "disk\n",
		},
		{
			name: "disk version is stale while open", buffers: &fakeBuffers{}, write: "agent\n", expected: Version([]byte("disk\n")),
			wantErr: "stale_version", wantRead: "buffer\n", wantDisk: "disk\n",
		},
		{
			name: "declined", buffers: &fakeBuffers{decline: true}, write: "agent\n",
			wantErr: "buffer_edit_rejected", wantCalls: `a.txt: "buffer\n" -> "agent\n"`, wantRead: "buffer\n", wantDisk: "disk\n",
		},
		{
			name: "editor failed", buffers: &fakeBuffers{fail: errors.New("connection closed")}, write: "agent\n",
			wantErr: "*fmt.wrapError: apply edit to open document a.txt: connection closed", wantCalls: `a.txt: "buffer\n" -> "agent\n"`, wantRead: "buffer\n", wantDisk: "disk\n",
		},
		{
			name: "no editor: disk written, reads follow", write: "agent\n",
			wantRead: "agent\n", wantDisk: "agent\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, root := newFS(t, map[string]string{"a.txt": "disk\n"})
			if tt.buffers != nil {
				fs.SetBufferEditor(tt.buffers)
			}
			if err := fs.Overlay().DidOpen("a.txt", "buffer\n", 1); err != nil {
				t.Fatal(err)
			}
			info, _ := fs.Stat(ctx, "a.txt")
			assertEqual(t, "Stat version while open", Version([]byte("buffer\n")), info.Version)
			expected := tt.expected
			if expected == "buffer" {
				expected = Version([]byte("buffer\n"))
			}
			_, err := fs.WriteTextFile(ctx, "a.txt", tt.write, expected, false)
			assertEqual(t, tt.name+" error", tt.wantErr, kindOf(err))
			calls := ""
			if tt.buffers != nil {
				calls = strings.Join(tt.buffers.calls, "; ")
			}
			assertEqual(t, tt.name+" calls", tt.wantCalls, calls)
			got, err := fs.ReadTextFile(ctx, "a.txt", 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			assertEqual(t, tt.name+" read", tt.wantRead, got.Content)
			assertEqual(t, tt.name+" disk", tt.wantDisk, readFile(t, root+"/a.txt"))
		})
	}
}

func TestOverlayLifecycle(t *testing.T) {
	ctx := context.Background()
	fs, root := newFS(t, map[string]string{"a.txt": "disk\n"})
	ov := fs.Overlay()
	read := func(step string, want string) {
		t.Helper()
		got, err := fs.ReadTextFile(ctx, root+"/a.txt", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		assertEqual(t, step, want, got.Content)
	}
	ov.DidOpen("a.txt", "v1\n", 1)
	read("after open", "v1\n")
	ov.DidChange("a.txt", "v3\n", 3)
	read("after change", "v3\n")
	ov.DidChange("a.txt", "v2\n", 2)
	read("an older change is ignored", "v3\n")
	ov.DidClose("a.txt")
	read("after close", "disk\n")
	ov.DidChange("new.txt", "unsaved\n", 1)
	info, _ := fs.Stat(ctx, "new.txt")
	assertEqual(t, "an unsaved new document exists", true, info.Exists)
	assertEqual(t, "IsOpen", true, ov.IsOpen("new.txt"))
	assertEqual(t, "outside roots", "path_outside_workspace", kindOf(ov.DidOpen("/etc/passwd", "x", 1)))
}
