package handlers

import (
	"context"

	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/session"
)

// The edit/* methods: OpenHands' file editor (OHEditor's view, create,
// str_replace, insert and undo_edit) through the session. Results carry
// OHEditor's text in output; failures carry it in the error message.
// Relative paths are taken relative to the first workspace root.

type editResult struct {
	Output  string  `json:"output"`            // OHEditor's text, byte for byte
	Diff    string  `json:"diff"`              // unified diff of the change; "" for view
	Version string  `json:"version"`           // the file's version afterwards; "" for directories
	Content *string `json:"content,omitempty"` // edit/undo: the restored text
}

func toEditResult(r *session.EditResult) *editResult {
	return &editResult{Output: r.Output, Diff: r.Diff, Version: r.Version}
}

type editViewParams struct {
	Path      string `json:"path"`
	ViewRange []int  `json:"viewRange"`
}

func (h *Handlers) editView(ctx context.Context, p *editViewParams) (*editResult, error) {
	if err := requirePath("path", p.Path); err != nil {
		return nil, err
	}
	s, err := h.session()
	if err != nil {
		return nil, err
	}
	r, err := s.View(ctx, p.Path, p.ViewRange)
	if err != nil {
		return nil, err
	}
	return toEditResult(r), nil
}

type editCreateParams struct {
	Path     string  `json:"path"`
	FileText *string `json:"fileText"`
}

func (h *Handlers) editCreate(ctx context.Context, p *editCreateParams) (*editResult, error) {
	if err := requirePath("path", p.Path); err != nil {
		return nil, err
	}
	if p.FileText == nil {
		return nil, rpc.InvalidParams("fileText", "a string (the content of the new file)")
	}
	s, err := h.session()
	if err != nil {
		return nil, err
	}
	r, err := s.Create(ctx, p.Path, *p.FileText)
	if err != nil {
		return nil, err
	}
	return toEditResult(r), nil
}

type editStrReplaceParams struct {
	Path            string  `json:"path"`
	OldStr          *string `json:"oldStr"`
	NewStr          *string `json:"newStr"` // absent deletes oldStr, as in OHEditor
	ExpectedVersion string  `json:"expectedVersion"`
}

func (h *Handlers) editStrReplace(ctx context.Context, p *editStrReplaceParams) (*editResult, error) {
	if err := requirePath("path", p.Path); err != nil {
		return nil, err
	}
	if p.OldStr == nil {
		return nil, rpc.InvalidParams("oldStr", "a string (the text to replace, which must occur exactly once)")
	}
	s, err := h.session()
	if err != nil {
		return nil, err
	}
	r, err := s.StrReplace(ctx, p.Path, p.OldStr, p.NewStr, p.ExpectedVersion)
	if err != nil {
		return nil, err
	}
	return toEditResult(r), nil
}

type editInsertParams struct {
	Path            string  `json:"path"`
	InsertLine      *int    `json:"insertLine"`
	NewStr          *string `json:"newStr"`
	ExpectedVersion string  `json:"expectedVersion"`
}

func (h *Handlers) editInsert(ctx context.Context, p *editInsertParams) (*editResult, error) {
	if err := requirePath("path", p.Path); err != nil {
		return nil, err
	}
	if p.InsertLine == nil {
		return nil, rpc.InvalidParams("insertLine", "an integer (the line after which to insert; 0 inserts at the top)")
	}
	if p.NewStr == nil {
		return nil, rpc.InvalidParams("newStr", "a string (the text to insert)")
	}
	s, err := h.session()
	if err != nil {
		return nil, err
	}
	r, err := s.Insert(ctx, p.Path, *p.InsertLine, *p.NewStr, p.ExpectedVersion)
	if err != nil {
		return nil, err
	}
	return toEditResult(r), nil
}

type editUndoParams struct {
	Path string `json:"path"`
}

func (h *Handlers) editUndo(ctx context.Context, p *editUndoParams) (*editResult, error) {
	if err := requirePath("path", p.Path); err != nil {
		return nil, err
	}
	s, err := h.session()
	if err != nil {
		return nil, err
	}
	r, err := s.Undo(ctx, p.Path)
	if err != nil {
		return nil, err
	}
	res := toEditResult(r)
	res.Content = &r.Text
	return res, nil
}
