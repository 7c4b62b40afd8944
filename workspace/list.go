package workspace

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ListOptions configures ListDirectory.
type ListOptions struct {
	Depth            int  // levels to descend; 0 means 1 (direct children only)
	IncludeHidden    bool // list names starting with "."
	RespectGitignore bool // skip what .gitignore files (and .git itself) exclude
	Limit            int  // maximum entries; 0 means no limit (and no bound on memory)
}

// Entry is one listed file system entry.
type Entry struct {
	Path  string // absolute, resolved
	Type  string // TypeFile, TypeDirectory, TypeSymlink (not followed), TypeFIFO, TypeSocket, TypeCharDevice, TypeBlockDevice or TypeOther
	Size  int64
	MTime time.Time
}

// Listing is the result of ListDirectory.
type Listing struct {
	// Depth-first, each directory's entries sorted by name. In the
	// directory where the limit falls, they are the first by name of the
	// entries read (ReadDir's order, listBatch at a time), not of the whole
	// directory.
	Entries   []Entry
	Truncated bool // entries were left out: the limit was reached before the walk finished
}

// ListDirectory lists path up to opts.Depth levels deep. Symlinks are listed
// as such and never descended into, so a link cannot lead the walk out of
// the roots or into a cycle. The walk stops when ctx is done, between
// batches of a directory's entries, between entries when .gitignore rules
// are matched, and between directories. With a limit, directories are read
// in batches and no further than the limit needs, and what the walk holds
// stays within about twice the limit, whatever the tree holds.
func (f *FS) ListDirectory(ctx context.Context, path string, opts ListOptions) (*Listing, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := f.roots.Resolve(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.roots.stat(p)
	if err != nil {
		return nil, pathError(err, path)
	}
	if !fi.IsDir() {
		return nil, &NotDirectoryError{Path: path}
	}
	if opts.Depth <= 0 {
		opts.Depth = 1
	}
	w := &lister{ctx: ctx, opts: opts, out: &Listing{}, roots: f.roots, log: f.log}
	var stack ignoreStack
	if opts.RespectGitignore {
		if stack, err = w.ancestorIgnores(f.rootOf(p), p); err != nil {
			return nil, err
		}
	}
	if err := w.walk(p, "", 1, stack); err != nil {
		return nil, err
	}
	return w.out, nil
}

// rootOf returns the root containing the resolved path p.
func (f *FS) rootOf(p string) string {
	best := ""
	for _, d := range f.roots.dirs {
		if within(p, d) && len(d) > len(best) {
			best = d
		}
	}
	return best
}

type lister struct {
	ctx   context.Context
	opts  ListOptions
	out   *Listing
	roots *Roots // directories are opened beneath their root
	log   *slog.Logger
	// pending is, for each directory open on the way down, the entries
	// it has still to list (its walk's own slice, which trimPending cuts).
	pending []*[]dirEntry
}

// loadIgnore loads the .gitignore in the directory full (rel from the
// listing's base), within what stack leaves of the budget. A file that
// exists but cannot be applied is logged and skipped (gitignore.go says
// why such files are not errors); ok is false then and when there is none.
func (w *lister) loadIgnore(full, rel string, stack ignoreStack) (*ignoreFile, bool) {
	file := filepath.Join(full, ".gitignore")
	ig, err := loadIgnoreFile(w.roots, file, rel, ignoreBudget-stack.cost())
	if err != nil {
		if why := ignoreSkipReason(err); why != "" {
			w.log.Warn("a .gitignore is not applied to this listing", "path", file, "reason", why)
		}
		return nil, false
	}
	if testHookIgnoreHeld != nil {
		testHookIgnoreHeld(stack.cost() + ig.cost)
	}
	return ig, true
}

// testHookIgnoreHeld, when set by a test, is told what the .gitignore
// files in effect hold each time one is added.
var testHookIgnoreHeld func(cost int)

// ancestorIgnores loads the .gitignore files from root down to dir. Listed
// paths are relative to dir, so each ancestor's anchored rules are
// re-anchored at dir (see reanchor).
func (w *lister) ancestorIgnores(root, dir string) (ignoreStack, error) {
	var stack ignoreStack
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return nil, nil
	}
	var parts []string
	if rel != "." {
		parts = strings.Split(filepath.ToSlash(rel), "/")
	}
	cur := root
	for i := 0; i <= len(parts); i++ {
		if i > 0 {
			cur = filepath.Join(cur, parts[i-1])
		}
		if err := w.ctx.Err(); err != nil {
			return nil, err
		}
		ig, ok := w.loadIgnore(cur, "", stack)
		if !ok {
			continue
		}
		// The rules of an ancestor apply to paths relative to that ancestor;
		// prefix them with the path from the ancestor down to dir.
		prefix := strings.Join(parts[i:], "/")
		if prefix != "" {
			ig = reanchor(ig, prefix)
		}
		stack = append(stack, ig)
	}
	return stack, nil
}

