package handlers

import (
	"context"
	"errors"

	"github.com/oh-bridge/oh-bridge/conversation"
	"github.com/oh-bridge/oh-bridge/facekit"
	"github.com/oh-bridge/oh-bridge/session"
	"github.com/oh-bridge/oh-bridge/updates"
)

// startSession opens the workspace's session over the root candidates
// (the session chooses among them), wired to this client as far as it
// declared it can: edits of open documents go to its buffers, terminals
// stream to it, and it is asked before an agent's action runs.
func (h *Handlers) startSession(roots []session.RootCandidate) (*session.Session, error) {
	caps := h.Capabilities()
	docs := &openDocuments{byPath: map[string]docRef{}}
	ts := &termStreams{streams: map[string]*outputStream{}}
	o := session.Options{
		Roots:  roots,
		Logger: h.cfg.Logger,
		OnFilesChanged: func(changes []session.FileChange) {
			out := make([]fileChange, len(changes))
			for i, c := range changes {
				out[i] = fileChange{Path: c.Path, Type: c.Type, Source: c.Source}
			}
			h.notify(context.Background(), "fs/did_change", &didChangeFilesParams{Changes: out})
		},
	}
	if caps.ApplyEdit {
		o.Buffers = &clientBuffers{h: h, docs: docs}
	}
	if caps.TerminalStreaming {
		o.OnTerminalEvent = func(ev session.TerminalEvent) { h.streamEvent(ts, ev) }
	}
	if caps.RequestPermission {
		o.AskPermission = h.askPermission
	}
	o.ShowFile = func(ctx context.Context, path string, line int) error {
		h.notify(ctx, "editor/show_file", &showFileParams{Path: path, Line: line})
		return nil
	}
	sess, err := session.New(o)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	old, oldTerms := h.sess, h.terms
	h.sess, h.docs, h.terms = sess, docs, ts
	h.mu.Unlock()
	if old != nil {
		// An initialize that failed after startSession is being retried.
		oldTerms.stopping.Store(true)
		go old.Close(context.Background())
	}
	return sess, nil
}

// workspaceSession is the session, once initialize made it, or nil.
func (h *Handlers) workspaceSession() *session.Session {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sess
}

// session is the session for methods, which only run after initialize.
func (h *Handlers) session() (*session.Session, error) {
	if s := h.workspaceSession(); s != nil {
		return s, nil
	}
	return nil, errNotInitialized
}

var errNotInitialized = errors.New("the workspace is not open: initialize first")

func (h *Handlers) closeSession(ctx context.Context) {
	sess := h.workspaceSession()
	if sess == nil {
		return
	}
	if err := sess.Close(ctx); err != nil {
		h.log.Warn("closing the session", "error", err)
	}
}

// askPermission puts an action to the person (session.Options.AskPermission):
// a conversation's call is named as the view's card names it, and the
// editor's prompt answers "cancelled" when the person dismisses it, a "no"
// to this action, not the end of anything (facekit.Asker without
// Cancelled).
func (h *Handlers) askPermission(ctx context.Context, req session.PermissionRequest) (session.PermissionOutcome, error) {
	a := facekit.Asker{Ask: h.askClient, Link: func() *conversation.Link { return h.dialing().conversation() }}
	return a.Permission(ctx, req)
}

// askClient puts a question to the editor with ACP's
// session/request_permission, saying which agent asks; the client's modal
// or inline prompt answers.
func (h *Handlers) askClient(ctx context.Context, req session.PermissionRequest, toolCallID string) (session.PermissionOutcome, error) {
	return updates.AskPermission(ctx, h.conn.Call, req, toolCallID, "", req.Agent)
}
