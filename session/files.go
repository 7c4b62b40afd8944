package session

import (
	"context"
	"errors"
	"io/fs"
	"time"

	"github.com/oh-bridge/oh-bridge/editor"
	"github.com/oh-bridge/oh-bridge/workspace"
)

// The session's files: every read, write, edit and open buffer goes through
// these, whichever face asks. Paths are absolute or relative to the first
// root. Calls that change files first let the watcher finish its initial
// walk (AwaitWatch), so the change they make is reported like any later
// one. Results are the session's own types, converted from package
// workspace's and package editor's here; errors are theirs, each with a
// Kind a face maps (an edit's is an *EditError).

// BufferEditor applies an edit to a document the editor has open, so the
// change lands in the editor's buffer (and its undo stack) instead of
// under it on disk.
type BufferEditor interface {
	// ApplyFullText replaces the document's text oldText with newText;
	// applied is false when the editor declined (its buffer changed).
	ApplyFullText(ctx context.Context, path, oldText, newText string) (applied bool, err error)
}

// TextFile is (part of) a text file's content.
type TextFile struct {
	Content    string // the requested lines, bytes exactly as stored
	TotalLines int    // lines in the whole file; a final line without "\n" counts
	Truncated  bool   // lines after the requested window were left out
	Encoding   string // always "utf-8"
	Version    string // version of the whole content, for ExpectedVersion
}

// WriteResult is what a write did.
type WriteResult struct {
	Version string // version of the content now in place
	Created bool   // the file did not exist before
}

// ListOptions bound a directory listing.
type ListOptions struct {
	Depth            int  // levels to descend; 0 means 1 (direct children only)
	IncludeHidden    bool // list names starting with "."
	RespectGitignore bool // skip what .gitignore files (and .git itself) exclude
	Limit            int  // maximum entries; 0 means no limit
}

// Listing is a directory's entries, depth-first, each directory's sorted
// by name.
type Listing struct {
	Entries   []Entry
	Truncated bool // the limit was reached before the walk finished
}

// Entry is one path of a Listing.
type Entry struct {
	Path  string // absolute, resolved
	Type  string // TypeFile, TypeDirectory, TypeSymlink (not followed), or another kind of file
	Size  int64
	MTime time.Time
}

// FileInfo describes a path.
type FileInfo struct {
	Exists bool
	// Type is what the path is, its symlink's target if it is one.
	Type      string
	IsSymlink bool // the path itself is a symlink
	Size      int64
	MTime     time.Time
	Mode      fs.FileMode // permission bits
	IsBinary  bool
	// Version is set for text files within the size cap.
	Version string
}

// What an Entry or a FileInfo is; other kinds of file ("fifo", "socket",
// "char_device", "block_device", "other") are named as package workspace
// names them.
const (
	TypeFile      = workspace.TypeFile
	TypeDirectory = workspace.TypeDirectory
	TypeSymlink   = workspace.TypeSymlink
)

// FileChange is a change under the roots, the session's own or another
// program's.
type FileChange struct {
	Path   string
	Type   string // "created", "changed" or "deleted"
	Source string // "agent" (made through the session) or "external"
}

// EditResult is a str_replace edit's result.
type EditResult struct {
	Path    string // the path as shown in Output
	Output  string // OHEditor's text, byte for byte
	Diff    string // a unified diff of the change; "" for view
	Version string // the file's version after the command ("" for directories)
	Text    string // the file's full text after create, str_replace, insert or undo
}

// EditError is an edit's failure as OHEditor words it: its message is
// OHEditor's text, its kind one of package editor's ("old_str_not_found",
// "old_str_not_unique", ...), its Data the path and what else the
// failure knows.
type EditError struct{ te *editor.ToolError }

func (e *EditError) Error() string        { return e.te.Message }
func (e *EditError) Kind() string         { return e.te.Kind }
func (e *EditError) Data() map[string]any { return e.te.Data() }
func (e *EditError) Unwrap() error        { return e.te }

