package editor

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/oh-bridge/oh-bridge/pytext"
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

// undoState is what editors made by With share: the per-path locks and
// the undo history, so an edit through one can be undone through another.
type undoState struct {
	locks      workspace.PathLocks
	maxHistory int

	mu      sync.Mutex
	history map[string]*fileHistory // by resolved path
}

// fileHistory is the undo stack of one file.
type fileHistory struct {
	entries []string // earlier texts, oldest first, bytes as they were on disk
	// written is the version the editor last wrote. A file whose version
	// differs was changed by someone else, and undoing would destroy that.
	written string
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

// historyFor returns path's history, discarding it when the file's current
// version is not the one the editor last wrote: older entries predate an
// outside change, and restoring them would silently revert it.
func (e *Editor) historyFor(resolved, currentVersion string) *fileHistory {
	e.mu.Lock()
	defer e.mu.Unlock()
	h := e.history[resolved]
	if h == nil {
		h = &fileHistory{}
		e.history[resolved] = h
	}
	if h.written != currentVersion {
		h.entries = nil
	}
	return h
}

// record pushes the text an edit replaced and notes what was written.
func (e *Editor) record(h *fileHistory, previous, writtenVersion string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	h.entries = append(h.entries, previous)
	if over := len(h.entries) - e.maxHistory; over > 0 {
		h.entries = append([]string(nil), h.entries[over:]...)
	}
	h.written = writtenVersion
}

func (e *Editor) create(ctx context.Context, t target, fileText string) (*Result, error) {
	version, err := e.write(ctx, t, fileText, "")
	if err != nil {
		return nil, err
	}
	// OHEditor quirk, kept: create pushes the new text, so the first undo
	// after a create "restores" the same content.
	e.mu.Lock()
	e.history[t.resolved] = &fileHistory{}
	h := e.history[t.resolved]
	e.mu.Unlock()
	e.record(h, fileText, version)
	return &Result{
		Path:    t.display,
		Output:  "File created successfully at: " + t.display,
		Diff:    UnifiedDiff(t.display, "", fileText),
		Version: version,
		Text:    fileText,
	}, nil
}

func (e *Editor) strReplace(ctx context.Context, t target, oldStr, newStr, expectedVersion string) (*Result, error) {
	raw, version, err := e.readText(ctx, t)
	if err != nil {
		return nil, err
	}
	if expectedVersion != "" && expectedVersion != version {
		return nil, &workspace.StaleVersionError{Path: t.display, Expected: expectedVersion, Actual: version}
	}
	h := e.historyFor(t.resolved, version)
	content := universalNewlines(raw)

	occ := findAll(content, oldStr)
	if len(occ) == 0 {
		// Both retry without old_str's surrounding whitespace; OHEditor
		// strips new_str too, FileEditor keeps it as given.
		oldStr = pytext.Strip(oldStr)
		if e.opts.Dialect == OHEditor {
			newStr = pytext.Strip(newStr)
		}
		occ = findAll(content, oldStr)
		if len(occ) == 0 {
			return nil, &ToolError{Kind: KindOldStrNotFound, Path: t.display, Message: fmt.Sprintf(
				"No replacement was performed, old_str `%s` did not appear verbatim in %s.", oldStr, t.display)}
		}
	}
	if len(occ) > 1 {
		lines := occurrenceLines(content, occ)
		return nil, &ToolError{Kind: KindOldStrNotUnique, Path: t.display, Lines: lines, Message: fmt.Sprintf(
			"No replacement was performed. Multiple occurrences of old_str `%s` in lines %s. Please ensure it is unique.", oldStr, pyIntList(lines))}
	}
	idx := occ[0]
	line := strings.Count(content[:idx], "\n") + 1
	newContent := content[:idx] + newStr + content[idx+len(oldStr):]
	newRaw := withLineEnding(newContent, lineEndingOf(raw))
	// The snippet and the diff need only the two texts: they are made on
	// another goroutine while the file is written and fsynced, which waits
	// on the disk.
	type shown struct{ out, diff string }
	shownC := make(chan shown, 1)
	go func() {
		start := max(0, line-SnippetContextWindow)
		end := line + SnippetContextWindow + strings.Count(newStr, "\n")
		snippet := pyReadRange(newContent, start+1, end)
		out := "The file " + t.display + " has been edited. " +
			e.makeOutput(snippet, "a snippet of "+t.display, start+1) +
			"Review the changes and make sure they are as expected. Edit the file again if necessary."
		shownC <- shown{out, UnifiedDiff(t.display, content, newContent)}
	}()
	newVersion, err := e.write(ctx, t, newRaw, version)
	if err != nil {
		return nil, err
	}
	e.record(h, raw, newVersion)
	sh := <-shownC
	return &Result{Path: t.display, Output: sh.out, Diff: sh.diff, Version: newVersion, Text: newRaw}, nil
}

// findAll returns the start offsets of the non-overlapping occurrences of
// sub, as re.finditer(re.escape(sub)) finds them: an empty sub matches at
// every character boundary.
func findAll(s, sub string) []int {
	var occ []int
	if sub == "" {
		for i := range s {
			occ = append(occ, i)
		}
		return append(occ, len(s))
	}
	for off := 0; ; {
		i := strings.Index(s[off:], sub)
		if i < 0 {
			return occ
		}
		occ = append(occ, off+i)
		off += i + len(sub)
	}
}

// occurrenceLines returns the sorted, distinct 1-based lines of offsets.
func occurrenceLines(s string, offsets []int) []int {
	var lines []int
	line, pos := 1, 0
	for _, off := range offsets { // offsets ascend
		line += strings.Count(s[pos:off], "\n")
		pos = off
		if len(lines) == 0 || lines[len(lines)-1] != line {
			lines = append(lines, line)
		}
	}
	return lines
}

func (e *Editor) insert(ctx context.Context, t target, insertLine int, newStr, expectedVersion string) (*Result, error) {
	raw, version, err := e.readText(ctx, t)
	if err != nil {
		return nil, err
	}
	if expectedVersion != "" && expectedVersion != version {
		return nil, &workspace.StaleVersionError{Path: t.display, Expected: expectedVersion, Actual: version}
	}
	h := e.historyFor(t.resolved, version)
	content := universalNewlines(raw)
	numLines := pyLineCount(content)
	if insertLine < 0 || insertLine > numLines {
		return nil, invalidParameter(KindInvalidInsertLine, "insert_line", strconv.Itoa(insertLine),
			"It should be within the range of allowed values: "+pyIntList([]int{0, numLines}))
	}
	newLines := strings.Split(newStr, "\n")
	cut := lineOffset(content, insertLine)
	before, after := content[:cut], content[cut:]
	if before != "" && !strings.HasSuffix(before, "\n") {
		// Deliberate fix: OHEditor glues the text to a last line lacking "\n".
		before += "\n"
	}
	newContent := before + newStr + "\n" + after
	newRaw := withLineEnding(newContent, lineEndingOf(raw))
	newVersion, err := e.write(ctx, t, newRaw, version)
	if err != nil {
		return nil, err
	}
	e.record(h, raw, newVersion)

	start := max(0, insertLine-SnippetContextWindow)
	end := min(numLines+len(newLines), insertLine+SnippetContextWindow+len(newLines))
	snippet := pyReadRange(newContent, start+1, end)
	out := "The file " + t.display + " has been edited. " +
		e.makeOutput(snippet, "a snippet of the edited file", max(1, insertLine-SnippetContextWindow+1)) +
		"Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary."
	return &Result{Path: t.display, Output: out, Diff: UnifiedDiff(t.display, content, newContent), Version: newVersion, Text: newRaw}, nil
}

// lineOffset returns the byte offset just after the first n lines of s.
func lineOffset(s string, n int) int {
	off := 0
	for range n {
		i := strings.IndexByte(s[off:], '\n')
		if i < 0 {
			return len(s)
		}
		off += i + 1
	}
	return off
}

func (e *Editor) undo(ctx context.Context, t target) (*Result, error) {
	raw, version, err := e.readText(ctx, t)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	h := e.history[t.resolved]
	if h == nil || len(h.entries) == 0 {
		e.mu.Unlock()
		return nil, &ToolError{Kind: KindNoEditHistory, Path: t.display, Message: fmt.Sprintf("No edit history found for %s.", t.display)}
	}
	if h.written != version {
		delete(e.history, t.resolved)
		e.mu.Unlock()
		return nil, &ToolError{Kind: KindChangedOutsideEditor, Path: t.display, Message: fmt.Sprintf(
			"Cannot undo the last edit to %s: the file was changed outside the editor after that edit, and undoing it would overwrite that change. The edit history of this file has been discarded; view the file and edit it again instead.", t.display)}
	}
	previous := h.entries[len(h.entries)-1]
	e.mu.Unlock()

	newVersion, err := e.write(ctx, t, previous, version)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	h.entries = h.entries[:len(h.entries)-1]
	h.written = newVersion
	e.mu.Unlock()

	shown := universalNewlines(previous)
	out := "Last edit to " + t.display + " undone successfully. " + e.makeOutput(shown, t.display, 1)
	return &Result{Path: t.display, Output: out, Diff: UnifiedDiff(t.display, universalNewlines(raw), shown), Version: newVersion, Text: previous}, nil
}

func (e *Editor) viewFile(ctx context.Context, t target, info *workspace.FileInfo, viewRange []int) (*Result, error) {
	if e.opts.Dialect == FileEditor {
		if mime, ok := imageTypes[strings.ToLower(pySuffix(t.display))]; ok {
			return e.viewImage(ctx, t, mime)
		}
	} else if ext := pySuffix(t.display); supportedBinaryExts[strings.ToLower(ext)] {
		if info.Size > e.fs.MaxFileSize() {
			return nil, e.tooLarge(t, info.Size, nil)
		}
		// OHEditor converts these to Markdown (markitdown); we have no
		// converter, so we fail the way its conversion failures do.
		return nil, &ToolError{Kind: KindUnsupportedBinary, Path: t.display, Message: fmt.Sprintf(
			"Error in converting file to Markdown: oh-bridge cannot convert %s files. Please use Python code to read %s", ext, t.display)}
	}
	raw, version, err := e.readText(ctx, t)
	if err != nil {
		return nil, err
	}
	content := universalNewlines(raw)
	res := &Result{Path: t.display, Version: version}
	if len(viewRange) == 0 {
		res.Output = e.makeOutput(content, t.display, 1)
		return res, nil
	}
	numLines := pyLineCount(content)
	rangeText := pyIntList(viewRange)
	if len(viewRange) != 2 {
		return nil, invalidParameter(KindInvalidViewRange, "view_range", rangeText, "It should be a list of two integers.")
	}
	start, end := viewRange[0], viewRange[1]
	if start < 1 || start > numLines {
		return nil, invalidParameter(KindInvalidViewRange, "view_range", rangeText, fmt.Sprintf(
			"Its first element `%d` should be within the range of lines of the file: %s.", start, pyIntList([]int{1, numLines})))
	}
	warning := ""
	switch {
	case end == -1:
		end = numLines
	case end > numLines:
		warning = fmt.Sprintf("We only show up to %d since there're only %d lines in this file.", numLines, numLines)
		end = numLines
	}
	if end < start {
		return nil, invalidParameter(KindInvalidViewRange, "view_range", rangeText, fmt.Sprintf(
			"Its second element `%d` should be greater than or equal to the first element `%d`.", end, start))
	}
	selected := pyReadRange(content, start, end)
	if e.opts.Dialect != FileEditor {
		// OHEditor rejoins the lines with splitlines, which also breaks
		// at \f, \v and Unicode separators and drops the last "\n";
		// FileEditor keeps the "\n"-separated lines as read.
		selected = strings.Join(pySplitlines(selected), "\n")
	}
	res.Output = e.makeOutput(selected, t.display, start)
	if warning != "" {
		res.Output = "NOTE: " + warning + "\n" + res.Output
	}
	return res, nil
}

// makeOutput is OHEditor's _make_output: truncate (OHEditor cuts the end,
// FileEditor the middle), then number every "\n"-separated line as cat -n
// does ("%6d\t"). OHEditor numbers the empty field after a final "\n" as
// a line of its own; FileEditor takes that "\n" as the end of the last
// line, so a file "a\n" is one numbered line and an empty file none.
func (e *Editor) makeOutput(content, description string, startLine int) string {
	if e.opts.Dialect == FileEditor {
		content = pytext.MiddleTruncate(content, MaxResponseLen, textTruncatedNotice)
	} else {
		content = truncateRunes(content, MaxResponseLen, textTruncatedNotice)
	}
	var b strings.Builder
	b.Grow(len(content) + len(content)/8 + 100)
	b.WriteString("Here's the result of running `cat -n` on " + description + ":\n")
	if e.opts.Dialect == FileEditor {
		if content == "" {
			return b.String()
		}
		content = strings.TrimSuffix(content, "\n")
	}
	n := startLine
	for {
		i := strings.IndexByte(content, '\n')
		line := content
		if i >= 0 {
			line = content[:i]
		}
		fmt.Fprintf(&b, "%6d\t", n)
		b.WriteString(line)
		b.WriteByte('\n')
		if i < 0 {
			break
		}
		content = content[i+1:]
		n++
	}
	return b.String()
}

// viewDirectory reproduces OHEditor's listing, which shells out to
//
//	find -L {path} -maxdepth 2 -not \( -path '{path}/\.*' -o -path '{path}/*/\.*' \) | sort
//
// plus a count of the hidden entries directly in {path}. Differences: the
// sort is bytewise (sort under LC_ALL=C), and a symlink is followed only if
// its target lies inside the workspace roots (find -L follows any).
func (e *Editor) viewDirectory(ctx context.Context, t target, viewRange []int) (*Result, error) {
	p := t.display
	if len(viewRange) > 0 {
		return nil, invalidParameter(KindInvalidViewRange, "view_range", pyIntList(viewRange),
			"The `view_range` parameter is not allowed when `path` points to a directory.")
	}
	if e.opts.Dialect == FileEditor {
		return e.listLevels(ctx, t)
	}
	list, err := e.fs.ListDirectory(ctx, t.resolved, workspace.ListOptions{Depth: 2, IncludeHidden: true, Limit: viewListLimit})
	if err != nil {
		return nil, e.readError(t, err)
	}
	join := func(dir, rel string) string {
		if strings.HasSuffix(dir, "/") {
			return dir + rel
		}
		return dir + "/" + rel
	}
	isDir := map[string]bool{p: true}
	paths := []string{p}
	hidden := 0
	for _, ent := range list.Entries {
		rel := strings.TrimPrefix(ent.Path, t.resolved+"/")
		topLevel := !strings.Contains(rel, "/")
		if topLevel && strings.HasPrefix(rel, ".") {
			hidden++
		}
		if hasHiddenComponent(rel) {
			continue
		}
		shown := join(p, rel)
		dir := ent.Type == workspace.TypeDirectory
		if ent.Type == workspace.TypeSymlink {
			dir = e.isDirInside(ctx, ent.Path)
			if dir && topLevel {
				// find -L descends into a linked directory.
				for _, child := range e.linkedChildren(ctx, ent.Path) {
					if !strings.HasPrefix(child.name, ".") {
						cp := join(shown, child.name)
						paths = append(paths, cp)
						isDir[cp] = child.dir
					}
				}
			}
		}
		paths = append(paths, shown)
		isDir[shown] = dir
	}
	sort.Strings(paths)
	var raw strings.Builder
	for _, s := range paths {
		raw.WriteString(s + "\n")
	}
	stdout := truncateRunes(raw.String(), MaxResponseLen, dirTruncatedNotice)
	lines := strings.Split(pytext.Strip(stdout), "\n")
	for i, l := range lines {
		if isDir[l] {
			lines[i] = l + "/"
		}
	}
	out := "Here's the files and directories up to 2 levels deep in " + p + ", excluding hidden items:\n" + strings.Join(lines, "\n")
	if hidden > 0 {
		out += fmt.Sprintf("\n\n%d hidden files/directories in this directory are excluded. You can use 'ls -la %s' to see them.", hidden, p)
	}
	return &Result{Path: p, Output: out}, nil
}

func hasHiddenComponent(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		if strings.HasPrefix(part, ".") {
			return true
		}
	}
	return false
}

