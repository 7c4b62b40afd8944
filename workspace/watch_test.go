package workspace

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// changeLog collects batches from a watcher and lets a test await a
// condition with a deadline.
type changeLog struct {
	mu      sync.Mutex
	changes []Change
	notify  chan struct{}
}

func newChangeLog() *changeLog { return &changeLog{notify: make(chan struct{}, 1)} }

func (c *changeLog) add(batch []Change) {
	c.mu.Lock()
	c.changes = append(c.changes, batch...)
	c.mu.Unlock()
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// await waits until want (formatted "type source relpath") is among the
// changes, and returns everything seen so far.
func (c *changeLog) await(t *testing.T, root string, want ...string) []string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		seen := c.formatted(root)
		missing := ""
		for _, w := range want {
			if !contains(seen, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return seen
		}
		select {
		case <-c.notify:
		case <-deadline:
			t.Fatalf("want change %q; got %q", missing, seen)
		}
	}
}

func (c *changeLog) formatted(root string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, ch := range c.changes {
		out = append(out, fmt.Sprintf("%s %s %s", ch.Type, ch.Source, relSlash(root, ch.Path)))
	}
	return out
}

func (c *changeLog) reset() {
	c.mu.Lock()
	c.changes = nil
	c.mu.Unlock()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func startWatch(t *testing.T, fs *FS, opts WatchOptions) *changeLog {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	log := newChangeLog()
	w, err := fs.Watch(ctx, opts, log.add)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-w.Done():
		case <-time.After(5 * time.Second):
			t.Error("watcher did not stop after cancel")
		}
	})
	return log
}

func TestWatch(t *testing.T) {
	ctx := context.Background()
	fs, root := newFS(t, map[string]string{"existing.txt": "e\n", "sub/old.txt": "o\n", "gone.txt": "g\n"})
	log := startWatch(t, fs, WatchOptions{})
	steps := []struct {
		name string
		do   func() error
		want []string
	}{
		{"external create", func() error { return os.WriteFile(root+"/ext.txt", []byte("x"), 0o644) },
			[]string{"created external ext.txt"}},
		{"external modify", func() error {
			f, err := os.OpenFile(root+"/existing.txt", os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			f.WriteString("more\n")
			return f.Close()
		}, []string{"changed external existing.txt"}},
		{"agent create", func() error {
			_, err := fs.WriteTextFile(ctx, "agent.txt", "a", "", false)
			return err
		}, []string{"created agent agent.txt"}},
		{"agent rewrite is a change", func() error {
			_, err := fs.WriteTextFile(ctx, "existing.txt", "rewritten\n", "", false)
			return err
		}, []string{"changed agent existing.txt"}},
		{"external rename", func() error { return os.Rename(root+"/sub/old.txt", root+"/sub/new.txt") },
			[]string{"deleted external sub/old.txt", "created external sub/new.txt"}},
		{"agent move", func() error { return fs.Move(ctx, "agent.txt", "sub/moved.txt", false) },
			[]string{"deleted agent agent.txt", "created agent sub/moved.txt"}},
		{"external delete", func() error { return os.Remove(root + "/gone.txt") },
			[]string{"deleted external gone.txt"}},
		{"agent delete", func() error { return fs.Delete(ctx, "ext.txt", false) },
			[]string{"deleted agent ext.txt"}},
		{"new directory is watched", func() error {
			if err := os.MkdirAll(root+"/n1/n2", 0o755); err != nil {
				return err
			}
			return os.WriteFile(root+"/n1/n2/deep.txt", []byte("d"), 0o644)
		}, []string{"created external n1", "created external n1/n2/deep.txt"}},
		{"agent creates parents", func() error {
			_, err := fs.WriteTextFile(ctx, "p1/p2/f.txt", "f", "", true)
			return err
		}, []string{"created agent p1", "created agent p1/p2/f.txt"}},
	}
	for _, st := range steps {
		log.reset()
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		seen := log.await(t, root, st.want...)
		for _, s := range seen {
			if strings.Contains(s, tmpMarker) {
				t.Errorf("%s: temporary file reported: %s", st.name, s)
			}
		}
	}

	// Later changes in a directory that was moved are reported under its
	// new name only.
	log.reset()
	if err := os.Rename(root+"/n1", root+"/m1"); err != nil {
		t.Fatal(err)
	}
	log.await(t, root, "deleted external n1", "created external m1")
	log.reset()
	os.WriteFile(root+"/m1/n2/after.txt", []byte("x"), 0o644)
	seen := log.await(t, root, "created external m1/n2/after.txt")
	for _, s := range seen {
		if strings.Contains(s, "n1/") {
			t.Errorf("stale path reported after the move: %s", s)
		}
	}
}

func TestWatchIgnores(t *testing.T) {
	fs, root := newFS(t, map[string]string{"node_modules/a/x.js": "", ".git/HEAD": "", "vendor/v.go": ""})
	log := startWatch(t, fs, WatchOptions{Ignore: []string{".git", "node_modules", "vendor"}})
	os.WriteFile(root+"/node_modules/a/y.js", []byte("x"), 0o644)
	os.WriteFile(root+"/.git/index", []byte("x"), 0o644)
	os.WriteFile(root+"/vendor/w.go", []byte("x"), 0o644)
	os.MkdirAll(root+"/src/node_modules", 0o755)
	os.WriteFile(root+"/src/node_modules/z.js", []byte("x"), 0o644)
	// Events are ordered per watcher; once the sentinel is seen, earlier
	// changes to ignored paths would have been seen too.
	os.WriteFile(root+"/sentinel", []byte("x"), 0o644)
	seen := log.await(t, root, "created external sentinel")
	for _, s := range seen {
		if !strings.HasSuffix(s, " sentinel") && !strings.HasSuffix(s, " src") {
			t.Errorf("ignored path reported: %s", s)
		}
	}
}

func TestWatchOutOfWatches(t *testing.T) {
	fs, root := newFS(t, map[string]string{"full1/a": "", "full2/b": "", "ok/c": ""})
	addWatchHook = func(add func(string) error, dir string) error {
		if strings.HasPrefix(filepath.Base(dir), "full") {
			return fmt.Errorf("inotify_add_watch %s: %w", dir, syscall.ENOSPC)
		}
		return add(dir)
	}
	t.Cleanup(func() { addWatchHook = nil })
	var buf bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &buf, mu: &mu}, nil))
	log := startWatch(t, fs, WatchOptions{Logger: logger})
	os.WriteFile(root+"/ok/d", []byte("x"), 0o644)
	log.await(t, root, "created external ok/d")
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	assertEqual(t, "ENOSPC warnings logged", 1, strings.Count(out, "out of inotify watches"))
	assertEqual(t, "component attribute", true, strings.Contains(out, "component=workspace.watch"))
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
