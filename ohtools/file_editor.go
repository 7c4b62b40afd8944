package ohtools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/oh-bridge/oh-bridge/editor"
)

// FileEditorTool is the file editor's name.
const FileEditorTool = "file_editor"

var _ = declare(Spec[*FileEditorArgs]{
	Name:        FileEditorTool,
	Description: fileEditorDescription,
	Schema:      fileEditorSchema,
	Annotations: Annotations{Title: FileEditorTool, DestructiveHint: true},
	Card:        CardFile,
	Parse:       parseFileEditorArgs,
	Run: func(ctx context.Context, tb *Toolbox, args *FileEditorArgs, _ func(Progress)) (*Observation, error) {
		return tb.fileEditor(ctx, args)
	},
})

// FileEditorArgs is FileEditorAction.
type FileEditorArgs struct {
	Command    string  `json:"command"`
	Path       string  `json:"path"`
	FileText   *string `json:"file_text,omitempty"`
	OldStr     *string `json:"old_str,omitempty"`
	NewStr     *string `json:"new_str,omitempty"`
	InsertLine *int    `json:"insert_line,omitempty"`
	ViewRange  []int   `json:"view_range,omitempty"`
}

// Action is a view, or an edit of the file.
func (f *FileEditorArgs) Action() Action {
	if f.Command == editor.CommandView {
		return Action{Kind: "read", Title: "view " + f.Path, NeedsPermission: true}
	}
	return Action{Kind: "edit", Title: f.Command + " " + f.Path, NeedsPermission: true}
}

// Card names the file, the line a view starts at or an insert goes
// after, and the change the arguments spell out.
func (f *FileEditorArgs) Card() Card {
	c := Card{Path: f.Path, Edits: f.Command != editor.CommandView}
	switch {
	case len(f.ViewRange) > 0 && f.ViewRange[0] > 0:
		line := f.ViewRange[0]
		c.Line = &line
	case f.InsertLine != nil:
		line := *f.InsertLine + 1
		c.Line = &line
	}
	empty := ""
	switch {
	case f.Command == editor.CommandStrReplace && f.OldStr != nil:
		c.Proposed = &Diff{OldText: f.OldStr, NewText: cmp.Or(f.NewStr, &empty)}
	case f.Command == editor.CommandCreate && f.FileText != nil:
		c.Proposed = &Diff{NewText: f.FileText}
	case f.Command == editor.CommandInsert && f.NewStr != nil:
		c.Proposed = &Diff{OldText: &empty, NewText: f.NewStr}
	}
	return c
}

func (f *FileEditorArgs) request() editor.Request {
	return editor.Request{Command: f.Command, Path: f.Path, FileText: f.FileText, OldStr: f.OldStr,
		NewStr: f.NewStr, InsertLine: f.InsertLine, ViewRange: f.ViewRange}
}

var fileEditorCommands = []string{editor.CommandView, editor.CommandCreate, editor.CommandStrReplace, editor.CommandInsert, editor.CommandUndoEdit}

// fileEditorModel is FileEditorAction's pydantic model; a call without
// a command gets the one its other names imply.
var fileEditorModel = actionModel{name: "FileEditorAction", fields: []actionField{
	{name: "command", typ: tLiteral, required: true, literals: fileEditorCommands},
	{name: "path", typ: tStr, required: true},
	{name: "file_text", typ: tStr},
	{name: "old_str", typ: tStr},
	{name: "new_str", typ: tStr},
	{name: "insert_line", typ: tInt},
	{name: "view_range", typ: tIntList},
}, infer: inferFileEditorCommand}

// fileEditorHints are the names that say a call is file_editor's.
var fileEditorHints = []string{"old_str", "new_str", "insert_line", "file_text", "path", "view_range"}

// inferFileEditorCommand is normalize_tool_call's file_editor rule: a call
// without a command gets the one its other names imply, put first.
func inferFileEditorCommand(args *pyValue) error {
	if args.get("command") != nil {
		return nil
	}
	inferred := ""
	for _, r := range [][2]string{{"old_str", "str_replace"}, {"insert_line", "insert"}, {"file_text", "create"}, {"path", "view"}} {
		if args.get(r[0]) != nil {
			inferred = r[1]
			break
		}
	}
	if inferred != "" {
		rest := args.copyDict()
		*args = *newPyDict()
		args.set("command", &pyValue{kind: pyStr, s: inferred})
		for _, k := range rest.keys {
			args.set(k, rest.vals[k])
		}
		return nil
	}
	hinted := false
	for _, h := range fileEditorHints {
		hinted = hinted || args.get(h) != nil
	}
	if len(args.keys) > 0 && hinted {
		return nil
	}
	return &ArgumentError{Tool: FileEditorTool, Keys: append([]string{}, args.keys...), Reason: fmt.Sprintf(
		"Cannot infer 'command' for tool '%s' from empty arguments %s. Expected one of: str_replace, insert, create, "+
			"view with appropriate arguments (e.g., old_str for str_replace, path for view).", FileEditorTool, args.repr())}
}

