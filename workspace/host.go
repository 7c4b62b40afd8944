package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
)

// TextFileHost is an editor that reads and writes text files itself, as an
// ACP client offering fs/read_text_file and fs/write_text_file does. Reads
// through it see the editor's unsaved buffers; writes land in them, in the
// editor's undo history and in its review of the agent's changes. Either
// function may be nil: that side goes to the disk.
type TextFileHost struct {
	// Read returns the whole text of the file at the absolute path.
	Read func(ctx context.Context, path string) (string, error)
	// Write replaces the file's text, creating the file if needed.
	Write func(ctx context.Context, path, content string) error
	// Logger, when set, hears of writes refused before the editor was
	// asked and of writes the disk does not show after.
	Logger *slog.Logger
}

type hostBox struct{ h *TextFileHost }

// SetTextFileHost sends text reads and writes to the editor (nil: back to
// the disk and the overlay). Containment is checked here first: the host
// sees only resolved paths inside the roots.
func (f *FS) SetTextFileHost(h *TextFileHost) {
	f.host.Store(&hostBox{h: h})
}

func (f *FS) textHost() *TextFileHost {
	if b := f.host.Load(); b != nil {
		return b.h
	}
	return nil
}

// HostError is a failure the editor reported for a read or write it was
// asked to do.
type HostError struct {
	Op   string // "read" or "write"
	Path string
	Err  error
}

func (e *HostError) Error() string {
	return fmt.Sprintf("the editor could not %s %s: %v", e.Op, e.Path, e.Err)
}

func (e *HostError) Unwrap() error { return e.Err }

// Kind is the error's kind on the wire.
func (e *HostError) Kind() string { return "editor_failed" }

// hostRead reads through the host; ok is false when it does not read.
func (f *FS) hostRead(ctx context.Context, p, display string) (text string, ok bool, err error) {
	h := f.textHost()
	if h == nil || h.Read == nil {
		return "", false, nil
	}
	// The editor reads by path: a FIFO there could hang it, a device never
	// end. Only a regular file (or none, for a buffer not yet saved) is
	// asked for.
	if fi, err := f.roots.stat(p); err == nil {
		switch {
		case fi.IsDir():
			return "", true, &IsDirectoryError{Path: display}
		case !fi.Mode().IsRegular():
			return "", true, &SpecialFileError{Path: display, Type: typeOf(fi.Mode())}
		}
	}
	text, err = h.Read(ctx, p)
	if err != nil {
		if _, serr := f.roots.stat(p); errors.Is(serr, fs.ErrNotExist) {
			return "", true, pathError(serr, display)
		}
		return "", true, &HostError{Op: "read", Path: display, Err: err}
	}
	return text, true, nil
}

// hostWrite writes through the host; ok is false when it does not write.
// The caller holds the path's lock.
func (f *FS) hostWrite(ctx context.Context, p, display, content, expectedVersion string) (res *WriteResult, ok bool, err error) {
	h := f.textHost()
	if h == nil || h.Write == nil {
		return nil, false, nil
	}
	fi, statErr := f.roots.stat(p)
	exists := statErr == nil
	if exists && fi.IsDir() {
		return nil, true, &IsDirectoryError{Path: display}
	}
	if expectedVersion != "" {
		current, _, err := f.readText(ctx, p, display)
		actual := ""
		if err == nil {
			actual = versionOfString(current)
		}
		if actual != expectedVersion {
			return nil, true, &StaleVersionError{Path: display, Expected: expectedVersion, Actual: actual}
		}
	}
	// The editor writes by path: what is there now must be one regular
	// file of the workspace (host_target.go).
	before, err := f.roots.checkHostTarget(p, display)
	if err != nil {
		h.log("refused a write through the editor", display, err)
		return nil, true, err
	}
	if exists {
		f.agent.recordReplace(p)
	} else {
		f.agent.record(p)
		// Editors create the file, not always its directories.
		if dir := filepath.Dir(p); !f.roots.dirExists(dir) {
			f.agent.record(firstMissing(dir))
			if err := f.roots.mkdirAll(dir, 0o755); err != nil {
				return nil, true, faultError("create the parent directories of", display, err, false)
			}
		}
	}
	if before.dirs, err = f.roots.dirsTo(p); err != nil {
		return nil, true, err
	}
	if err := h.Write(ctx, p, content); err != nil {
		return nil, true, &HostError{Op: "write", Path: display, Err: err}
	}
	if err := f.verifyHostWrite(ctx, h, p, display, content, before); err != nil {
		h.log("a write through the editor is not on disk as asked", display, err)
		return nil, true, err
	}
	return &WriteResult{Version: versionOfString(content), Created: !exists}, true, nil
}

func (h *TextFileHost) log(msg, path string, err error) {
	if h.Logger != nil {
		h.Logger.Warn(msg, "component", "workspace", "path", path, "err", err)
	}
}

func (r *Roots) dirExists(dir string) bool {
	fi, err := r.stat(dir)
	return err == nil && fi.IsDir()
}
