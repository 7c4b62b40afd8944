package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Change types and sources reported by Watch.
const (
	ChangeCreated = "created"
	ChangeChanged = "changed"
	ChangeDeleted = "deleted"

	SourceAgent    = "agent"    // made through this FS
	SourceExternal = "external" // made by anything else (a human, a build)
)

// Change is one coalesced change to a path.
type Change struct {
	Path   string
	Type   string // ChangeCreated, ChangeChanged or ChangeDeleted
	Source string // SourceAgent or SourceExternal
}

// DefaultWatchIgnore are the names never watched when WatchOptions.Ignore is
// nil: huge, machine-written trees whose events nobody wants.
var DefaultWatchIgnore = []string{".git", "node_modules"}

// DefaultCoalesce is how long events are gathered into one batch.
const DefaultCoalesce = 50 * time.Millisecond

// WatchOptions configures Watch.
type WatchOptions struct {
	// Ignore lists file and directory names that are neither watched nor
	// reported, at any depth. nil means DefaultWatchIgnore; use an empty,
	// non-nil slice to watch everything.
	Ignore []string
	// Coalesce is the batching window; 0 means DefaultCoalesce.
	Coalesce time.Duration
	// Logger receives watch problems; nil means slog.Default().
	Logger *slog.Logger
}

// Watcher is a running watch. It stops when the context given to Watch is
// cancelled; Done is closed once it has released its resources.
type Watcher struct {
	done chan struct{}
}

// Done is closed when the watcher has stopped.
func (w *Watcher) Done() <-chan struct{} { return w.done }

// addWatchHook, when set by tests, replaces fsnotify's Add, so that running
// out of inotify watches can be simulated.
var addWatchHook func(add func(string) error, dir string) error

// Watch reports changes under all roots to onChange, in batches gathered over
// opts.Coalesce. Directories are watched recursively, including ones created
// later (whose existing contents are then reported as created, since their
// events came before the watch). A rename is reported as the old path deleted
// and the new one created. Changes made through this FS are tagged
// SourceAgent; so is an atomic rewrite by the FS, reported as changed.
//
// Watch returns once every existing directory is watched. onChange is called
// from a single goroutine, never concurrently. When the kernel runs out of
// inotify watches the problem is logged once and the affected subtrees are
// left unwatched.
func (f *FS) Watch(ctx context.Context, opts WatchOptions, onChange func([]Change)) (*Watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("start file watcher: %w", err)
	}
	w := &watcher{
		fs:       f,
		fw:       fw,
		ignore:   make(map[string]bool),
		log:      opts.Logger,
		coalesce: opts.Coalesce,
		onChange: onChange,
		watched:  make(map[string]bool),
		pending:  make(map[string]*Change),
	}
	if w.log == nil {
		w.log = slog.Default()
	}
	w.log = w.log.With("component", "workspace.watch")
	if w.coalesce <= 0 {
		w.coalesce = DefaultCoalesce
	}
	ignore := opts.Ignore
	if ignore == nil {
		ignore = DefaultWatchIgnore
	}
	for _, name := range ignore {
		w.ignore[name] = true
	}
	for _, root := range f.roots.dirs {
		if err := w.addTree(root, false); err != nil {
			fw.Close()
			return nil, err
		}
	}
	pub := &Watcher{done: make(chan struct{})}
	go func() {
		defer close(pub.done)
		w.run(ctx)
	}()
	return pub, nil
}

type watcher struct {
	fs       *FS
	fw       *fsnotify.Watcher
	ignore   map[string]bool
	log      *slog.Logger
	coalesce time.Duration
	onChange func([]Change)

	watched    map[string]bool // directories with a watch, for pruning moved trees
	enospcOnce sync.Once

	pending map[string]*Change
	order   []string
}

func (w *watcher) add(dir string) error {
	if addWatchHook != nil {
		return addWatchHook(w.fw.Add, dir)
	}
	return w.fw.Add(dir)
}