func parseFileEditorArgs(raw json.RawMessage) (*FileEditorArgs, error) {
	v, err := checkArguments(FileEditorTool, fileEditorModel, raw)
	if err != nil {
		return nil, err
	}
	f := &FileEditorArgs{
		Command:  *v.str("command"),
		Path:     *v.str("path"),
		FileText: v.str("file_text"),
		OldStr:   v.str("old_str"),
		NewStr:   v.str("new_str"),
	}
	if n, ok := v["insert_line"].(int); ok {
		f.InsertLine = &n
	}
	f.ViewRange, _ = v["view_range"].([]int)
	return f, nil
}

// fileEditor is FileEditorExecutor: the editor's text, or its error text
// as an error observation.
func (t *Toolbox) fileEditor(ctx context.Context, args *FileEditorArgs) (*Observation, error) {
	res, err := t.editor.Execute(ctx, args.request())
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		// OHEditor's text for its own errors; for containment or an editor
		// that declined the edit, the bridge's own words, which name the
		// path and what to do. Either way the kind rides along.
		text := err.Error()
		var te *editor.ToolError
		if errors.As(err, &te) {
			text = te.Message
		}
		obs := errorObservation(text)
		obs.Error = errorInfo(err)
		return obs, nil
	}
	obs := textObservation(res.Output)
	if res.Image != nil {
		obs.Content = append(obs.Content, Content{MIMEType: res.Image.MIMEType, Data: res.Image.Data})
	}
	if args.Command != editor.CommandView {
		obs.Edit = &EditInfo{Path: res.Path, Diff: res.Diff, Text: res.Text}
	}
	return obs, nil
}

const fileEditorSchema = `{
  "type": "object",
  "description": "Schema for file editor operations.",
  "properties": {
    "command": {
      "type": "string",
      "description": "The commands to run. Allowed options are: ` + "`view`, `create`, `str_replace`, `insert`, `undo_edit`" + `.",
      "enum": ["view", "create", "str_replace", "insert", "undo_edit"]
    },
    "path": {
      "type": "string",
      "description": "Absolute path to file or directory."
    },
    "file_text": {
      "type": "string",
      "description": "Required parameter of ` + "`create`" + ` command, with the content of the file to be created."
    },
    "old_str": {
      "type": "string",
      "description": "Required parameter of ` + "`str_replace`" + ` command containing the string in ` + "`path`" + ` to replace."
    },
    "new_str": {
      "type": "string",
      "description": "Optional parameter of ` + "`str_replace`" + ` command containing the new string (if not given, no string will be added). Required parameter of ` + "`insert`" + ` command containing the string to insert."
    },
    "insert_line": {
      "type": "integer",
      "description": "Required parameter of ` + "`insert`" + ` command. The ` + "`new_str`" + ` will be inserted AFTER the line ` + "`insert_line`" + ` of ` + "`path`" + `."
    },
    "view_range": {
      "type": "array",
      "items": {"type": "integer"},
      "description": "Optional parameter of ` + "`view`" + ` command when ` + "`path`" + ` points to a file. If none is given, the full file is shown. If provided, the file will be shown in the indicated line number range, e.g. [11, 12] will show lines 11 and 12. Indexing at 1 to start. Setting ` + "`[start_line, -1]`" + ` shows all lines from ` + "`start_line`" + ` to the end of the file."
    }
  },
  "required": ["command", "path"]
}`

const fileEditorDescription = "View, create and edit plain-text files.\n" +
	"* State persists between calls and across the conversation.\n" +
	"* `view` on a text file shows it numbered, as `cat -n` does; on a directory it lists the files and directories up to 2 levels deep, hidden ones excluded; on an image (.png, .jpg, .jpeg, .gif, .webp, .bmp) it shows the image.\n" +
	"* `create` cannot overwrite: it fails when `path` already exists as a file.\n" +
	"* Output that is too long is cut and marked with `<response clipped>`.\n" +
	"* `undo_edit` reverts the last edit made to the file at `path`.\n" +
	"\n" +
	"Before using this tool:\n" +
	"1. View the file first, to understand its content and context.\n" +
	"2. Before creating a file, view the parent directory to check that it exists and is the right place.\n" +
	"\n" +
	"When editing:\n" +
	"   - Keep the code idiomatic and correct; never leave it broken.\n" +
	"   - Always use absolute paths (starting with /).\n" +
	"\n" +
	"RULES FOR str_replace:\n" +
	"\n" +
	"1. EXACT MATCH: `old_str` must match one or more consecutive lines of the file exactly, whitespace and indentation included. Nothing is replaced when it matches nowhere or in more than one place.\n" +
	"\n" +
	"2. UNIQUE: `old_str` must occur exactly once. Include enough context around the change (3-5 lines) to make it unique.\n" +
	"\n" +
	"3. REPLACEMENT: `new_str` holds the edited lines that replace `old_str`; the two must differ.\n" +
	"\n" +
	"To make several edits to one file, send them together: several calls to this tool in one message.\n" +
	"\n" +
	"Your current working directory is: {working_dir}\n" +
	"When exploring the project, start from this directory rather than the root of the filesystem."
