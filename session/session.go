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

// The bounds a session has unless its Options say otherwise; Capabilities
// reports the ones a session has.
const (
	DefaultMaxTerminals   = 8
	DefaultMaxFileSize    = workspace.DefaultMaxFileSize
	DefaultMaxUndoPerFile = editor.DefaultMaxHistory
)

// Options configure a Session, in the session's own words: New builds the
// domain's objects (roots, file host, shells) from them, so no face does.
// The functions are how the session reaches the person's editor; each may
// be nil when there is none.
type Options struct {
	// Roots are the directories offered as workspace roots, each with
	// where the offer came from; New chooses among them as ChooseRoots
	// does, so every face checks them alike and its errors name the
	// setting to fix.
	Roots  []RootCandidate
	Logger *slog.Logger
	// Buffers lands edits of files open in the editor in its buffers.
	Buffers BufferEditor
	// ReadText and WriteText, when the editor reads and writes text files
	// itself (an ACP client offering fs/read_text_file and
	// fs/write_text_file), are where the agents' reads and writes go, so
	// they see and land in its unsaved buffers. Either may be nil: that
	// side goes to the disk. The paths they get are resolved and inside
	// the roots.
	ReadText  func(ctx context.Context, path string) (string, error)
	WriteText func(ctx context.Context, path, content string) error
	// OnTerminalEvent receives every terminal's raw output and state
	// changes: the pool's, the V0 agent shell's and each agent's.
	OnTerminalEvent func(TerminalEvent)
	// OnFilesChanged receives changes under the roots; without it the
	// session does not watch.
	OnFilesChanged func([]FileChange)
	// AskPermission puts an action to the person. Without it every action
	// is allowed.
	AskPermission func(context.Context, PermissionRequest) (PermissionOutcome, error)
	// ShowFile shows a file of the workspace to the person in their
	// editor (an absolute path, a line from 1 or 0); nil when the face
	// has no editor. A tool that shows a file checks its path first.
	ShowFile func(ctx context.Context, path string, line int) error
	// ShellMode and Env apply to the agents' shells: "" loads the
	// person's rc file, ShellNoRC skips it.
	ShellMode ShellMode
	Env       map[string]string
	// MaxFileSize caps the files read or written whole, in bytes;
	// MaxUndoPerFile the undo steps kept per file; MaxTerminals the live
	// terminals of the pool. 0 takes the Default.
	MaxFileSize    int64
	MaxUndoPerFile int
	MaxTerminals   int
}

// Session is one workspace's state.
type Session struct {
	opts   Options
	log    *slog.Logger
	chosen []string // the roots as chosen, before symlinks are resolved
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
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.MaxUndoPerFile <= 0 {
		o.MaxUndoPerFile = DefaultMaxUndoPerFile
	}
	if o.MaxTerminals <= 0 {
		o.MaxTerminals = DefaultMaxTerminals
	}
	chosen, err := ChooseRoots(o.Roots...)
	if err != nil {
		return nil, err
	}
	roots, err := workspace.NewRoots(chosen)
	if err != nil {
		return nil, err
	}
	fs := workspace.New(roots, workspace.Options{Logger: o.Logger, MaxFileSize: o.MaxFileSize})
	if o.Buffers != nil {
		fs.SetBufferEditor(o.Buffers)
	}
	if o.ReadText != nil || o.WriteText != nil {
		fs.SetTextFileHost(&workspace.TextFileHost{Read: o.ReadText, Write: o.WriteText, Logger: o.Logger})
	}
	s := &Session{
		opts:   o,
		log:    o.Logger.With("component", "session"),
		chosen: chosen,
		roots:  roots,
		fs:     fs,
		editor: editor.New(fs, editor.Options{MaxHistory: o.MaxUndoPerFile}),
		agents: map[*Agent]struct{}{},
	}
	s.pool = shellint.NewPool(shellint.PoolOptions{
		Limit:    o.MaxTerminals,
		Defaults: shellint.Options{Cwd: roots.First()},
		Logger:   o.Logger,
		OnEvent:  s.terminalEvent,
	})
	s.watch = startWatching(s, o.OnFilesChanged)
	return s, nil
}

// Roots are the workspace roots, first root first, symlinks resolved: the
// spelling of every path the session reports.
func (s *Session) Roots() []string { return s.roots.List() }

// ChosenRoots are the roots as New chose them from the candidates:
// absolute, repeats dropped, symlinks not resolved (the folders as the
// person named them).
func (s *Session) ChosenRoots() []string { return append([]string(nil), s.chosen...) }

// Capabilities are a session's real bounds, for a face to advertise: what
// this session does, not the package defaults.
type Capabilities struct {
	MaxFileSize    int64 // the largest file read or written whole, in bytes
	MaxUndoPerFile int   // undo steps kept per file
	MaxTerminals   int   // live terminals of the pool
	// Shells are the shells a terminal may be opened with: the ones the
	// bridge supports, not a probe of this machine, so the answer is the
	// same everywhere (opening one that is not installed answers
	// shell_not_found).
	Shells []string
}

// Capabilities reports the session's bounds.
func (s *Session) Capabilities() Capabilities {
	return Capabilities{
		MaxFileSize:    s.fs.MaxFileSize(),
		MaxUndoPerFile: s.opts.MaxUndoPerFile,
		MaxTerminals:   s.opts.MaxTerminals,
		Shells:         shellint.Shells(),
	}
}

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
