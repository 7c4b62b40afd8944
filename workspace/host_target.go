package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// A write delegated to the editor (TextFileHost.Write) is done by the
// editor, by path: the bridge cannot hand it the fd it checked. So the
// bridge checks the target beneath the root just before it asks, refusing
// what a write by path would carry elsewhere, and checks the file beneath
// the root after the editor says it wrote (docs/safety.md, "Writes done by
// the editor").
//
//   - A file with more than one hard link: an editor that writes in place
//     (VS Code's fs.writeFile truncates and writes the inode) changes every
//     name of it, and a link made from the workspace's terminal
//     (`ln ../outside/f f`) is such a name outside the roots.
//   - A symlink where the resolved path was a file: Resolve followed every
//     link, so one there now was swapped in since.
//   - A FIFO, socket or device: no text file.

// hostTarget is what is at a resolved path on disk, taken beneath the root
// without following a final symlink.
type hostTarget struct {
	fi     fs.FileInfo // nil: nothing there
	links  uint64
	symlnk bool
	// dirs are the directories from the root down to the file's, as
	// they were just before the write: a rename in one of them (a swap)
	// changes its ctime.
	dirs []fs.FileInfo
}

func (t hostTarget) exists() bool { return t.fi != nil }

// HardLinkedError refuses a write through the editor to a file that has
// other names: the editor writes by path and may write the file in place,
// changing it under every name, some perhaps outside the workspace.
type HardLinkedError struct {
	Path  string
	Links uint64
}

func (e *HardLinkedError) Error() string {
	base := filepath.Base(e.Path)
	return fmt.Sprintf("a file with %d hard links: writing %s would also change it under its other names, which may be outside the workspace; nothing was written. Break the link first (cp %s %s.copy && mv %s.copy %s), then redo the change",
		e.Links, e.Path, base, base, base, base)
}

// Kind returns "hard_linked".
func (e *HardLinkedError) Kind() string { return "hard_linked" }

// Data returns the path and the link count, for error.data.
func (e *HardLinkedError) Data() map[string]any {
	return map[string]any{"path": e.Path, "links": e.Links}
}

// SwappedSymlinkError refuses a write through the editor to a path that
// is a symlink now though it resolved to a file: the link was put there
// after the path was resolved, and the editor, writing by path, would
// follow it.
type SwappedSymlinkError struct{ Path string }

func (e *SwappedSymlinkError) Error() string {
	return fmt.Sprintf("a symbolic link in place of a file: %s became a symlink after the bridge resolved it (it changed while the path was used); nothing was written, check where it points and redo the change", e.Path)
}

// Kind returns "symlink_swapped".
func (e *SwappedSymlinkError) Kind() string { return "symlink_swapped" }

// UnverifiedWriteError reports a write the editor said it did that the
// file beneath the root does not show: it may have gone to another file,
// through a link swapped in after the bridge checked the path.
type UnverifiedWriteError struct {
	Path string
	Why  string // what the bridge found instead
}

func (e *UnverifiedWriteError) Error() string {
	return fmt.Sprintf("an unconfirmed write: the editor said it wrote %s, but %s. The write may have gone to another file, through a link swapped in after the bridge checked the path; check %s and the files linked to it, then redo the change if it is missing",
		e.Path, e.Why, e.Path)
}

// Kind returns "write_unverified".
func (e *UnverifiedWriteError) Kind() string { return "write_unverified" }

// checkHostTarget inspects p beneath its root before the editor is asked to
// write it, and refuses a target the editor's write could carry elsewhere.
func (r *Roots) checkHostTarget(p, display string) (hostTarget, error) {
	t, err := r.inspectTarget(p)
	if err != nil {
		return t, err
	}
	switch {
	case !t.exists():
	case t.symlnk:
		return t, &SwappedSymlinkError{Path: display}
	case t.fi.IsDir():
		return t, &IsDirectoryError{Path: display}
	case !t.fi.Mode().IsRegular():
		return t, &SpecialFileError{Path: display, Type: typeOf(t.fi.Mode())}
	case t.links > 1:
		return t, &HardLinkedError{Path: display, Links: t.links}
	}
	return t, nil
}

// inspectTarget lstats p beneath its root.
func (r *Roots) inspectTarget(p string) (hostTarget, error) {
	fi, err := r.lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return hostTarget{}, nil
	case err != nil:
		var outside *OutsideRootsError
		if errors.As(err, &outside) {
			return hostTarget{}, err
		}
		return hostTarget{}, faultError("check", p, err, false)
	}
	return hostTarget{fi: fi, links: linkCount(fi), symlnk: fi.Mode()&fs.ModeSymlink != 0}, nil
}

