package editor

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/oh-bridge/oh-bridge/workspace"
)

// Limits and texts fixed by OHEditor (openhands_aci/editor/config.py, prompts.py).
const (
	MaxResponseLen       = 16000 // characters (code points) of file text shown
	SnippetContextWindow = 4     // lines shown around an edit
	DefaultMaxHistory    = 10    // undo steps kept per file
	// viewListLimit caps the entries a directory view reads: its text is
	// cut at MaxResponseLen (a few hundred paths) anyway, and without a cap
	// a directory of millions of files planted by the agent's shell would
	// be read whole into memory. Past it the view shows, sorted, the first
	// entries the file system gave (OpenHands' find lists in its order too).
	viewListLimit = 50_000

	toolName = "oh_editor"

	textTruncatedNotice = "<response clipped><NOTE>Due to the max output limit, only part of this file has been shown to you. You should retry this tool after you have searched inside the file with `grep -n` in order to find the line numbers of what you are looking for.</NOTE>"
	dirTruncatedNotice  = "<response clipped><NOTE>Due to the max output limit, only part of this directory has been shown to you. You should use `ls -la` instead to view large directories incrementally.</NOTE>"
)

// Commands, as OHEditor names them.
const (
	CommandView       = "view"
	CommandCreate     = "create"
	CommandStrReplace = "str_replace"
	CommandInsert     = "insert"
	CommandUndoEdit   = "undo_edit"
)

var allCommands = []string{CommandView, CommandCreate, CommandStrReplace, CommandInsert, CommandUndoEdit}

// supportedBinaryExts are the formats OHEditor converts to Markdown on view.
var supportedBinaryExts = map[string]bool{
	".docx": true, ".xlsx": true, ".pptx": true, ".pdf": true,
	".mp3": true, ".wav": true, ".m4a": true, ".flac": true,
}

// Dialect selects whose rules and wording the editor follows.
type Dialect int

const (
	// OHEditor is OpenHands V0's str_replace_editor (openhands-aci 0.3.x).
	OHEditor Dialect = iota
	// FileEditor is OpenHands V1's file_editor tool (openhands-tools). It
	// differs from OHEditor in a few texts, requires new_str for
	// str_replace, strips only old_str when retrying a match, truncates long
	// views in the middle rather than at the end, lists directories level by
	// level, shows images, and has no converter for .pdf and the like.
	FileEditor
)

// Options configures an Editor.
type Options struct {
	// Dialect is OHEditor (the default) or FileEditor. FileEditor implies
	// RequireAbsolutePaths.
	Dialect Dialect
	// RequireAbsolutePaths reproduces OHEditor's path handling, for the
	// OpenHands action layer: a relative path fails with OHEditor's exact
	// error (and its "Maybe you meant" hint), and create does not make
	// missing parent directories. When false (the edit/* methods), relative
	// paths are taken relative to the first workspace root and create makes
	// parent directories.
	RequireAbsolutePaths bool
	// MaxHistory is the number of undo steps kept per file; 0 means
	// DefaultMaxHistory.
	MaxHistory int
}

// Editor runs OHEditor commands on files of a workspace.FS. It is safe for
// concurrent use: commands that modify a file are serialized per resolved
// path, so concurrent edits of one file all apply, one after the other.
type Editor struct {
	fs   *workspace.FS
	opts Options
	*undoState
}

// New returns an Editor writing through fs.
func New(fs *workspace.FS, opts Options) *Editor {
	if opts.MaxHistory <= 0 {
		opts.MaxHistory = DefaultMaxHistory
	}
	u := &undoState{maxHistory: opts.MaxHistory, history: make(map[string]*fileHistory)}
	return (&Editor{fs: fs, undoState: u}).With(opts)
}

// With returns an editor with other path rules and wording that shares e's
// workspace, locks and undo history: an edit by an agent's file_editor can
// be undone by the editor's edit/undo, and the other way round.
// opts.MaxHistory is ignored; the history keeps e's bound.
func (e *Editor) With(opts Options) *Editor {
	if opts.Dialect == FileEditor {
		opts.RequireAbsolutePaths = true
	}
	opts.MaxHistory = e.maxHistory
	return &Editor{fs: e.fs, opts: opts, undoState: e.undoState}
}