// reanchor rewrites an ancestor's rules so they match paths relative to a
// descendant: anchored rules must start with the descendant's prefix, which
// is consumed; rules that cannot match below it are dropped.
func reanchor(ig *ignoreFile, prefix string) *ignoreFile {
	pre := strings.Split(prefix, "/")
	out := &ignoreFile{cost: ig.cost}
	for _, r := range ig.rules {
		if !r.anchored || (len(r.segments) > 0 && r.segments[0] == "**") {
			out.rules = append(out.rules, r)
			continue
		}
		segs, ok := consumePrefix(r.segments, pre)
		if !ok {
			continue
		}
		nr := r
		nr.segments = segs
		nr.count()
		out.rules = append(out.rules, nr)
	}
	return out
}

// consumePrefix matches the literal directory names pre against the first
// pattern segments and returns the remaining segments. A "**" on the way
// keeps the rule open-ended.
func consumePrefix(segs, pre []string) ([]string, bool) {
	for len(pre) > 0 {
		if len(segs) == 0 {
			return nil, false
		}
		if segs[0] == "**" {
			return segs, true
		}
		if ok, err := filepath.Match(segs[0], pre[0]); err != nil || !ok {
			return nil, false
		}
		segs, pre = segs[1:], pre[1:]
	}
	if len(segs) == 0 {
		return nil, false // the rule names dir itself, which the caller asked to list
	}
	return segs, true
}

// listBatch is how many entries a directory is read at a time. A walk
// holds no more of a directory than its room (the limit less the entries
// listed) plus one batch, whatever the directory holds.
const listBatch = 1024

// statChunk is how many entries are stat'ed between two looks at ctx.
const statChunk = 4 * listBatch

func (w *lister) walk(dir, rel string, depth int, stack ignoreStack) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	d, err := w.roots.openDir(dir)
	if err != nil {
		if rel == "" {
			return err
		}
		return nil // an unreadable subdirectory is listed but not entered
	}
	kept, err := w.read(d, rel, stack)
	if err == nil {
		err = w.stat(d, kept)
	}
	d.Close()
	if err != nil {
		if rel == "" || w.ctx.Err() != nil {
			return err
		}
		return nil
	}
	prefix := dir + string(filepath.Separator)
	if os.IsPathSeparator(dir[len(dir)-1]) { // a volume's root: "/", `C:\`
		prefix = dir
	}
	// kept is what this directory has still to list; trimPending may cut
	// it while a subdirectory is walked.
	w.pending = append(w.pending, &kept)
	defer func() { w.pending = w.pending[:len(w.pending)-1] }()
	w.trimPending()
	// Room for what this directory lists, at once: appending one at a
	// time would allocate about twice that on the way.
	w.out.Entries = slices.Grow(w.out.Entries, len(kept))
	for len(kept) > 0 {
		de := kept[0]
		kept = kept[1:]
		isDir := de.typ.IsDir()
		full := prefix + de.name // dir is clean and de.name a plain name: filepath.Join's result
		w.out.Entries = append(w.out.Entries, Entry{Path: full, Type: typeOf(de.typ), Size: de.size, MTime: de.mtime})
		// A full listing enters a directory only to see whether it cuts
		// something (truncated), and not once it knows.
		if isDir && depth < w.opts.Depth && !(w.full() && w.out.Truncated) {
			childRel := joinRel(rel, de.name)
			sub := stack
			if w.opts.RespectGitignore {
				if ig, ok := w.loadIgnore(full, childRel, stack); ok {
					sub = append(stack[:len(stack):len(stack)], ig)
				}
			}
			if err := w.walk(full, childRel, depth+1, sub); err != nil {
				return err
			}
		}
	}
	return nil
}