// isDirInside reports whether path leads to a directory inside the roots.
func (e *Editor) isDirInside(ctx context.Context, path string) bool {
	info, err := e.fs.Probe(ctx, path)
	return err == nil && info.Type == workspace.TypeDirectory
}

type child struct {
	name string
	dir  bool
}

// linkedChildren lists the entries of the directory a symlink points to.
func (e *Editor) linkedChildren(ctx context.Context, link string) []child {
	target, err := e.fs.Roots().Resolve(link)
	if err != nil {
		return nil
	}
	list, err := e.fs.ListDirectory(ctx, target, workspace.ListOptions{Depth: 1, IncludeHidden: true, Limit: viewListLimit})
	if err != nil {
		return nil
	}
	var out []child
	for _, ent := range list.Entries {
		c := child{name: filepath.Base(ent.Path), dir: ent.Type == workspace.TypeDirectory}
		if ent.Type == workspace.TypeSymlink {
			c.dir = e.isDirInside(ctx, ent.Path)
		}
		out = append(out, c)
	}
	return out
}

// lineEndingOf returns the file's dominant line break, so an edit keeps a
// CRLF file CRLF (OHEditor rewrites every file to "\n").
func lineEndingOf(raw string) string {
	if strings.IndexByte(raw, '\r') < 0 {
		return "\n"
	}
	crlf := strings.Count(raw, "\r\n")
	cr := strings.Count(raw, "\r") - crlf
	lf := strings.Count(raw, "\n") - crlf
	switch {
	case crlf > lf && crlf >= cr:
		return "\r\n"
	case cr > lf && cr > crlf:
		return "\r"
	}
	return "\n"
}

func withLineEnding(normalized, eol string) string {
	if eol == "\n" {
		return normalized
	}
	return strings.ReplaceAll(normalized, "\n", eol)
}
