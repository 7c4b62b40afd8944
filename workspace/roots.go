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
	dirs    []string     // cleaned, symlink-free, absolute
	handles []rootHandle // dirs[i] held open: every system call is made beneath it (beneath.go)
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
		if err := r.add(d); err != nil {
			r.Close()
			return nil, err
		}
	}
	return r, nil
}

// add resolves the root d, checks that it is a directory and holds it open.
func (r *Roots) add(d string) error {
	abs, err := filepath.Abs(d)
	if err != nil {
		return fmt.Errorf("workspace root %s: %w", d, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err == nil {
		// Spelled as Resolve will spell the paths under it (on Windows:
		// junctions followed, names in their on-disk case).
		real, err = resolveSymlinks(real)
	}
	if err != nil {
		return fmt.Errorf("workspace root %s cannot be resolved: %w; pass an existing directory", d, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return fmt.Errorf("workspace root %s: %w", d, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("workspace root %s is not a directory; pass a directory", d)
	}
	h, err := openRootDir(real)
	if err != nil {
		return fmt.Errorf("workspace root %s cannot be opened: %w; pass a directory you can read", d, err)
	}
	r.dirs = append(r.dirs, real)
	r.handles = append(r.handles, h)
	return nil
}

// Close lets go of the roots' handles; the Roots must not be used after.
// Windows refuses to rename or delete a directory held open, so whoever
// ends a session closes its roots; elsewhere it only returns the
// descriptors sooner than the garbage collector would.
func (r *Roots) Close() error {
	var first error
	for _, h := range r.handles {
		if err := h.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
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
	switch {
	case filepath.IsAbs(abs):
	case abs != "" && os.IsPathSeparator(abs[0]):
		// Rooted but with no volume (Windows: "/etc/passwd"): on the first
		// root's volume, as Windows reads it, not beneath the root.
		abs = filepath.VolumeName(r.dirs[0]) + abs
	default:
		abs = filepath.Join(r.dirs[0], abs)
	}
	abs = filepath.Clean(abs)
	var resolved string
	var err error
	if followLast || filepath.Dir(abs) == abs {
		resolved, err = resolveSymlinks(abs)
	} else {
		var dir string
		dir, err = resolveSymlinks(filepath.Dir(abs))
		resolved = canonicalName(filepath.Join(dir, filepath.Base(abs)))
	}
	if err != nil {
		return "", faultError("resolve", path, err, false)
	}
	_, rel, err := r.locate(resolved)
	if err != nil {
		return "", &OutsideRootsError{Path: path, Roots: r.List()}
	}
	// Only Windows has local names that are not files: devices (NUL, CON,
	// COM1, ...) and streams ("name:stream").
	if !filepath.IsLocal(rel) {
		return "", &InvalidPathError{Path: path, Reason: "it names a device (NUL, CON, COM1, ...) or a stream (a colon), which a workspace path may not"}
	}
	return resolved, nil
}

// isRoot reports whether p (already resolved) is one of the roots.
func (r *Roots) isRoot(p string) bool {
	for _, d := range r.dirs {
		if pathEqual(p, d) {
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
//
// On Windows the walk starts at the path's volume (`C:\`, `\\host\share\`),
// follows junctions as well as symlinks, and spells each existing name as
// the directory holds it (canonicalName), since Windows finds a name in any
// case but the roots are compared as strings.
func resolveSymlinks(p string) (string, error) {
	resolved, rest := volumeRoot(p), splitPath(p[len(filepath.VolumeName(p)):])
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
		target, isLink, err := linkTarget(next, fi)
		if !isLink {
			resolved = canonicalName(next)
			continue
		}
		hops++
		if hops > maxSymlinkHops {
			return "", fmt.Errorf("at %s: %w", next, syscall.ELOOP)
		}
		if errors.Is(err, syscall.EINVAL) {
			// No longer a symlink: it changed since the Lstat; look again.
			rest = append([]string{name}, rest...)
			continue
		}
		if err != nil {
			return "", err
		}
		switch {
		case filepath.IsAbs(target):
		case target != "" && os.IsPathSeparator(target[0]):
			// Rooted but with no volume (Windows): the link's own volume.
			target = filepath.VolumeName(resolved) + target
		default:
			// resolved is symlink-free, so lexical ".." in the target is exact.
			target = filepath.Join(resolved, target)
		}
		target = filepath.Clean(target)
		resolved, rest = volumeRoot(target), append(splitPath(target[len(filepath.VolumeName(target)):]), rest...)
	}
	return resolved, nil
}

// volumeRoot is the root of the absolute path p's volume: "/" on Unix;
// `C:\` (the drive letter upper-cased, as filepath.EvalSymlinks gives it) or
// `\\host\share\` on Windows.
func volumeRoot(p string) string {
	v := filepath.VolumeName(p)
	if len(v) == 2 && v[1] == ':' {
		v = strings.ToUpper(v)
	}
	return v + string(filepath.Separator)
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
