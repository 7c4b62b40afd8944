package handlers

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/oh-bridge/oh-bridge/editor"
	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/workspace"
)

// fileMethods are the fs/*, edit/* and textDocument/* methods.
//
// Reads are concurrent. Everything that writes (and may call the client's
// workspace/applyEdit) is per-path, keyed by the resolved paths it touches,
// so "a.txt" and "/root/a.txt" wait for each other. The textDocument/*
// notifications are inline: they keep their arrival order and only update
// the overlay of open buffers.
func (h *Handlers) fileMethods() map[string]rpc.Method {
	path := h.pathKeys("path")
	return map[string]rpc.Method{
		"fs/read_text_file":  {Class: rpc.Concurrent, Handle: handle(h.readTextFile)},
		"fs/write_text_file": {Class: rpc.PerPath, Handle: handle(h.writeTextFile), Keys: path},
		"fs/list_directory":  {Class: rpc.Concurrent, Handle: handle(h.listDirectory)},
		"fs/stat":            {Class: rpc.Concurrent, Handle: handle(h.stat)},
		"fs/mkdir":           {Class: rpc.PerPath, Handle: handle(h.mkdir), Keys: path},
		"fs/delete":          {Class: rpc.PerPath, Handle: handle(h.delete), Keys: path},
		"fs/move":            {Class: rpc.PerPath, Handle: handle(h.move), Keys: h.pathKeys("from", "to")},
		"fs/watch_status":    {Class: rpc.Concurrent, Handle: handle(h.watchStatus)},

		"edit/view":        {Class: rpc.Concurrent, Handle: handle(h.editView)},
		"edit/create":      {Class: rpc.PerPath, Handle: handle(h.editCreate), Keys: path},
		"edit/str_replace": {Class: rpc.PerPath, Handle: handle(h.editStrReplace), Keys: path},
		"edit/insert":      {Class: rpc.PerPath, Handle: handle(h.editInsert), Keys: path},
		"edit/undo":        {Class: rpc.PerPath, Handle: handle(h.editUndo), Keys: path},

		"textDocument/didOpen":            {Class: rpc.Inline, Handle: handle(h.didOpen)},
		"textDocument/didChange":          {Class: rpc.Inline, Handle: handle(h.didChange)},
		"textDocument/didClose":           {Class: rpc.Inline, Handle: handle(h.didClose)},
		"workspace/didChangeWatchedFiles": {Class: rpc.Inline, Handle: handle(h.didChangeWatchedFiles)},
	}
}

// filesState is the session's file side as the handlers see it: the
// workspace and editor of the session, and the documents the client has
// open (with the URIs and versions workspace/applyEdit must name).
type filesState struct {
	fs     *workspace.FS
	editor *editor.Editor
	docs   *openDocuments
}

// fileCapabilities are merged into initialize's result capabilities.
func (h *Handlers) fileCapabilities() map[string]any {
	return map[string]any{
		"fs": map[string]any{
			"read": true, "write": true, "list": true, "stat": true,
			"mkdir": true, "delete": true, "move": true, "watch": true,
			"maxFileSize": workspace.DefaultMaxFileSize,
		},
		"edit": map[string]any{
			"view": true, "strReplace": true, "insert": true, "create": true, "undo": true,
			"maxUndoPerFile": editor.DefaultMaxHistory,
		},
		// LSP's TextDocumentSyncOptions: open/close and incremental changes
		// (2); full-text changes (a change without a range) are accepted too.
		"textDocumentSync": map[string]any{"openClose": true, "change": 2},
	}
}

// filesSession returns the state startFiles made, or nil before initialize.
func (h *Handlers) filesSession() *filesState {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.files
}

// session is filesSession for handlers, which only run after initialize.
func (h *Handlers) session() (*filesState, error) {
	s := h.filesSession()
	if s == nil {
		return nil, errors.New("the workspace is not open: initialize first")
	}
	return s, nil
}

// mutationSession is session for calls that change files: it first lets
// the watcher finish its initial walk, so the change is reported.
func (h *Handlers) mutationSession(ctx context.Context) (*filesState, error) {
	s, err := h.session()
	if err != nil {
		return nil, err
	}
	h.workspaceSession().AwaitWatch(ctx)
	return s, nil
}

// pathKeys returns a per-path Keys function: the named string params,
// resolved through the roots. A param that does not resolve gives no keys;
// the handler then reports the error.
func (h *Handlers) pathKeys(fields ...string) func(json.RawMessage) []string {
	return func(raw json.RawMessage) []string {
		s := h.filesSession()
		if s == nil {
			return nil
		}
		var params map[string]json.RawMessage
		if json.Unmarshal(raw, &params) != nil {
			return nil
		}
		keys := make([]string, 0, len(fields))
		for _, f := range fields {
			var p string
			if json.Unmarshal(params[f], &p) != nil || p == "" {
				return nil
			}
			resolved, err := s.fs.Roots().Resolve(p)
			if err != nil {
				return nil
			}
			keys = append(keys, resolved)
		}
		return keys
	}
}

// requirePath reports an absent or empty path param as -32602.
func requirePath(field, value string) error {
	if value == "" {
		return rpc.InvalidParams(field, "a non-empty path (absolute, or relative to the first workspace root)")
	}
	return nil
}

type watchStatusParams struct {
	// Wait makes the call answer only once the initial walk is over.
	Wait bool `json:"wait"`
}

type watchStatusResult struct {
	State   string `json:"state"` // starting, watching, failed, stopped
	SetupMs *int64 `json:"setupMs,omitempty"`
	Error   string `json:"error,omitempty"`
}

// watchStatus tells whether file watching is up; with wait it answers once
// the watcher has walked the tree (or failed).
func (h *Handlers) watchStatus(ctx context.Context, p *watchStatusParams) (*watchStatusResult, error) {
	if _, err := h.session(); err != nil {
		return nil, err
	}
	st, err := h.workspaceSession().WatchStatus(ctx, p.Wait)
	if err != nil {
		return nil, err
	}
	res := &watchStatusResult{State: st.State}
	if st.State != "starting" {
		ms := st.Setup.Milliseconds()
		res.SetupMs = &ms
	}
	if st.Err != nil {
		res.Error = st.Err.Error()
	}
	return res, nil
}

type fileChange struct {
	Path   string `json:"path"`
	Type   string `json:"type"`   // created, changed, deleted
	Source string `json:"source"` // agent, external
}

type didChangeFilesParams struct {
	Changes []fileChange `json:"changes"`
}
