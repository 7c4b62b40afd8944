package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/oh-bridge/oh-bridge/editor"
	"github.com/oh-bridge/oh-bridge/shellint"
	"github.com/oh-bridge/oh-bridge/workspace"
)

// MaxTerminals bounds the terminals a person or agent opens in the pool.
const MaxTerminals = 8

// Options configure a Session. The functions are how the session reaches
// the person's editor; each may be nil when there is none.
type Options struct {
	// Roots are the workspace roots (absolute, existing directories).
	Roots  []string
	Logger *slog.Logger
	// Buffers lands edits of files open in the editor in its buffers.
	Buffers workspace.BufferEditor
	// Files, when the editor reads and writes text files itself (an ACP
	// client), is where the agents' reads and writes go.
	Files *workspace.TextFileHost
	// OnTerminalEvent receives every terminal's raw output and state
	// changes: the pool's, the V0 agent shell's and each agent's.
	OnTerminalEvent func(shellint.Event)
	// OnFilesChanged receives changes under the roots; without it the
	// session does not watch.
	OnFilesChanged func([]workspace.Change)
	// AskPermission puts an action to the person. Without it every action
	// is allowed.
	AskPermission func(context.Context, PermissionRequest) (PermissionOutcome, error)
	// ShowFile shows a file of the workspace to the person in their
	// editor (an absolute path, a line from 1 or 0); nil when the face
	// has no editor. A tool that shows a file checks its path first.
	ShowFile func(ctx context.Context, path string, line int) error
	// ShellMode and Env apply to the agents' shells (see shellint.Options).
	ShellMode shellint.Mode
	Env       map[string]string
}

// Session is one workspace's state.
type Session struct {
	opts   Options
	log    *slog.Logger
	roots  *workspace.Roots
	fs     *workspace.FS
	editor *editor.Editor
	pool   *shellint.Pool
	v0     v0Actions
	watch  *watching
	perms  permissions
	obs    observers
	unread unreadOutput

	callIDs atomic.Int64

	mu        sync.Mutex
	hold      hold // why tool calls are held, and until when (HoldCalls)
	agents    map[*Agent]struct{}
	nextAgent int
	closed    bool
}

// New opens a session over the roots. It starts no process; watching, if
// asked for, walks the tree in the background.
func New(o Options) (*Session, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	roots, err := workspace.NewRoots(o.Roots)
	if err != nil {
		return nil, err
	}
	fs := workspace.New(roots, workspace.Options{Logger: o.Logger})
	if o.Buffers != nil {
		fs.SetBufferEditor(o.Buffers)
	}
	if o.Files != nil {
		fs.SetTextFileHost(o.Files)
	}
	s := &Session{
		opts:   o,
		log:    o.Logger.With("component", "session"),
		roots:  roots,
		fs:     fs,
		editor: editor.New(fs, editor.Options{}),
		agents: map[*Agent]struct{}{},
	}
	s.pool = shellint.NewPool(shellint.PoolOptions{
		Limit:    MaxTerminals,
		Defaults: shellint.Options{Cwd: roots.First()},
		Logger:   o.Logger,
		OnEvent:  s.terminalEvent,
	})
	s.watch = startWatching(s, o.OnFilesChanged)
	return s, nil
}

// Roots are the workspace roots, first root first.
func (s *Session) Roots() []string { return s.roots.List() }

// Close ends everything the session runs: agents' terminals, the pool,
// the V0 runtime and watching, in parallel, within ctx.
func (s *Session) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	agents := make([]*Agent, 0, len(s.agents))
	for a := range s.agents {
		agents = append(agents, a)
	}
	s.mu.Unlock()

	var wg sync.WaitGroup
	var errMu sync.Mutex
	var errs []error
	run := func(name string, f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(); err != nil {
				errMu.Lock()
				errs = append(errs, fmt.Errorf("closing %s: %w", name, err))
				errMu.Unlock()
			}
		}()
	}
	for _, a := range agents {
		run("an agent's terminal", func() error { a.Close(); return nil })
	}
	run("the terminals", s.pool.Close)
	run("the V0 actions' shells", s.v0.close)
	run("file watching", func() error { s.watch.stop(ctx); return nil })
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return errors.New("the session's processes did not end before the shutdown deadline")
	}
	// Windows keeps a root folder from being renamed or removed while it
	// is held open.
	s.roots.Close()
	return errors.Join(errs...)
}

// errClosed answers a call made after Close.
var errClosed = &ClosedError{}

// ClosedError reports a call made after the session closed (the editor
// shut the bridge down).
type ClosedError struct{}

func (*ClosedError) Error() string {
	return "the workspace session is closed; the bridge is shutting down"
}

// Kind returns "session_closed".
func (*ClosedError) Kind() string { return "session_closed" }
