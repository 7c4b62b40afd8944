package workspace

import (
	"fmt"
	"strings"
)

// Each error type below has a Kind method returning a stable snake_case
// string; handlers put it in error.data.kind, so the strings never change.

// OutsideRootsError reports a path that resolves outside every workspace root.
type OutsideRootsError struct {
	Path  string   // the path as the caller gave it
	Roots []string // the resolved roots
	// Swapped reports that the path resolved inside when checked but led
	// out at the system call: a symlink was swapped in on the way.
	Swapped bool
}

func (e *OutsideRootsError) Error() string {
	if e.Swapped {
		return fmt.Sprintf("path %s is outside the workspace roots [%s]: a symlink on the way now leads out of them (it changed while the path was used); nothing was done there, use a path inside one of them", e.Path, strings.Join(e.Roots, " "))
	}
	return fmt.Sprintf("path %s is outside the workspace roots [%s]; use a path inside one of them", e.Path, strings.Join(e.Roots, " "))
}

// Kind returns "path_outside_workspace".
func (e *OutsideRootsError) Kind() string { return "path_outside_workspace" }

// Data returns the path and the roots, for error.data.
func (e *OutsideRootsError) Data() map[string]any {
	return map[string]any{"path": e.Path, "roots": e.Roots}
}

// NotFoundError reports a path that does not exist.
type NotFoundError struct {
	Path string
	// Hint, when set, tells the caller how to proceed (e.g. createParents).
	Hint string
}

func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("%s does not exist", e.Path)
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

// Kind returns "not_found".
func (e *NotFoundError) Kind() string { return "not_found" }

// IsDirectoryError reports a file operation aimed at a directory.
type IsDirectoryError struct{ Path string }

func (e *IsDirectoryError) Error() string {
	return fmt.Sprintf("%s is a directory, not a file; list it instead", e.Path)
}

// Kind returns "is_directory".
func (e *IsDirectoryError) Kind() string { return "is_directory" }

// NotDirectoryError reports a directory operation aimed at something else.
type NotDirectoryError struct{ Path string }

func (e *NotDirectoryError) Error() string {
	return fmt.Sprintf("%s is not a directory", e.Path)
}

// Kind returns "not_directory".
func (e *NotDirectoryError) Kind() string { return "not_directory" }

// SpecialFileError reports a FIFO, socket or device where a file is
// read or written. The bridge reads and writes regular files only: opening
// a FIFO can wait for ever for a writer, and a device such as /dev/urandom
// never ends.
type SpecialFileError struct {
	Path string
	Type string // what it is instead: TypeFIFO, TypeSocket, TypeCharDevice, TypeBlockDevice or TypeOther
}

func (e *SpecialFileError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file; only regular files are read or written here: use a terminal command for it (reading it may wait for ever), or delete it to write a file in its place", e.Path, typeWords[e.Type])
}

// typeWords names each non-regular type in a message.
var typeWords = map[string]string{
	TypeFIFO:        "a FIFO (named pipe)",
	TypeSocket:      "a Unix domain socket",
	TypeCharDevice:  "a character device",
	TypeBlockDevice: "a block device",
	TypeOther:       "neither a file nor a directory (an irregular file)",
}

// Kind returns "not_regular_file".
func (e *SpecialFileError) Kind() string { return "not_regular_file" }

// Data returns the path and its type, for error.data.
func (e *SpecialFileError) Data() map[string]any {
	return map[string]any{"path": e.Path, "type": e.Type}
}

// Reasons a file cannot be served as text; they double as NotTextError kinds.
const (
	NotTextBinary      = "binary"
	NotTextTooLarge    = "too_large"
	NotTextInvalidUTF8 = "invalid_utf8"
)

// NotTextError reports a file that exists but cannot be handled as UTF-8
// text. Content is never mangled into text: the caller gets this instead.
type NotTextError struct {
	Path   string
	Reason string // NotTextBinary, NotTextTooLarge or NotTextInvalidUTF8
	Size   int64  // file size in bytes (too_large)
	Limit  int64  // the size cap (too_large)
	Offset int64  // byte offset of the first invalid byte (invalid_utf8)
}

