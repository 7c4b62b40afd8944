package workspace

import (
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
// the root after the editor says it wrote, reaching it by name without
// following any symlink and allowing only the editor's own normalisations
// of the text (savedAs), whatever inode the editor's save left there
// (docs/safety.md, "Writes done by the editor").
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
	symlnk bool // a symlink at the path, or on the way to it (readTarget)
	// linkAt is where the symlink is (the path, or a directory on the
	// way) and linkTo what it holds, when readTarget found one.
	linkAt, linkTo string
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
// file beneath the root does not show, saying what is there instead.
type UnverifiedWriteError struct {
	Path  string
	Found string // what is there: one of the Found* values
	Why   string // the finding in words, following "but"
	Next  string // what the agent can do about it
	// LinkTo is where a symlink found leads (Found is FoundSymlink), and
	// Links the link count (FoundHardLinks).
	LinkTo string
	Links  uint64
}

// What an unconfirmed write found at the path (error.data's "found").
const (
	FoundSymlink    = "symlink"     // a symlink at the path or on the way to it
	FoundHardLinks  = "hard_links"  // a file with more than one link
	FoundNotRegular = "not_regular" // a directory, FIFO, socket or device
	FoundMissing    = "missing"     // no file
	FoundOtherText  = "other_text"  // a file with other text than the edit's
	FoundUnreadable = "unreadable"  // it could not be read back
)

func (e *UnverifiedWriteError) Error() string {
	return fmt.Sprintf("an unconfirmed write: the editor said it wrote %s, but %s. %s", e.Path, e.Why, e.Next)
}

// Kind returns "write_unverified".
func (e *UnverifiedWriteError) Kind() string { return "write_unverified" }

// Data returns the path and what was found there, for error.data.
func (e *UnverifiedWriteError) Data() map[string]any {
	d := map[string]any{"path": e.Path, "found": e.Found}
	if e.LinkTo != "" {
		d["link_target"] = e.LinkTo
	}
	if e.Links > 1 {
		d["links"] = e.Links
	}
	return d
}

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
// reached by its name alone (readTarget: no symlink followed on the way or
// at the end), is a regular file with one link whose text is content as
// the editor saves it (savedAs). Its inode may be new: an editor that
// saves by writing a temporary file and renaming it over p (Neovim,
// Emacs) replaces the file checked before the write, and what p holds is
// all that counts. A symlink there, more than one link or no regular file
// is never confirmed. A missing file or other text is, from an editor that
// reads (h.Read), when the change is in its unsaved buffer, as Zed can
// hold it: the editor reads back content while p on disk is still the file
// checked before the write (the same file, or still none) and no directory
// on the way had an entry renamed, created or removed from the check until
// after the read-back. An editor that reads by path is led by a swapped
// link on its read as on its write, so its read-back alone proves nothing;
// a swap renames, which changes the directory's ctime. Anything else is an
// *UnverifiedWriteError saying what p is instead.
func (f *FS) verifyHostWrite(ctx context.Context, h *TextFileHost, p, display, content string, before hostTarget) error {
	// CRLF doubles the text at most, and a final line end may be added.
	after, data, err := f.roots.readTarget(p, int64(len(content))*2+3)
	if err != nil {
		return &UnverifiedWriteError{Path: display, Found: FoundUnreadable,
			Why:  fmt.Sprintf("reading %s back failed (%v)", display, err),
			Next: fmt.Sprintf("Read %s, then redo the change if it is missing", display)}
	}
	if e := unconfirmed(after, p, display); e != nil {
		return e
	}
	var e *UnverifiedWriteError
	switch {
	case !after.exists():
		e = &UnverifiedWriteError{Path: display, Found: FoundMissing,
			Why:  fmt.Sprintf("%s does not exist", display),
			Next: fmt.Sprintf("The write may have gone to another file; check the directory of %s, then redo the change", display)}
	case savedAs(string(data), content):
		return nil
	default:
		e = &UnverifiedWriteError{Path: display, Found: FoundOtherText,
			Why:  fmt.Sprintf("%s holds other text than the edit's", display),
			Next: fmt.Sprintf("The editor may have saved the text changed, a program may have written the file since, or the write went to another file through a link swapped in and out again; read %s, then redo the change if it is missing", display)}
	}
	if h.Read == nil {
		return e
	}
	if !sameFile(before, after) {
		e.Why += ", and it is not the file checked before the write (it was replaced), so the editor's unsaved buffer cannot stand for it"
		return e
	}
	held, err := h.Read(ctx, p)
	if err != nil {
		e.Why += fmt.Sprintf(", and the editor could not read it back (%v)", err)
		return e
	}
	if !savedAs(held, content) {
		e.Why += ", and the editor reads back other text too"
		return e
	}
	again, _ := f.roots.inspectTarget(p)
	if !sameFile(before, again) || !f.roots.dirsUnchanged(p, before.dirs) {
		e.Why += ", and its directory changed while the editor wrote and read it back"
		return e
	}
	// The change is in the editor's unsaved buffer of the file checked.
	return nil
}

// unconfirmed is the report of what at p no write can be confirmed in,
// whatever it holds: a symlink, a file with other names, or no regular
// file. It is nil for a regular file with one link, or nothing.
func unconfirmed(t hostTarget, p, display string) *UnverifiedWriteError {
	switch {
	case !t.exists():
		return nil
	case t.symlnk:
		if t.linkAt == "" { // read by lstat alone (Windows)
			t.linkAt = p
			t.linkTo, _ = os.Readlink(p)
		}
		at, to := t.linkAt, t.linkTo
		if at == p {
			at = display
		}
		if to == "" {
			return &UnverifiedWriteError{Path: display, Found: FoundSymlink,
				Why:  fmt.Sprintf("%s is now a symlink: the editor's write may have gone where it leads", at),
				Next: fmt.Sprintf("Check where %s leads, put back what the link replaced, then redo the change", at)}
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(t.linkAt), to)
		}
		return &UnverifiedWriteError{Path: display, Found: FoundSymlink, LinkTo: to,
			Why:  fmt.Sprintf("%s is now a symlink to %s: the editor's write may have gone there", at, to),
			Next: fmt.Sprintf("Check %s, put back what the link replaced, then redo the change", to)}
	case t.fi.IsDir():
		return &UnverifiedWriteError{Path: display, Found: FoundNotRegular,
			Why:  fmt.Sprintf("%s is now a directory", display),
			Next: fmt.Sprintf("The write may have gone to another file; check %s, then redo the change", display)}
	case !t.fi.Mode().IsRegular():
		return &UnverifiedWriteError{Path: display, Found: FoundNotRegular,
			Why:  fmt.Sprintf("%s is now %s, not a regular file", display, typeWords[typeOf(t.fi.Mode())]),
			Next: fmt.Sprintf("The write may have gone to another file; check %s, then redo the change", display)}
	case t.links > 1:
		base := filepath.Base(display)
		return &UnverifiedWriteError{Path: display, Found: FoundHardLinks, Links: t.links,
			Why: fmt.Sprintf("%s has %d hard links: a name for it was made elsewhere while the editor wrote it, perhaps outside the workspace, and a write in place changed the file under that name too", display, t.links),
			Next: fmt.Sprintf("Find its other names (find / -xdev -samefile %s), break the link (cp %s %s.copy && mv %s.copy %s), then redo the change",
				display, base, base, base, base)}
	}
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

// savedAs says saved, a file's text after an editor was asked to write
// content, is content as editors save it. Two changes are allowed, and
// nothing else (no other whitespace, no encoding, no BOM):
//
//   - Line ends: every CRLF may be LF, and every LF CRLF, on either side.
//     An editor saves a buffer with the file's own line ends (VS Code's
//     files.eol and a file's detected CRLF, Neovim's fileformat=dos, Zed)
//     or normalises them, so the edit's LF text lands as CRLF, or its
//     CRLF as LF. Only a CR before an LF is ignored: a lone CR counts.
//   - One final line end, added or removed: Neovim writes a final newline
//     after a buffer's last line ('fixeol', 'eol'), so a client that
//     sets its buffer's lines from text ending in a newline saves one
//     more (CodeCompanion.nvim: the file ends "\n\n"); one that joins
//     the buffer's lines without it reads and writes one fewer
//     (avante.nvim), and a text without a final newline gains one.
//
// Neither can carry an edit elsewhere or hide one: the lines are the
// edit's, in its order.
func savedAs(saved, content string) bool {
	if saved == content {
		return true
	}
	s, c := lfOnly(saved), lfOnly(content)
	return s == c || s == c+"\n" || c == s+"\n"
}

// lfOnly is text with each CRLF as LF.
func lfOnly(text string) string {
	return strings.ReplaceAll(text, "\r\n", "\n")
}

// readAtMost reads up to limit bytes of r.
func readAtMost(r io.Reader, limit int64) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r, limit))
}
