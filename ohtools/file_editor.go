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
	v, err := checkArguments(FileEditorTool, fileEditorModel, raw)
	if err != nil {
		return nil, err
	}
	f := &fileEditorArgs{req: editor.Request{
		Command:  *v.str("command"),
		Path:     *v.str("path"),
		FileText: v.str("file_text"),
		OldStr:   v.str("old_str"),
		NewStr:   v.str("new_str"),
	}}
	if n, ok := v["insert_line"].(int); ok {
		f.req.InsertLine = &n
	}
	f.req.ViewRange, _ = v["view_range"].([]int)
	return f, nil
}

// fileEditor is FileEditorExecutor: the editor's text, or its error text
// as an error observation.
func (t *Toolbox) fileEditor(ctx context.Context, args *fileEditorArgs) (*Observation, error) {
	res, err := t.editor.Execute(ctx, args.req)
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