func (e *NotTextError) Error() string {
	switch e.Reason {
	case NotTextTooLarge:
		return fmt.Sprintf("%s is too large (%d bytes; the limit is %d bytes); read it with a shell command such as head or grep", e.Path, e.Size, e.Limit)
	case NotTextInvalidUTF8:
		return fmt.Sprintf("%s is not valid UTF-8 (first invalid byte at offset %d); only UTF-8 text can be read or edited, convert it first (e.g. iconv)", e.Path, e.Offset)
	default:
		return fmt.Sprintf("%s appears to be binary (it contains NUL bytes); only text files can be read or edited", e.Path)
	}
}

// Kind returns the Reason: "binary", "too_large" or "invalid_utf8".
func (e *NotTextError) Kind() string { return e.Reason }

// Data returns the path and, by reason, the size and the limit (too_large)
// or the offset of the first invalid byte (invalid_utf8), for error.data.
func (e *NotTextError) Data() map[string]any {
	d := map[string]any{"path": e.Path}
	switch e.Reason {
	case NotTextTooLarge:
		d["size"], d["limit"] = e.Size, e.Limit
	case NotTextInvalidUTF8:
		d["offset"] = e.Offset
	}
	return d
}

// StaleVersionError reports a write whose expected version no longer matches
// the file: someone (usually a human in the editor) changed it in between.
type StaleVersionError struct {
	Path     string
	Expected string
	Actual   string // "" when the file no longer exists
}

func (e *StaleVersionError) Error() string {
	actual := e.Actual
	if actual == "" {
		actual = "none, the file does not exist"
	}
	return fmt.Sprintf("%s changed since version %s was read (it is now %s), probably edited by a human meanwhile; nothing was written, re-read the file and redo the change", e.Path, e.Expected, actual)
}

// Kind returns "stale_version".
func (e *StaleVersionError) Kind() string { return "stale_version" }

// Data returns the path and both versions (actualVersion is null when the
// file no longer exists), for error.data.
func (e *StaleVersionError) Data() map[string]any {
	var actual any
	if e.Actual != "" {
		actual = e.Actual
	}
	return map[string]any{"path": e.Path, "expectedVersion": e.Expected, "actualVersion": actual}
}

// ExistsError reports a destination that already exists.
type ExistsError struct{ Path string }

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s already exists; pass overwrite to replace it", e.Path)
}

// Kind returns "exists".
func (e *ExistsError) Kind() string { return "exists" }

// DirectoryNotEmptyError reports a non-recursive delete of a non-empty directory.
type DirectoryNotEmptyError struct{ Path string }

func (e *DirectoryNotEmptyError) Error() string {
	return fmt.Sprintf("directory %s is not empty; pass recursive to delete it with its contents", e.Path)
}

// Kind returns "directory_not_empty".
func (e *DirectoryNotEmptyError) Kind() string { return "directory_not_empty" }

// RootOperationError reports an attempt to delete or move a workspace root.
type RootOperationError struct {
	Path string
	Op   string // "delete" or "move"
}

func (e *RootOperationError) Error() string {
	return fmt.Sprintf("cannot %s %s: it is a workspace root; operate on paths inside it", e.Op, e.Path)
}

// Kind returns "workspace_root".
func (e *RootOperationError) Kind() string { return "workspace_root" }

// BufferEditRejectedError reports that the editor declined to apply an edit
// to an open, possibly unsaved document.
type BufferEditRejectedError struct {
	Path   string
	Reason string // the editor's reason, if it gave one
}

func (e *BufferEditRejectedError) Error() string {
	msg := fmt.Sprintf("the editor did not apply the edit to the open document %s", e.Path)
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg + "; nothing was written, re-read the file and retry"
}

// Kind returns "buffer_edit_rejected".
func (e *BufferEditRejectedError) Kind() string { return "buffer_edit_rejected" }

// InvalidPathError is a path no file system accepts.
type InvalidPathError struct {
	Path   string
	Reason string
}

func (e *InvalidPathError) Error() string {
	return fmt.Sprintf("path %q is not valid: %s", e.Path, e.Reason)
}

// Kind is the error's kind on the wire.
func (e *InvalidPathError) Kind() string { return "invalid_path" }
