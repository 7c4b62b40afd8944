package ohtools

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/oh-bridge/oh-bridge/workspace"
)

// open_file is a tool of the bridge's own, not OpenHands': the agent
// shows the person a file of the workspace in an editor tab, at a line.
// It is off unless asked for (Extra), so the default tools stay
// OpenHands' own.
var _ = declare(Spec[*OpenFileArgs]{
	Name:        "open_file",
	Description: openFileDescription,
	Schema:      openFileSchema,
	Annotations: Annotations{Title: "open_file", ReadOnlyHint: true},
	Card:        CardFile,
	Extra:       true,
	Parse: func(raw json.RawMessage) (*OpenFileArgs, error) {
		v, err := checkArguments("open_file", openFileModel, raw)
		if err != nil {
			return nil, err
		}
		a := &OpenFileArgs{Path: *v.str("path")}
		a.Line, _ = v["line"].(int)
		return a, nil
	},
	Run: func(ctx context.Context, tb *Toolbox, args *OpenFileArgs, _ func(Progress)) (*Observation, error) {
		return tb.openFile(ctx, args)
	},
})

var openFileModel = actionModel{name: "OpenFileAction", fields: []actionField{
	{name: "path", typ: tStr, required: true},
	{name: "line", typ: tInt},
}}

// OpenFileArgs are open_file's arguments.
type OpenFileArgs struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"` // from 1; 0 shows the file's top
}

// Action shows the person a file: it changes nothing and the agent reads
// nothing, so no permission is asked.
func (o *OpenFileArgs) Action() Action {
	return Action{Kind: "read", Title: "show " + o.Path + lineSuffix(o.Line)}
}

// Card names the file and the line.
func (o *OpenFileArgs) Card() Card {
	c := Card{Path: o.Path}
	if o.Line > 0 {
		line := o.Line
		c.Line = &line
	}
	return c
}

func lineSuffix(line int) string {
	if line <= 0 {
		return ""
	}
	return ":" + strconv.Itoa(line)
}

// openFile checks the path as every file operation does (inside the
// workspace, an existing file), then has the editor show it.
func (t *Toolbox) openFile(ctx context.Context, args *OpenFileArgs) (*Observation, error) {
	fail := func(err error) (*Observation, error) {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		obs := errorObservation(err.Error())
		obs.Error = errorInfo(err)
		return obs, nil
	}
	info, err := t.opts.FS.Stat(ctx, args.Path)
	if err != nil {
		return fail(err)
	}
	switch {
	case !info.Exists:
		return fail(&workspace.NotFoundError{Path: args.Path})
	case info.Type == workspace.TypeDirectory:
		return fail(&workspace.IsDirectoryError{Path: args.Path})
	}
	abs, err := t.opts.FS.Roots().Resolve(args.Path)
	if err != nil {
		return fail(err)
	}
	where := abs + lineSuffix(args.Line)
	if t.opts.ShowFile == nil {
		return errorObservation("There is no editor to show " + where + " in: the tools are served without one " +
			"(oh-bridge mcp on stdio). Read the file with file_editor's view command instead."), nil
	}
	if err := t.opts.ShowFile(ctx, abs, args.Line); err != nil {
		return fail(err)
	}
	return textObservation("Showed " + where + " to the user in their editor."), nil
}

const openFileSchema = `{
  "type": "object",
  "description": "Show a file to the user in their editor.",
  "properties": {
    "path": {
      "type": "string",
      "description": "Absolute path to the file, inside the workspace."
    },
    "line": {
      "type": "integer",
      "description": "Optional line to show, counting from 1. If none is given, the file is shown from its top."
    }
  },
  "required": ["path"]
}`

const openFileDescription = "Show the user a file in their editor, opened in a tab at a line.\n" +
	"* Use it to point the user to code you talk about: a definition, a failing test, a change you made.\n" +
	"* It does not show you the file's content: use file_editor's `view` for that.\n" +
	"* `path` must be absolute and inside the workspace."
