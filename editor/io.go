package editor

import (
	"context"
	"errors"
	"fmt"

	"github.com/oh-bridge/oh-bridge/pytext"
	"github.com/oh-bridge/oh-bridge/workspace"
)

// readText reads the current text (raw bytes as a string) and its version.
func (e *Editor) readText(ctx context.Context, t target) (string, string, error) {
	f, err := e.fs.ReadTextFile(ctx, t.resolved, 0, 0)
	if err != nil {
		return "", "", e.readError(t, err)
	}
	return f.Content, f.Version, nil
}

// readError turns workspace read failures into OHEditor's messages
// (validate_file's FileValidationError, or "Ran into ... while trying to
// read"). Containment errors pass through unchanged.
func (e *Editor) readError(t target, err error) error {
	p := t.display
	var notText *workspace.NotTextError
	var notFound *workspace.NotFoundError
	var isDir *workspace.IsDirectoryError
	var outside *workspace.OutsideRootsError
	switch {
	case errors.As(err, &outside), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.As(err, &notText):
		switch notText.Reason {
		case workspace.NotTextTooLarge:
			return e.tooLarge(t, notText.Size, err)
		case workspace.NotTextInvalidUTF8:
			return &ToolError{Kind: KindInvalidUTF8, Path: p, Err: err, Message: fmt.Sprintf(
				"File validation failed for %s: File is not valid UTF-8 (the first invalid byte is at offset %d) and this tool only reads and edits UTF-8 text. Convert the file to UTF-8 first, e.g. with iconv.", p, notText.Offset)}
		default:
			return &ToolError{Kind: KindBinary, Path: p, Err: err, Message: fmt.Sprintf(
				"File validation failed for %s: File appears to be binary and this file type cannot be read or edited by this tool.", p)}
		}
	case errors.As(err, &notFound):
		return &ToolError{Kind: KindNotFound, Path: p, Err: err, Message: fmt.Sprintf(
			"Invalid `path` parameter: %s. The path %s does not exist. Please provide a valid path.", p, p)}
	case errors.As(err, &isDir):
		return &ToolError{Kind: KindIsDirectory, Path: p, Err: err, Message: fmt.Sprintf(
			"Invalid `path` parameter: %s. The path %s is a directory and only the `view` command can be used on directories.", p, p)}
	}
	return &ToolError{Kind: faultKind(err), Path: p, Err: err, Message: fmt.Sprintf("Ran into %s while trying to read %s", pyError(err, p, ""), p)}
}

// pyError is what Python's {e} says of err (pyOSError), or the bridge's
// own words when err carries no errno.
func pyError(err error, name, renamedTo string) string {
	if s, ok := pyOSError(err, name, renamedTo); ok {
		return s
	}
	return err.Error()
}

func (e *Editor) tooLarge(t target, size int64, err error) *ToolError {
	return &ToolError{Kind: KindTooLarge, Path: t.display, Err: err, Message: fmt.Sprintf(
		"File validation failed for %s: File is too large (%sMB). Maximum allowed size is %dMB.",
		t.display, pyMB(size), e.fs.MaxFileSize()/1024/1024)}
}

// write stores newRaw, which must still replace the version the caller read
// (expectVersion; "" for create), so a human's save in between is not lost.
func (e *Editor) write(ctx context.Context, t target, newRaw, expectVersion string) (string, error) {
	res, err := e.fs.WriteTextFile(ctx, t.resolved, newRaw, expectVersion, !e.opts.RequireAbsolutePaths)
	if err == nil {
		return res.Version, nil
	}
	var stale *workspace.StaleVersionError
	var notFound *workspace.NotFoundError
	var outside *workspace.OutsideRootsError
	var rejected *workspace.BufferEditRejectedError
	switch {
	case errors.As(err, &stale):
		s := *stale
		s.Path = t.display
		return "", &s
	case errors.As(err, &outside), errors.As(err, &rejected),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "", err
	case errors.As(err, &notFound):
		// What Python says when the directory is missing: OHEditor opens
		// the path itself, FileEditor first a temporary file beside it.
		missing := t.display
		if e.opts.Dialect == FileEditor {
			missing = pyTempName(t.display)
		}
		return "", &ToolError{Kind: KindIO, Path: t.display, Err: err, Message: fmt.Sprintf(
			"Ran into [Errno 2] No such file or directory: %s while trying to write to %s", pytext.Repr(missing), t.display)}
	}
	// A fault keeps its kind (no_space, read_only_file_system, ...) and its
	// text is Python's: OHEditor opens the path itself, FileEditor first a
	// temporary file beside it, which it then renames over the path.
	opened, renamedTo := t.display, ""
	if e.opts.Dialect == FileEditor {
		opened, renamedTo = pyTempName(t.display), t.display
	}
	return "", &ToolError{Kind: faultKind(err), Path: t.display, Err: err, Message: fmt.Sprintf(
		"Ran into %s while trying to write to %s", pyError(err, opened, renamedTo), t.display)}
}
