//go:build linux

package handlers_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/handlers"
	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/rpc/rpctest"
)

// The disk faults of the editor's face: edit/* (JSON-RPC errors) and
// openhands/execute_action (V0 observations).

// serveOnFaultyDisk serves the editor's face, initialized, over a root
// on an ohtest.FaultyDisk of these options holding a.txt ("alpha\n"),
// read-only when readOnly; it returns the client and a.txt's path.
func serveOnFaultyDisk(t *testing.T, opts string, readOnly bool) (*rpctest.Client, string) {
	t.Helper()
	p := ohtest.FaultyFile(t, opts, readOnly, "a.txt", "alpha\n")
	_, cl := serve(t, handlers.Config{Version: "1.0.0", Roots: []string{filepath.Dir(p)}})
	if _, err := cl.Initialize(ctxT(t), map[string]any{"capabilities": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	return cl, p
}

// TestEditDiskFaults: edit/* on a full disk and on a read-only one answer
// OHEditor's text (Python's OSError where it has one) and the fault's own
// kind with {path, op, unchanged}, as fs/* does; the file keeps its bytes.
func TestEditDiskFaults(t *testing.T) {
	cases := []struct {
		name     string
		size     string
		readOnly bool
		newStr   string
		kind     string
		cause    func(path string) string
	}{
		{"disk full", "size=512k", false, strings.Repeat("x", 1<<20), "no_space",
			func(string) string { return "[Errno 28] No space left on device" }},
		{"read-only file system", "size=1m", true, "beta", "read_only_file_system",
			func(p string) string { return "[Errno 30] Read-only file system: '" + p + "'" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl, p := serveOnFaultyDisk(t, c.size, c.readOnly)
			err := cl.Call(ctxT(t), "edit/str_replace", map[string]any{"path": "a.txt", "oldStr": "alpha", "newStr": c.newStr}, nil)
			want := "Ran into " + c.cause(p) + " while trying to write to " + p
			data := wantError(t, err, 1014, c.kind, want)
			var e *rpc.Error
			if errors.As(err, &e) && e.Message != want {
				t.Errorf("message %q, want %q", e.Message, want)
			}
			if data["op"] != "write" || data["unchanged"] != true || data["path"] != p {
				t.Errorf("data = %v, want op write, unchanged true, path %s", data, p)
			}
			if got := readDisk(t, p); got != "alpha\n" {
				t.Errorf("a.txt = %q after the failed edit, want its old content", got)
			}
		})
	}
}

// TestExecuteActionDiskFaults: V0's edit and write actions on a full disk
// and on a read-only one. The edit answers OpenHands' edit observation,
// "ERROR:\n" and OHEditor's text with Python's OSError in it; the write,
// where OpenHands' runtime answered HTTP 500, an ErrorObservation in the
// bridge's words. Both add extras.oh_bridge_error {kind, path, op,
// unchanged}; the file keeps its bytes.
func TestExecuteActionDiskFaults(t *testing.T) {
	cases := []struct {
		name     string
		size     string
		readOnly bool
		content  string
		kind     string
		cause    func(path string) string
		says     string // in the write's ErrorObservation
	}{
		{"disk full", "size=512k", false, strings.Repeat("x", 1<<20), "no_space",
			func(string) string { return "[Errno 28] No space left on device" }, "no space left on device (the old content is unchanged); free space and retry"},
		{"read-only file system", "size=1m", true, "beta", "read_only_file_system",
			func(p string) string { return "[Errno 30] Read-only file system: '" + p + "'" }, "read-only file system (the old content is unchanged)"},
	}
	type observation struct {
		Observation string `json:"observation"`
		Content     string `json:"content"`
		Extras      struct {
			Fault *struct {
				Kind      string `json:"kind"`
				Path      string `json:"path"`
				Op        string `json:"op"`
				Unchanged bool   `json:"unchanged"`
			} `json:"oh_bridge_error"`
		} `json:"extras"`
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl, p := serveOnFaultyDisk(t, c.size, c.readOnly)
			execute := func(action map[string]any) (observation, string) {
				t.Helper()
				var res struct{ Observation json.RawMessage }
				if err := cl.Call(ctxT(t), "openhands/execute_action", map[string]any{"action": action}, &res); err != nil {
					t.Fatal(err)
				}
				var o observation
				json.Unmarshal(res.Observation, &o)
				return o, string(res.Observation)
			}
			check := func(what string, o observation, raw string) {
				t.Helper()
				if f := o.Extras.Fault; f == nil || f.Kind != c.kind || f.Path != p || f.Op != "write" || !f.Unchanged {
					t.Errorf("%s: extras.oh_bridge_error of %s; want {kind %s, path %s, op write, unchanged true}", what, raw, c.kind, p)
				}
				if got, _ := os.ReadFile(p); string(got) != "alpha\n" {
					t.Errorf("%s: a.txt = %q, want its old content", what, got)
				}
			}

			o, raw := execute(map[string]any{"action": "edit", "args": map[string]any{
				"command": "str_replace", "path": p, "old_str": "alpha", "new_str": c.content, "impl_source": "oh_aci"}})
			want := "ERROR:\nRan into " + c.cause(p) + " while trying to write to " + p
			if o.Observation != "edit" || o.Content != want {
				t.Errorf("edit: %s observation with %q; want edit with %q", o.Observation, o.Content, want)
			}
			check("edit", o, raw)

			o, raw = execute(map[string]any{"action": "write", "args": map[string]any{"path": p, "content": c.content}})
			if o.Observation != "error" || !strings.HasPrefix(o.Content, "cannot write "+p+": ") || !strings.Contains(o.Content, c.says) {
				t.Errorf("write: %s observation with %q; want an error saying %q", o.Observation, o.Content, c.says)
			}
			check("write", o, raw)
		})
	}
}