// Request is one OHEditor call. Pointer fields distinguish an absent
// parameter (nil) from an empty one, as OHEditor's None does.
type Request struct {
	Command    string
	Path       string
	FileText   *string // create
	ViewRange  []int   // view; empty means the whole file
	OldStr     *string // str_replace
	NewStr     *string // str_replace (nil deletes), insert
	InsertLine *int    // insert
	// ExpectedVersion, for str_replace and insert, must equal the file's
	// current version if set; otherwise *workspace.StaleVersionError.
	ExpectedVersion string
}

// Result is the outcome of a command.
type Result struct {
	Path    string // the path as shown in Output
	Output  string // OHEditor's text, byte for byte
	Diff    string // see UnifiedDiff; "" for view
	Version string // the file's version after the command ("" for directories)
	Text    string // the file's full text after create, str_replace, insert or undo_edit
	// Image is set when FileEditor views an image file: the picture shown
	// after Output.
	Image *Image
}

// Image is an image file's content, as FileEditor shows it to the agent.
type Image struct {
	MIMEType string
	Data     []byte
}

// View shows a file (optionally lines viewRange[0]..viewRange[1], -1 meaning
// the end) or a directory two levels deep.
func (e *Editor) View(ctx context.Context, path string, viewRange []int) (*Result, error) {
	return e.Execute(ctx, Request{Command: CommandView, Path: path, ViewRange: viewRange})
}

// Create writes a new file; an existing path is an error.
func (e *Editor) Create(ctx context.Context, path, fileText string) (*Result, error) {
	return e.Execute(ctx, Request{Command: CommandCreate, Path: path, FileText: &fileText})
}

// StrReplace replaces the one occurrence of oldStr by newStr ("" deletes).
func (e *Editor) StrReplace(ctx context.Context, path, oldStr, newStr, expectedVersion string) (*Result, error) {
	return e.Execute(ctx, Request{Command: CommandStrReplace, Path: path, OldStr: &oldStr, NewStr: &newStr, ExpectedVersion: expectedVersion})
}

// Insert inserts newStr after line insertLine (0 inserts at the top).
func (e *Editor) Insert(ctx context.Context, path string, insertLine int, newStr, expectedVersion string) (*Result, error) {
	return e.Execute(ctx, Request{Command: CommandInsert, Path: path, InsertLine: &insertLine, NewStr: &newStr, ExpectedVersion: expectedVersion})
}

// Undo restores the text before the last create, str_replace, insert or
// undo_edit of path by this editor.
func (e *Editor) Undo(ctx context.Context, path string) (*Result, error) {
	return e.Execute(ctx, Request{Command: CommandUndoEdit, Path: path})
}

// target is a path as shown to the agent and as resolved for the system.
type target struct {
	display  string
	resolved string
}

// Execute runs req with OHEditor's validation order: the path, then the
// command's parameters, then the file's content.
func (e *Editor) Execute(ctx context.Context, req Request) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t, err := e.locate(ctx, req.Path)
	if err != nil {
		return nil, err
	}
	switch req.Command {
	case CommandCreate, CommandStrReplace, CommandInsert, CommandUndoEdit:
		unlock := e.locks.Lock(t.resolved)
		defer unlock()
	}
	info, err := e.fs.Probe(ctx, t.resolved)
	if err != nil {
		return nil, e.readError(t, err)
	}
	if err := e.validatePath(req.Command, t, info); err != nil {
		return nil, err
	}
	switch req.Command {
	case CommandView:
		if info.Type == workspace.TypeDirectory {
			return e.viewDirectory(ctx, t, req.ViewRange)
		}
		return e.viewFile(ctx, t, info, req.ViewRange)
	case CommandCreate:
		if req.FileText == nil {
			return nil, missingParameter(req.Command, "file_text")
		}
		return e.create(ctx, t, *req.FileText)
	case CommandStrReplace:
		if req.OldStr == nil {
			return nil, missingParameter(req.Command, "old_str")
		}
		if req.NewStr == nil && e.opts.Dialect == FileEditor {
			return nil, missingParameter(req.Command, "new_str")
		}
		if req.NewStr != nil && *req.NewStr == *req.OldStr {
			return nil, invalidParameter(KindNewStrEqualsOldStr, "new_str", *req.NewStr,
				"No replacement was performed. `new_str` and `old_str` must be different.")
		}
		newStr := ""
		if req.NewStr != nil {
			newStr = *req.NewStr
		}
		return e.strReplace(ctx, t, *req.OldStr, newStr, req.ExpectedVersion)
	case CommandInsert:
		if req.InsertLine == nil {
			return nil, missingParameter(req.Command, "insert_line")
		}
		if req.NewStr == nil {
			return nil, missingParameter(req.Command, "new_str")
		}
		return e.insert(ctx, t, *req.InsertLine, *req.NewStr, req.ExpectedVersion)
	case CommandUndoEdit:
		return e.undo(ctx, t)
	}
	tool := "the " + toolName + " tool"
	if e.opts.Dialect == FileEditor {
		tool = "FileEditor tool"
	}
	return nil, &ToolError{Kind: KindUnknownCommand, Message: fmt.Sprintf(
		"Unrecognized command %s. The allowed commands for %s are: %s",
		req.Command, tool, strings.Join(allCommands, ", "))}
}

