package session

import (
	"context"

	"github.com/oh-bridge/oh-bridge/editor"
	"github.com/oh-bridge/oh-bridge/workspace"
)

// The session's files: every read, write, edit and open buffer goes through
// these, whichever face asks. Paths are absolute or relative to the first
// root. Calls that change files first let the watcher finish its initial
// walk (AwaitWatch), so the change they make is reported like any later
// one. Results and errors are package workspace's and package editor's
// types: a face renders them and maps their kinds, it does not act on the
// workspace itself.

// Resolve turns a path into the resolved absolute path inside the roots it
// names, or an *workspace.OutsideRootsError.
func (s *Session) Resolve(path string) (string, error) { return s.roots.Resolve(path) }

// ReadTextFile reads a text file, unsaved buffers included, from a 1-based
// line for limit lines (0: to the end).
func (s *Session) ReadTextFile(ctx context.Context, path string, line, limit int) (*workspace.TextFile, error) {
	return s.fs.ReadTextFile(ctx, path, line, limit)
}

// WriteTextFile replaces a file's text atomically; expectedVersion, when
// set, guards against a concurrent change.
func (s *Session) WriteTextFile(ctx context.Context, path, content, expectedVersion string, createParents bool) (*workspace.WriteResult, error) {
	s.AwaitWatch(ctx)
	return s.fs.WriteTextFile(ctx, path, content, expectedVersion, createParents)
}

// ListDirectory lists a directory's entries.
func (s *Session) ListDirectory(ctx context.Context, path string, opts workspace.ListOptions) (*workspace.Listing, error) {
	return s.fs.ListDirectory(ctx, path, opts)
}

// Stat describes a path; a missing one answers Exists false.
func (s *Session) Stat(ctx context.Context, path string) (*workspace.FileInfo, error) {
	return s.fs.Stat(ctx, path)
}

// Mkdir makes a directory (and its parents, with parents).
func (s *Session) Mkdir(ctx context.Context, path string, parents bool) error {
	s.AwaitWatch(ctx)
	return s.fs.Mkdir(ctx, path, parents)
}

// Delete removes a file or, with recursive, a directory tree.
func (s *Session) Delete(ctx context.Context, path string, recursive bool) error {
	s.AwaitWatch(ctx)
	return s.fs.Delete(ctx, path, recursive)
}

// Move renames from to to, replacing an existing to only with overwrite.
func (s *Session) Move(ctx context.Context, from, to string, overwrite bool) error {
	s.AwaitWatch(ctx)
	return s.fs.Move(ctx, from, to, overwrite)
}

// MaxFileSize is the largest file the session reads or writes whole.
func (s *Session) MaxFileSize() int64 { return s.fs.MaxFileSize() }

// ---- the person's open buffers ----

// OpenDocument records the text of a buffer the person opened: reads and
// edits of its file see that text until it is closed.
func (s *Session) OpenDocument(path, text string, version int) error {
	return s.fs.Overlay().DidOpen(path, text, version)
}

// IsDocumentOpen says whether the person has the file open.
func (s *Session) IsDocumentOpen(path string) bool { return s.fs.Overlay().IsOpen(path) }

// ChangeDocument records a buffer's new text; older versions are ignored.
func (s *Session) ChangeDocument(path, text string, version int) error {
	return s.fs.Overlay().DidChange(path, text, version)
}

// CloseDocument forgets a buffer: reads go to the disk again.
func (s *Session) CloseDocument(path string) error { return s.fs.Overlay().DidClose(path) }

// ---- str_replace edits with undo ----

// View shows a file with line numbers, or a directory's tree (OHEditor's
// view).
func (s *Session) View(ctx context.Context, path string, viewRange []int) (*editor.Result, error) {
	return s.editor.View(ctx, path, viewRange)
}

// Create writes a new file (OHEditor's create); it refuses an existing one.
func (s *Session) Create(ctx context.Context, path, fileText string) (*editor.Result, error) {
	s.AwaitWatch(ctx)
	return s.editor.Create(ctx, path, fileText)
}

// StrReplace replaces the one occurrence of oldStr; a nil newStr deletes
// it, as in OHEditor.
func (s *Session) StrReplace(ctx context.Context, path string, oldStr, newStr *string, expectedVersion string) (*editor.Result, error) {
	s.AwaitWatch(ctx)
	return s.editor.Execute(ctx, editor.Request{Command: editor.CommandStrReplace, Path: path,
		OldStr: oldStr, NewStr: newStr, ExpectedVersion: expectedVersion})
}

// Insert inserts newStr after line insertLine (0: at the top).
func (s *Session) Insert(ctx context.Context, path string, insertLine int, newStr, expectedVersion string) (*editor.Result, error) {
	s.AwaitWatch(ctx)
	return s.editor.Insert(ctx, path, insertLine, newStr, expectedVersion)
}

// Undo restores the file's text before its last edit in this session.
func (s *Session) Undo(ctx context.Context, path string) (*editor.Result, error) {
	s.AwaitWatch(ctx)
	return s.editor.Undo(ctx, path)
}
