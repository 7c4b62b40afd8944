package session

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/oh-bridge/oh-bridge/editor"
	"github.com/oh-bridge/oh-bridge/ohactions"
)

// v0Actions is OpenHands' V0 dialect in this session, made on the first
// action: most sessions (every MCP and ACP one) never see a V0 action.
type v0Actions struct {
	mu     sync.Mutex
	rt     *ohactions.Runtime
	closed bool
}

// ExecuteAction runs one OpenHands V0 action dict and answers the
// observation OpenHands' own runtime gave. Its shell is mirrored like the
// pool's, as terminal "oh-agent", and its edits share the session's undo
// history.
func (s *Session) ExecuteAction(ctx context.Context, action json.RawMessage) (*ohactions.Observation, error) {
	rt, err := s.v0Runtime()
	if err != nil {
		return nil, err
	}
	return rt.Execute(ctx, action)
}

func (s *Session) v0Runtime() (*ohactions.Runtime, error) {
	s.v0.mu.Lock()
	defer s.v0.mu.Unlock()
	if s.v0.closed {
		return nil, errClosed
	}
	if s.v0.rt == nil {
		rt, err := ohactions.New(ohactions.Options{
			FS:           s.fs,
			Editor:       s.editor.With(editor.Options{RequireAbsolutePaths: true}),
			OnShellEvent: s.terminalEvent,
			Logger:       s.opts.Logger,
		})
		if err != nil {
			return nil, err
		}
		s.v0.rt = rt
	}
	return s.v0.rt, nil
}

func (v *v0Actions) close() error {
	v.mu.Lock()
	rt := v.rt
	v.closed = true
	v.mu.Unlock()
	if rt == nil {
		return nil
	}
	return rt.Close()
}
