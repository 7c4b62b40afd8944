package workspace

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ListOptions configures ListDirectory.
type ListOptions struct {
	Depth            int  // levels to descend; 0 means 1 (direct children only)
	IncludeHidden    bool // list names starting with "."
	RespectGitignore bool // skip what .gitignore files (and .git itself) exclude
	Limit            int  // maximum entries; 0 means no limit
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
	Entries   []Entry // depth-first, each directory's entries sorted by name
	Truncated bool    // the limit was reached before the walk finished
}

// errLimit stops the walk once the limit is reached.
var errLimit = errors.New("listing limit reached")

// ListDirectory lists path up to opts.Depth levels deep. Symlinks are listed
// as such and never descended into, so a link cannot lead the walk out of
// the roots or into a cycle. The walk stops when ctx is done, between
// entries as well as between directories.
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
	if err := w.walk(p, "", 1, stack); err != nil && !errors.Is(err, errLimit) {
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

func (w *lister) walk(dir, rel string, depth int, stack ignoreStack) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	d, ents, err := w.roots.readDir(dir)
	if err != nil {
		if d != nil {
			d.Close()
		}
		if rel == "" {
			return err
		}
		return nil // an unreadable subdirectory is listed but not entered
	}
	// The entries this directory contributes, before any descent: no more
	// than the limit leaves room for.
	kept := ents[:0]
	for _, e := range ents {
		if w.opts.RespectGitignore {
			// Matching is the walk's costly part: stop at once when asked.
			if err := w.ctx.Err(); err != nil {
				d.Close()
				return err
			}
		}
		if w.opts.Limit > 0 && len(w.out.Entries)+len(kept) > w.opts.Limit {
			break // one past the room, so the limit is still seen below
		}
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
	statEntries(d, kept)
	d.Close()
	prefix := dir + string(filepath.Separator)
	if os.IsPathSeparator(dir[len(dir)-1]) { // a volume's root: "/", `C:\`
		prefix = dir
	}
	for _, de := range kept {
		if w.opts.Limit > 0 && len(w.out.Entries) >= w.opts.Limit {
			w.out.Truncated = true
			return errLimit
		}
		isDir := de.typ.IsDir()
		full := prefix + de.name // dir is clean and de.name a plain name: filepath.Join's result
		e := Entry{Path: full, Type: typeOf(de.typ), Size: de.size, MTime: de.mtime}
		w.out.Entries = append(w.out.Entries, e)
		if isDir && depth < w.opts.Depth {
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

// joinRel is rel/name, or name at the top.
func joinRel(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}