// edited converts an edit's result and error. Workspace errors the editor
// passes through keep their own kinds.
func edited(r *editor.Result, err error) (*EditResult, error) {
	if err != nil {
		var te *editor.ToolError
		if errors.As(err, &te) {
			return nil, &EditError{te}
		}
		return nil, err
	}
	return &EditResult{Path: r.Path, Output: r.Output, Diff: r.Diff, Version: r.Version, Text: r.Text}, nil
}

func listingOf(l *workspace.Listing) *Listing {
	out := &Listing{Truncated: l.Truncated, Entries: make([]Entry, len(l.Entries))}
	for i, e := range l.Entries {
		out.Entries[i] = Entry(e)
	}
	return out
}

func changesOf(cs []workspace.Change) []FileChange {
	out := make([]FileChange, len(cs))
	for i, c := range cs {
		out[i] = FileChange(c)
	}
	return out
}

// Resolve turns a path into the resolved absolute path inside the roots it
// names, or an *workspace.OutsideRootsError.
func (s *Session) Resolve(path string) (string, error) { return s.roots.Resolve(path) }

// ReadTextFile reads a text file, unsaved buffers included, from a 1-based
// line for limit lines (0: to the end).
func (s *Session) ReadTextFile(ctx context.Context, path string, line, limit int) (*TextFile, error) {
	f, err := s.fs.ReadTextFile(ctx, path, line, limit)
	return (*TextFile)(f), err
}

// WriteTextFile replaces a file's text atomically; expectedVersion, when
// set, guards against a concurrent change.
func (s *Session) WriteTextFile(ctx context.Context, path, content, expectedVersion string, createParents bool) (*WriteResult, error) {
	s.AwaitWatch(ctx)
	r, err := s.fs.WriteTextFile(ctx, path, content, expectedVersion, createParents)
	return (*WriteResult)(r), err
}

// ListDirectory lists a directory's entries.
func (s *Session) ListDirectory(ctx context.Context, path string, opts ListOptions) (*Listing, error) {
	l, err := s.fs.ListDirectory(ctx, path, workspace.ListOptions(opts))
	if err != nil {
		return nil, err
	}
	return listingOf(l), nil
}

// Stat describes a path; a missing one answers Exists false.
func (s *Session) Stat(ctx context.Context, path string) (*FileInfo, error) {
	fi, err := s.fs.Stat(ctx, path)
	return (*FileInfo)(fi), err
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
func (s *Session) View(ctx context.Context, path string, viewRange []int) (*EditResult, error) {
	return edited(s.editor.View(ctx, path, viewRange))
}

// Create writes a new file (OHEditor's create); it refuses an existing one.
func (s *Session) Create(ctx context.Context, path, fileText string) (*EditResult, error) {
	s.AwaitWatch(ctx)
	return edited(s.editor.Create(ctx, path, fileText))
}

// StrReplace replaces the one occurrence of oldStr; a nil newStr deletes
// it, as in OHEditor.
func (s *Session) StrReplace(ctx context.Context, path string, oldStr, newStr *string, expectedVersion string) (*EditResult, error) {
	s.AwaitWatch(ctx)
	return edited(s.editor.Execute(ctx, editor.Request{Command: editor.CommandStrReplace, Path: path,
		OldStr: oldStr, NewStr: newStr, ExpectedVersion: expectedVersion}))
}

// Insert inserts newStr after line insertLine (0: at the top).
func (s *Session) Insert(ctx context.Context, path string, insertLine int, newStr, expectedVersion string) (*EditResult, error) {
	s.AwaitWatch(ctx)
	return edited(s.editor.Insert(ctx, path, insertLine, newStr, expectedVersion))
}

// Undo restores the file's text before its last edit in this session.
func (s *Session) Undo(ctx context.Context, path string) (*EditResult, error) {
	s.AwaitWatch(ctx)
	return edited(s.editor.Undo(ctx, path))
}