// addTree watches dir and every directory below it. With report, everything
// found is queued as created: it appeared before the watch could see it.
func (w *watcher) addTree(dir string, report bool) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && !report {
				return fmt.Errorf("watch %s: %w", p, err)
			}
			return nil // vanished or unreadable meanwhile; nothing to watch
		}
		if p != dir && (w.ignore[d.Name()] || strings.Contains(d.Name(), tmpMarker)) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if report && p != dir {
			w.queue(p, ChangeCreated)
		}
		if !d.IsDir() {
			return nil
		}
		if err := w.add(p); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				w.enospcOnce.Do(func() {
					w.log.Warn("out of inotify watches; changes in this directory and others from now on go unreported",
						"dir", p, "fix", "raise fs.inotify.max_user_watches (sysctl) or add names to the watch ignore list")
				})
				return filepath.SkipDir
			}
			if p == dir && !report {
				return fmt.Errorf("watch %s: %w", p, err)
			}
			w.log.Debug("cannot watch directory", "dir", p, "err", err)
			return filepath.SkipDir
		}
		w.watched[p] = true
		return nil
	})
}

func (w *watcher) run(ctx context.Context) {
	defer w.fw.Close()
	var timer *time.Timer
	var fire <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			w.handle(ev)
			if len(w.order) > 0 && fire == nil {
				timer = time.NewTimer(w.coalesce)
				fire = timer.C
			}
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.log.Warn("file change events were dropped by the kernel; some changes go unreported", "err", err)
			} else {
				w.log.Warn("file watcher error", "err", err)
			}
		case <-fire:
			fire = nil
			w.flush()
		}
	}
}

func (w *watcher) ignored(p string) bool {
	root := w.fs.rootOf(p)
	if root == "" {
		return true
	}
	rel := strings.TrimPrefix(p[len(root):], string(filepath.Separator))
	if strings.Contains(filepath.Base(rel), tmpMarker) {
		return true
	}
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if w.ignore[part] {
			return true
		}
	}
	return false
}

func (w *watcher) handle(ev fsnotify.Event) {
	p := ev.Name
	if w.ignored(p) {
		return
	}
	switch {
	case ev.Has(fsnotify.Create):
		typ := ChangeCreated
		if w.fs.agent.replaced(p) {
			typ = ChangeChanged // our atomic rewrite renames a new file over the old
		}
		w.queue(p, typ)
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			w.addTree(p, true)
		}
	case ev.Has(fsnotify.Write):
		w.queue(p, ChangeChanged)
	case ev.Has(fsnotify.Remove), ev.Has(fsnotify.Rename):
		w.queue(p, ChangeDeleted)
		w.forget(p)
	}
}

// forget drops the watches of a removed or renamed tree: inotify keeps
// watching a moved directory's children under their old names otherwise.
func (w *watcher) forget(p string) {
	if !w.watched[p] {
		return // not a watched directory, so nothing below it is watched
	}
	prefix := p + string(filepath.Separator)
	for dir := range w.watched {
		if dir == p || strings.HasPrefix(dir, prefix) {
			delete(w.watched, dir)
			w.fw.Remove(dir)
		}
	}
}

// queue merges an event into the pending batch so a batch says where each
// path ended up, e.g. created then changed is created, created then deleted
// is nothing, deleted then created (a replace) is changed.
func (w *watcher) queue(p, typ string) {
	src := SourceExternal
	if w.fs.agent.byAgent(p) {
		src = SourceAgent
	}
	c, ok := w.pending[p]
	if !ok {
		w.pending[p] = &Change{Path: p, Type: typ, Source: src}
		w.order = append(w.order, p)
		return
	}
	if src == SourceAgent {
		c.Source = SourceAgent
	}
	switch {
	case c.Type == ChangeCreated && typ == ChangeDeleted:
		delete(w.pending, p) // order is filtered at flush
	case c.Type == ChangeCreated:
		// still created
	case c.Type == ChangeDeleted && typ != ChangeDeleted:
		c.Type = ChangeChanged
	default:
		c.Type = typ
	}
}

func (w *watcher) flush() {
	batch := make([]Change, 0, len(w.pending))
	for _, p := range w.order {
		if c, ok := w.pending[p]; ok {
			batch = append(batch, *c)
			delete(w.pending, p)
		}
	}
	w.order = w.order[:0]
	if len(batch) > 0 {
		w.onChange(batch)
	}
}
