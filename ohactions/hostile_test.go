//go:build unix

package ohactions_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest/shellplant"

	"github.com/oh-bridge/oh-bridge/ohactions"
)

// Hostile files the agent can plant in its workspace (issue 22), made from
// a shell as its terminal would make them, then read through V0's actions.

// observed is the part of an observation dict these tests look at.
type observed struct {
	Observation string `json:"observation"`
	Content     string `json:"content"`
	Extras      struct {
		Metadata *struct {
			ExitCode int `json:"exit_code"`
		} `json:"metadata"`
		Fault *struct {
			Kind string `json:"kind"`
			Path string `json:"path"`
			Type string `json:"type"`
		} `json:"oh_bridge_error"`
	} `json:"extras"`
}

// executeWithin runs action and fails the test when it is not answered
// within the test's context. A read stuck in open(2) on a FIFO ignores its
// context, so on the deadline every FIFO under dir is opened for writing
// and closed, which lets such an open return and the test end.
func executeWithin(t *testing.T, rt *ohactions.Runtime, dir string, action map[string]any) observed {
	t.Helper()
	raw, err := json.Marshal(action)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	type result struct {
		obs *ohactions.Observation
		err error
	}
	done := make(chan result, 1)
	go func() {
		obs, err := rt.Execute(ctx, raw)
		done <- result{obs, err}
	}()
	var res result
	select {
	case res = <-done:
	case <-ctx.Done():
		releaseFIFOs(dir)
		<-done
		t.Fatalf("%s: no answer within the test's context (a FIFO held it)", raw)
	}
	if res.err != nil {
		t.Fatalf("%s: %v", raw, res.err)
	}
	data, err := json.Marshal(res.obs)
	if err != nil {
		t.Fatal(err)
	}
	var o observed
	if err := json.Unmarshal(data, &o); err != nil {
		t.Fatal(err)
	}
	return o
}

// releaseFIFOs opens each FIFO under dir for writing and closes it again:
// a reader blocked in open(2) then returns and reads end-of-file.
func releaseFIFOs(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type()&fs.ModeNamedPipe != 0 {
			if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
		}
		return nil
	})
}

// TestReadSpecialFiles: V0's read of a FIFO, a socket, a FIFO with an
// image's name and an image over the cap is answered at once, the special
// files with the kind not_regular_file and their type in
// extras.oh_bridge_error (V0 has no words for them: its open would wait).
func TestReadSpecialFiles(t *testing.T) {
	rt, dir := newTestRuntime(t)
	shellplant.Run(t, dir, `mkfifo fifo clip.png && python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("sock")' && yes x | head -c 22020096 > huge.png`)
	cases := []struct {
		name, path, impl string
		obs, typ, words  string
	}{
		{"fifo", "fifo", "default", "error", "fifo", "is a FIFO (named pipe), not a regular file"},
		{"fifo oh_aci", filepath.Join(dir, "fifo"), "oh_aci", "read", "fifo", "is a FIFO (named pipe), not a regular file"},
		{"socket", "sock", "default", "error", "socket", "is a Unix domain socket, not a regular file"},
		{"socket oh_aci", filepath.Join(dir, "sock"), "oh_aci", "read", "socket", "is a Unix domain socket, not a regular file"},
		{"fifo as an image", "clip.png", "default", "error", "fifo", "is a FIFO (named pipe), not a regular file"},
		{"image over the cap", "huge.png", "default", "error", "", "is too large to read (22020096 bytes; images, PDFs and videos are read up to 20971520 bytes)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := executeWithin(t, rt, dir, map[string]any{"action": "read", "args": map[string]any{"path": c.path, "impl_source": c.impl}})
			if o.Observation != c.obs || !strings.Contains(o.Content, c.words) {
				t.Errorf("read %s: %s observation %q; want %s saying %q", c.path, o.Observation, head(o.Content), c.obs, c.words)
			}
			want := c.path // as OpenHands names it: relative paths from the shell's cwd
			if !filepath.IsAbs(want) {
				want = filepath.Join(dir, want)
			}
			switch f := o.Extras.Fault; {
			case c.typ == "" && f != nil:
				t.Errorf("read %s: extras.oh_bridge_error %+v; want none", c.path, *f)
			case c.typ != "" && (f == nil || f.Kind != "not_regular_file" || f.Type != c.typ || f.Path != want):
				t.Errorf("read %s: extras.oh_bridge_error %+v; want kind not_regular_file, type %s, path %s", c.path, f, c.typ, want)
			}
		})
	}
}

// TestWriteSpecialFile: V0's write over a FIFO refuses it at once with the
// kind, and leaves it a FIFO.
func TestWriteSpecialFile(t *testing.T) {
	rt, dir := newTestRuntime(t)
	shellplant.Run(t, dir, `mkfifo fifo`)
	o := executeWithin(t, rt, dir, map[string]any{"action": "write", "args": map[string]any{"path": "fifo", "content": "x"}})
	if f := o.Extras.Fault; o.Observation != "error" || f == nil || f.Kind != "not_regular_file" || f.Type != "fifo" {
		t.Errorf("write fifo: %s observation %q, extras.oh_bridge_error %+v; want an error with kind not_regular_file, type fifo", o.Observation, o.Content, f)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "fifo")); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("after the write, fifo is %v (%v); want the FIFO as it was", fi, err)
	}
}

// TestGitDiffHelperFIFO: the UI's git_diff.py helper on a FIFO in a
// repository exits 1 at once, saying what the file is, so OpenHands'
// fallback runs.
func TestGitDiffHelperFIFO(t *testing.T) {
	rt, dir := newTestRuntime(t)
	shellplant.Run(t, dir, `git init -q && mkfifo f`)
	o := executeWithin(t, rt, dir, map[string]any{"action": "run", "args": map[string]any{
		"command": `python3 /openhands/code/openhands/runtime/utils/git_diff.py "f"`, "is_static": true, "cwd": dir, "hidden": true}})
	if o.Extras.Metadata == nil || o.Extras.Metadata.ExitCode != 1 || !strings.Contains(o.Content, "is a FIFO (named pipe), not a regular file") {
		t.Errorf("git_diff.py of a FIFO: %q, metadata %+v; want exit 1 naming the FIFO", head(o.Content), o.Extras.Metadata)
	}
}

// head is the start of a content, for a failure's message: a data URL
// runs to megabytes.
func head(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
