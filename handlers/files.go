package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

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

// filesState is the session's file side: the workspace confined to the
// roots, the OHEditor-compatible editor over it, the documents the client
// has open, and the watcher.
type filesState struct {
	fs     *workspace.FS
	editor *editor.Editor
	docs   *openDocuments

	watchCancel context.CancelFunc
	watchReady  chan struct{} // closed once the watch is up, or has failed
	watchMu     sync.Mutex
	watchState  string // "starting", "watching", "failed", "stopped"
	watchErr    error
	watchSetup  time.Duration
	watcher     *workspace.Watcher
}

// watchReadyWait bounds how long a mutating call waits for the watcher to
// finish its initial walk, so the agent's first change of a session is
// reported like every later one.
const watchReadyWait = 2 * time.Second

// startFiles opens the session's workspace once the roots are known. The
// watcher walks the tree on a goroutine: initialize does not wait for it.
func (h *Handlers) startFiles(roots []string) error {
	r, err := workspace.NewRoots(roots)
	if err != nil {
		return err
	}
	docs := &openDocuments{byPath: map[string]docRef{}}
	fsys := workspace.New(r, workspace.Options{})
	if h.Capabilities().ApplyEdit {
		fsys.SetBufferEditor(&clientBuffers{h: h, docs: docs})
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &filesState{
		fs:          fsys,
		editor:      editor.New(fsys, editor.Options{RequireAbsolutePaths: false}),
		docs:        docs,
		watchCancel: cancel,
		watchReady:  make(chan struct{}),
		watchState:  "starting",
	}
	h.mu.Lock()
	old := h.files
	h.files = s
	h.mu.Unlock()
	if old != nil {
		old.watchCancel() // an initialize that failed after startFiles is being retried
	}
	go s.watch(ctx, h)
	return nil
}

// watch runs the watcher; changes go to the client as fs/did_change.
func (s *filesState) watch(ctx context.Context, h *Handlers) {
	start := time.Now()
	w, err := s.fs.Watch(ctx, workspace.WatchOptions{Logger: h.log}, func(changes []workspace.Change) {
		out := make([]fileChange, len(changes))
		for i, c := range changes {
			out[i] = fileChange{Path: c.Path, Type: c.Type, Source: c.Source}
		}
		if err := h.conn.Notify(ctx, "fs/did_change", &didChangeFilesParams{Changes: out}); err != nil {
			h.log.Debug("cannot send fs/did_change", "error", err)
		}
	})
	s.watchMu.Lock()
	s.watchSetup = time.Since(start)
	switch {
	case err != nil:
		s.watchState, s.watchErr = "failed", err
		h.log.Warn("file watching is off: cannot watch the workspace", "error", err)
	case ctx.Err() != nil:
		s.watchState = "stopped"
	default:
		s.watchState, s.watcher = "watching", w
		h.log.Debug("watching the workspace", "setup", s.watchSetup)
	}
	s.watchMu.Unlock()
	close(s.watchReady)
}

// awaitWatch lets a mutating call wait, briefly, for the watcher's initial
// walk, so that the change it makes is seen by the watcher.
func (s *filesState) awaitWatch(ctx context.Context) {
	select {
	case <-s.watchReady:
		return
	default:
	}
	t := time.NewTimer(watchReadyWait)
	defer t.Stop()
	select {
	case <-s.watchReady:
	case <-t.C:
	case <-ctx.Done():
	}
}

// stopFiles stops watching.
func (h *Handlers) stopFiles(ctx context.Context) {
	s := h.filesSession()
	if s == nil {
		return
	}
	s.watchCancel()
	select {
	case <-s.watchReady:
	case <-ctx.Done():
		return
	}
	s.watchMu.Lock()
	w := s.watcher
	s.watchState = "stopped"
	s.watchMu.Unlock()
	if w != nil {
		select {
		case <-w.Done():
		case <-ctx.Done():
		}
	}
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
	s.awaitWatch(ctx)
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
	s, err := h.session()
	if err != nil {
		return nil, err
	}
	if p.Wait {
		select {
		case <-s.watchReady:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	res := &watchStatusResult{State: s.watchState}
	if s.watchState != "starting" {
		ms := s.watchSetup.Milliseconds()
		res.SetupMs = &ms
	}
	if s.watchErr != nil {
		res.Error = s.watchErr.Error()
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
