package workspace

import (
	"context"
	"errors"
	"io/fs"
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
	Type  string // TypeFile, TypeDirectory or TypeSymlink (symlinks are not followed)
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
// the roots or into a cycle.
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
	w := &lister{ctx: ctx, opts: opts, out: &Listing{}, roots: f.roots}
	var stack ignoreStack
	if opts.RespectGitignore {
		stack = w.ancestorIgnores(f.rootOf(p), p)
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
}

// ancestorIgnores loads the .gitignore files from root down to dir. Listed
// paths are relative to dir, so each ancestor's anchored rules are
// re-anchored at dir (see reanchor).
func (w *lister) ancestorIgnores(root, dir string) ignoreStack {
	var stack ignoreStack
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return nil
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
		ig, err := loadIgnoreFile(filepath.Join(cur, ".gitignore"), "")
		if err != nil {
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
	return stack
}

// reanchor rewrites an ancestor's rules so they match paths relative to a
// descendant: anchored rules must start with the descendant's prefix, which
// is consumed; rules that cannot match below it are dropped.
func reanchor(ig *ignoreFile, prefix string) *ignoreFile {
	pre := strings.Split(prefix, "/")
	out := &ignoreFile{}
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
		e := Entry{Path: full, Type: TypeFile, Size: de.size, MTime: de.mtime}
		switch {
		case de.typ&fs.ModeSymlink != 0:
			e.Type = TypeSymlink
		case isDir:
			e.Type = TypeDirectory
		}
		w.out.Entries = append(w.out.Entries, e)
		if isDir && depth < w.opts.Depth {
			childRel := joinRel(rel, de.name)
			sub := stack
			if w.opts.RespectGitignore {
				if ig, err := loadIgnoreFile(filepath.Join(full, ".gitignore"), childRel); err == nil {
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
