package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Roots is the set of directories the agent may touch. It is immutable and
// safe for concurrent use.
type Roots struct {
	dirs []string   // cleaned, symlink-free, absolute
	fds  []*os.File // dirs[i] held open: every system call is made beneath it (beneath.go)
}

// NewRoots resolves dirs (cleaning them and following symlinks) and checks
// that each is an existing directory. Resolving the roots up front is what
// makes containment a string-prefix check later: a root reached through a
// symlink is stored as its target, and every candidate path is resolved the
// same way before it is compared.
func NewRoots(dirs []string) (*Roots, error) {
	if len(dirs) == 0 {
		return nil, errors.New("no workspace roots given; pass at least one directory")
	}
	r := &Roots{}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("workspace root %s: %w", d, err)
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, fmt.Errorf("workspace root %s cannot be resolved: %w; pass an existing directory", d, err)
		}
		fi, err := os.Stat(real)
		if err != nil {
			return nil, fmt.Errorf("workspace root %s: %w", d, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("workspace root %s is not a directory; pass a directory", d)
		}
		fd, err := openRootDir(real)
		if err != nil {
			return nil, fmt.Errorf("workspace root %s cannot be opened: %w; pass a directory you can read", d, err)
		}
		r.dirs = append(r.dirs, real)
		r.fds = append(r.fds, fd)
	}
	return r, nil
}

// List returns the resolved roots, first root first.
func (r *Roots) List() []string {
	return append([]string(nil), r.dirs...)
}

// First returns the root that relative paths are resolved against.
func (r *Roots) First() string { return r.dirs[0] }

// Resolve turns path (absolute, or relative to the first root) into a clean,
// symlink-free absolute path inside some root. The longest existing prefix
// has its symlinks resolved, including dangling ones, whose targets are
// followed as far as they exist, and the non-existent rest is appended; so a
// not-yet-created file under a symlink pointing outside is rejected too.
func (r *Roots) Resolve(path string) (string, error) {
	p, err := r.resolve(path, true)
	if err != nil {
		return "", err
	}
	return p, nil
}

// resolveNoFollow resolves everything but the last element, so operations
// that act on a name (delete, move, lstat) affect a symlink itself rather
// than its target.
func (r *Roots) resolveNoFollow(path string) (string, error) {
	return r.resolve(path, false)
}

func (r *Roots) resolve(path string, followLast bool) (string, error) {
	if strings.IndexByte(path, 0) >= 0 {
		return "", &InvalidPathError{Path: path, Reason: "it contains a NUL byte, which no file name can"}
	}
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(r.dirs[0], abs)
	}
	abs = filepath.Clean(abs)
	var resolved string
	var err error
	if followLast || abs == "/" {
		resolved, err = resolveSymlinks(abs)
	} else {
		var dir string
		dir, err = resolveSymlinks(filepath.Dir(abs))
		resolved = filepath.Join(dir, filepath.Base(abs))
	}
	if err != nil {
		return "", faultError("resolve", path, err, false)
	}
	if !r.contains(resolved) {
		return "", &OutsideRootsError{Path: path, Roots: r.List()}
	}
	return resolved, nil
}

// isRoot reports whether p (already resolved) is one of the roots.
func (r *Roots) isRoot(p string) bool {
	for _, d := range r.dirs {
		if p == d {
			return true
		}
	}
	return false
}

func (r *Roots) contains(p string) bool {
	for _, d := range r.dirs {
		if p == d || d == "/" || strings.HasPrefix(p, d+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// maxSymlinkHops matches Linux's MAXSYMLINKS, so we give up where the kernel would.
const maxSymlinkHops = 40

// resolveSymlinks walks the clean absolute path p component by component,
// replacing each symlink by its target, and stops at the first component that
// does not exist, appending the rest verbatim. filepath.EvalSymlinks cannot be
// used alone because it fails on dangling symlinks, which are exactly the
// ones that could smuggle a later create outside the roots.
func resolveSymlinks(p string) (string, error) {
	rest := splitPath(p)
	resolved := "/"
	hops := 0
	for len(rest) > 0 {
		name := rest[0]
		rest = rest[1:]
		next := filepath.Join(resolved, name)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return filepath.Join(append([]string{next}, rest...)...), nil
			}
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		hops++
		if hops > maxSymlinkHops {
			return "", fmt.Errorf("at %s: %w", next, syscall.ELOOP)
		}
		target, err := os.Readlink(next)
		if errors.Is(err, syscall.EINVAL) {
			// No longer a symlink: it changed since the Lstat; look again.
			rest = append([]string{name}, rest...)
			continue
		}
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			// resolved is symlink-free, so lexical ".." in the target is exact.
			target = filepath.Join(resolved, target)
		}
		rest = append(splitPath(filepath.Clean(target)), rest...)
		resolved = "/"
	}
	return resolved, nil
}

func splitPath(p string) []string {
	var parts []string
	for _, s := range strings.Split(p, string(filepath.Separator)) {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return parts
}
