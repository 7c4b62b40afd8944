package ohtools

import (
	"context"
	"errors"

	"github.com/oh-bridge/oh-bridge/editor"
)

// fileEditorArgs is FileEditorAction.
type fileEditorArgs struct {
	req editor.Request
}

var fileEditorCommands = []string{editor.CommandView, editor.CommandCreate, editor.CommandStrReplace, editor.CommandInsert, editor.CommandUndoEdit}

func parseFileEditorArgs(raw []byte) (*fileEditorArgs, error) {
	a, err := parseArgs(FileEditorTool, raw)
	if err != nil {
		return nil, err
	}
	var f fileEditorArgs
	r := &f.req
	if r.Command, err = a.requiredStr("command"); err != nil {
		return nil, err
	}
	if err := a.oneOf("command", r.Command, fileEditorCommands...); err != nil {
		return nil, err
	}
	if r.Path, err = a.requiredStr("path"); err != nil {
		return nil, err
	}
	if r.FileText, err = a.str("file_text"); err != nil {
		return nil, err
	}
	if r.OldStr, err = a.str("old_str"); err != nil {
		return nil, err
	}
	if r.NewStr, err = a.str("new_str"); err != nil {
		return nil, err
	}
	if r.InsertLine, err = a.integer("insert_line"); err != nil {
		return nil, err
	}
	if r.InsertLine != nil && *r.InsertLine < 0 {
		return nil, a.fail("`insert_line` must be greater than or equal to 0")
	}
	if r.ViewRange, err = a.intList("view_range"); err != nil {
		return nil, err
	}
	return &f, nil
}

// fileEditor is FileEditorExecutor: the editor's text, or its error text
// as an error observation.
func (a *Toolbox) fileEditor(ctx context.Context, args *fileEditorArgs) (*Observation, error) {
	res, err := a.editor.Execute(ctx, args.req)
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
	if args.req.Command != editor.CommandView {
		obs.Edit = &EditInfo{Path: res.Path, Diff: res.Diff, Text: res.Text}
	}
	return obs, nil
}
