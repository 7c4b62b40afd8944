package handlers

import (
	"context"
	"errors"
	"time"

	"github.com/oh-bridge/oh-bridge/session"
	"github.com/oh-bridge/oh-bridge/updates"
	"github.com/oh-bridge/oh-bridge/workspace"
)

// startSession opens the workspace's session once the roots are known,
// wired to this client as far as it declared it can: edits of open
// documents go to its buffers, terminals stream to it, and it is asked
// before an agent's action runs.
func (h *Handlers) startSession(roots []string) error {
	caps := h.Capabilities()
	docs := &openDocuments{byPath: map[string]docRef{}}
	ts := &termStreams{streams: map[string]*outputStream{}}
	o := session.Options{
		Roots:  roots,
		Logger: h.cfg.Logger,
		OnFilesChanged: func(changes []workspace.Change) {
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
		return err
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
	return nil
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

// askPermission puts an action to the person with ACP's
// session/request_permission; the client's modal or inline prompt answers.
// A V1 conversation's call is named as the conversation view shows it.
func (h *Handlers) askPermission(ctx context.Context, req session.PermissionRequest) (session.PermissionOutcome, error) {
	id := req.ToolCallID
	if c := h.dialing().conversation(); c != nil {
		id = c.ToolCallID(ctx, req, time.Second)
	}
	out, err := updates.AskPermission(ctx, h.conn.Call, req, id, "", req.Agent)
	// The editor's prompt answers "cancelled" when the person dismisses
	// it: a "no" to this action, not the end of anything.
	out.Cancelled = false
	return out, err
}