// locate applies OHEditor's absolute-path rule (or, without
// RequireAbsolutePaths, resolves relative paths against the first root)
// and resolves the path inside the workspace roots.
func (e *Editor) locate(ctx context.Context, path string) (target, error) {
	roots := e.fs.Roots()
	display := pyPath(path)
	if !strings.HasPrefix(path, "/") {
		if e.opts.RequireAbsolutePaths {
			hint := "The path should be an absolute path, starting with `/`."
			if e.opts.Dialect == FileEditor {
				hint = "The path should be an absolute path."
			}
			// OHEditor suggests cwd/path when it exists; we also require
			// it to be inside the roots, so the hint cannot probe outside.
			suggested := pyPath(roots.First() + "/" + path)
			if r, err := roots.Resolve(suggested); err == nil {
				if info, err := e.fs.Probe(ctx, r); err == nil && info.Exists {
					hint += " Maybe you meant " + suggested + "?"
				}
			}
			return target{}, &ToolError{Kind: KindPathNotAbsolute, Path: display,
				Message: fmt.Sprintf("Invalid `path` parameter: %s. %s", display, hint)}
		}
		display = pyPath(filepath.Join(roots.First(), path))
	}
	resolved, err := roots.Resolve(path)
	if err != nil {
		return target{}, err
	}
	return target{display: display, resolved: resolved}, nil
}

func (e *Editor) validatePath(command string, t target, info *workspace.FileInfo) error {
	p := t.display
	if command == CommandCreate && info.Exists {
		return invalidParameter(KindFileExists, "path", p, fmt.Sprintf(
			"File already exists at: %s. Cannot overwrite files using command `create`.", p))
	}
	if command != CommandCreate && !info.Exists {
		return invalidParameter(KindNotFound, "path", p, fmt.Sprintf(
			"The path %s does not exist. Please provide a valid path.", p))
	}
	if command != CommandView {
		if info.Type == workspace.TypeDirectory {
			return invalidParameter(KindIsDirectory, "path", p, fmt.Sprintf(
				"The path %s is a directory and only the `view` command can be used on directories.", p))
		}
		if ext := pySuffix(p); e.opts.Dialect == OHEditor && supportedBinaryExts[strings.ToLower(ext)] {
			return invalidParameter(KindUnsupportedBinary, "path", p, fmt.Sprintf(
				"The path %s points to a binary file (%s) and only the `view` command can be used on supported binary files.", p, ext))
		}
	}
	return nil
}

func invalidParameter(kind, param, value, hint string) *ToolError {
	te := &ToolError{Kind: kind, Message: fmt.Sprintf("Invalid `%s` parameter: %s. %s", param, value, hint)}
	if param == "path" {
		te.Path = value
	}
	return te
}

func missingParameter(command, param string) *ToolError {
	return &ToolError{Kind: KindMissingParameter, Message: fmt.Sprintf("Parameter `%s` is required for command: %s.", param, command)}
}