// read reads the open directory d listBatch entries at a time and keeps
// those the options list, sorted by name. It stops reading once more are
// kept than the room left: those are cut to the room, the first by name
// of the entries read, not of the whole directory, and the listing is
// truncated. ctx is looked at between batches, and between entries when
// .gitignore rules are matched.
func (w *lister) read(d *os.File, rel string, stack ignoreStack) ([]dirEntry, error) {
	room := w.room()
	var kept []dirEntry
	for {
		if err := w.ctx.Err(); err != nil {
			return nil, err
		}
		batch, rerr := d.ReadDir(listBatch)
		for _, de := range batch {
			if w.opts.RespectGitignore {
				// Matching is the walk's costly part: stop at once when asked.
				if err := w.ctx.Err(); err != nil {
					return nil, err
				}
			}
			e := listedEntry(de)
			if !w.opts.IncludeHidden && strings.HasPrefix(e.name, ".") {
				continue
			}
			if w.opts.RespectGitignore && e.name == ".git" {
				continue
			}
			if w.opts.RespectGitignore && stack.ignored(joinRel(rel, e.name), e.typ.IsDir()) {
				continue
			}
			kept = append(kept, e)
		}
		if testHookListRead != nil {
			testHookListRead(w.held() + len(kept))
		}
		if room >= 0 && len(kept) > room {
			break
		}
		if errors.Is(rerr, io.EOF) || (rerr == nil && len(batch) == 0) {
			break
		}
		if rerr != nil {
			return nil, rerr
		}
	}
	slices.SortFunc(kept, func(a, b dirEntry) int { return strings.Compare(a.name, b.name) })
	if room >= 0 && len(kept) > room {
		kept = kept[:room]
		w.out.Truncated = true
	}
	return kept, nil
}

// stat fills in the size and time of the entries kept, a chunk at a time
// with a look at ctx between chunks.
func (w *lister) stat(d *os.File, kept []dirEntry) error {
	for part := range slices.Chunk(kept, statChunk) {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		statEntries(d, part)
	}
	return nil
}

// room is how many more entries the listing may hold, or -1 for no limit.
func (w *lister) room() int {
	if w.opts.Limit <= 0 {
		return -1
	}
	return max(w.opts.Limit-len(w.out.Entries), 0)
}

// full reports whether the listing holds its limit.
func (w *lister) full() bool { return w.room() == 0 }

// held is the entries the walk holds: those listed and those its open
// directories have still to list.
func (w *lister) held() int {
	n := len(w.out.Entries)
	for _, p := range w.pending {
		n += len(*p)
	}
	return n
}

// trimPending keeps what the open directories have still to list within
// the room left, so the walk holds at most twice the limit (plus a batch)
// however deep it goes. The deepest directory's entries come out first,
// then its parent's, so the cut takes the last entries of the shallowest
// directories; a directory's own read already kept no more than the room.
func (w *lister) trimPending() {
	room := w.room()
	if room < 0 {
		return
	}
	over := w.held() - len(w.out.Entries) - room
	for _, p := range w.pending {
		if over <= 0 {
			return
		}
		cut := min(over, len(*p))
		*p = slices.Clone((*p)[:len(*p)-cut])
		over -= cut
		w.out.Truncated = true
	}
}

// testHookListRead, when set by a test, is told after each batch how many
// entries the walk holds: listed, still to list, and kept from the
// directory being read.
var testHookListRead func(held int)

// joinRel is rel/name, or name at the top.
func joinRel(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}