// dirsTo lstats the directories from p's root down to p's parent.
func (r *Roots) dirsTo(p string) ([]fs.FileInfo, error) {
	i, rel, err := r.locate(p)
	if err != nil {
		return nil, err
	}
	d := r.dirs[i]
	var out []fs.FileInfo
	for k, name := range append([]string{""}, splitPath(filepath.Dir(rel))...) {
		if k > 0 {
			if name == "." {
				break
			}
			d = filepath.Join(d, name)
		}
		fi, err := r.lstat(d)
		if errors.Is(err, fs.ErrNotExist) {
			break // made by the write (its parents are made first)
		}
		if err != nil {
			return nil, faultError("check", d, err, false)
		}
		out = append(out, fi)
	}
	return out, nil
}

// dirsUnchanged says the directories down to p are those of before, and
// nothing in them was renamed, created or removed since (their ctimes).
func (r *Roots) dirsUnchanged(p string, before []fs.FileInfo) bool {
	now, err := r.dirsTo(p)
	if err != nil || len(now) != len(before) {
		return false
	}
	for i := range now {
		if !os.SameFile(now[i], before[i]) || changeTime(now[i]) != changeTime(before[i]) {
			return false
		}
	}
	return true
}

// verifyHostWrite checks, after the editor said it wrote content to p, that
// the file beneath the root has it. The disk is the witness first: p,
// taken without following a final symlink, is a regular file with one
// link and holds content (or content with CRLF line ends, for an editor
// that saves the file's own). Where it does not, an editor that reads
// (h.Read) may hold the change in an unsaved buffer, as Zed can: that is
// accepted when the editor reads back content while p on disk is still the
// file checked before the write (the same file, or still none) and no
// directory on the way had an entry renamed, created or removed from the
// check until after the read-back. An editor that reads by path is led by
// a swapped link on its read as on its write, so its read-back alone
// proves nothing; a swap renames, which changes the directory's ctime.
// Anything else is an *UnverifiedWriteError.
func (f *FS) verifyHostWrite(ctx context.Context, h *TextFileHost, p, display, content string, before hostTarget) error {
	after, data, err := f.roots.readTarget(p, int64(len(content))*2+1)
	if err != nil {
		return &UnverifiedWriteError{Path: display, Why: fmt.Sprintf("reading it back failed (%v)", err)}
	}
	why := ""
	switch {
	case !after.exists():
		why = "the file does not exist"
	case after.symlnk:
		why = "it is now a symbolic link"
	case !after.fi.Mode().IsRegular():
		why = "it is no longer a regular file"
	case after.links > 1:
		why = fmt.Sprintf("it now has %d hard links", after.links)
	case sameText(data, content):
		return nil
	default:
		why = "the file holds other text"
	}
	if h.Read == nil {
		return &UnverifiedWriteError{Path: display, Why: why}
	}
	if !sameFile(before, after) {
		return &UnverifiedWriteError{Path: display, Why: why + ", and it is not the file checked before the write"}
	}
	held, err := h.Read(ctx, p)
	if err != nil {
		return &UnverifiedWriteError{Path: display, Why: fmt.Sprintf("%s, and the editor could not read it back (%v)", why, err)}
	}
	if held != content {
		return &UnverifiedWriteError{Path: display, Why: why + ", and the editor reads back other text"}
	}
	again, _ := f.roots.inspectTarget(p)
	if !sameFile(before, again) || !f.roots.dirsUnchanged(p, before.dirs) {
		return &UnverifiedWriteError{Path: display, Why: why + ", and its directory changed while the editor wrote and read it back"}
	}
	// The change is in the editor's unsaved buffer of the file checked.
	return nil
}

// sameFile says before and after are one file on disk, or both absent.
// A regular file with one link counts only while it stays one.
func sameFile(before, after hostTarget) bool {
	if !before.exists() || !after.exists() {
		return !before.exists() && !after.exists()
	}
	return !after.symlnk && after.links <= 1 && after.fi.Mode().IsRegular() && os.SameFile(before.fi, after.fi)
}

// sameText says the file's bytes are content, or content with its line
// ends saved as CRLF.
func sameText(data []byte, content string) bool {
	if string(data) == content {
		return true
	}
	return bytes.Contains(data, []byte("\r\n")) && !strings.Contains(content, "\r\n") &&
		string(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))) == content
}

// readAtMost reads up to limit bytes of r.
func readAtMost(r io.Reader, limit int64) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r, limit))
}
