package shellint

import (
	"context"
	"log/slog"
	"sort"
	"strconv"
	"sync"
)

// DefaultLimit is how many live terminals a Pool allows by default.
const DefaultLimit = 8

// PoolOptions configure a Pool.
type PoolOptions struct {
	// Limit bounds live (not dead) terminals; 0 means DefaultLimit.
	Limit int
	// Defaults are the Options every terminal starts from (Shell, Env,
	// sizes, timeouts, output caps); OpenOptions override per terminal.
	Defaults Options
	// OnEvent receives every terminal's events (Event.TerminalID says
	// which), from the first byte of each terminal.
	OnEvent func(Event)
	Logger  *slog.Logger
}

// OpenOptions are the per-terminal choices a client makes.
type OpenOptions struct {
	Cwd, Shell, Name string
	Env              map[string]string
	Cols, Rows       int
}

// Pool numbers terminals ("t1", "t2", ...), hands idle ones out for runs
// that name no terminal, and closes them all on shutdown.
type Pool struct {
	opts PoolOptions
	log  *slog.Logger

	mu     sync.Mutex
	next   int
	terms  map[string]*Terminal
	closed bool
}

// NewPool returns an empty pool.
func NewPool(o PoolOptions) *Pool {
	if o.Limit <= 0 {
		o.Limit = DefaultLimit
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Pool{opts: o, log: log.With("component", "shellint"), terms: map[string]*Terminal{}}
}

// Open starts a new terminal and waits until it is ready.
func (p *Pool) Open(ctx context.Context, o OpenOptions) (*Terminal, error) {
	s, err := p.create(o, false)
	if err != nil {
		return nil, err
	}
	return p.startCreated(ctx, s)
}

// create registers a terminal in "starting" state, counting it against the
// limit before its (slow) start so concurrent opens cannot overshoot.
func (p *Pool) create(o OpenOptions, reserved bool) (*Terminal, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, &PoolClosedError{}
	}
	p.pruneLocked()
	if busy := p.liveLocked(); len(busy) >= p.opts.Limit {
		return nil, &LimitError{Limit: p.opts.Limit, Terminals: busy}
	}
	so := p.opts.Defaults
	p.next++
	so.ID = "t" + strconv.Itoa(p.next)
	so.Name = o.Name
	if o.Cwd != "" {
		so.Cwd = o.Cwd
	}
	if o.Shell != "" {
		so.Shell = o.Shell
	}
	if o.Cols != 0 {
		so.Cols = o.Cols
	}
	if o.Rows != 0 {
		so.Rows = o.Rows
	}
	if len(o.Env) > 0 {
		env := map[string]string{}
		for k, v := range p.opts.Defaults.Env {
			env[k] = v
		}
		for k, v := range o.Env {
			env[k] = v
		}
		so.Env = env
	}
	if so.Logger == nil {
		so.Logger = p.opts.Logger
	}
	so.OnEvent = p.opts.OnEvent
	s, err := newTerminal(so)
	if err != nil {
		return nil, err
	}
	s.reserved = reserved
	p.terms[s.id] = s
	return s, nil
}

func (p *Pool) startCreated(ctx context.Context, s *Terminal) (*Terminal, error) {
	if err := s.start(ctx); err != nil {
		p.mu.Lock()
		delete(p.terms, s.id)
		p.mu.Unlock()
		s.Close()
		return nil, err
	}
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		s.Close()
		return nil, &PoolClosedError{}
	}
	return s, nil
}

// liveLocked lists terminals that count against the limit.
func (p *Pool) liveLocked() []Info {
	var out []Info
	for _, s := range p.sortedLocked() {
		if in := s.Info(); in.State != StateDead {
			out = append(out, in)
		}
	}
	return out
}

// pruneLocked forgets dead terminals whose last result has been handed
// out, so a crashed shell does not linger in listings forever.
func (p *Pool) pruneLocked() {
	for id, s := range p.terms {
		if s.deadAndDelivered() {
			delete(p.terms, id)
			go s.Close()
		}
	}
}

func (p *Pool) sortedLocked() []*Terminal {
	out := make([]*Terminal, 0, len(p.terms))
	for _, s := range p.terms {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		a, _ := strconv.Atoi(out[i].id[1:])
		b, _ := strconv.Atoi(out[j].id[1:])
		return a < b
	})
	return out
}

// Get returns the terminal with id.
func (p *Pool) Get(id string) (*Terminal, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, &PoolClosedError{}
	}
	s, ok := p.terms[id]
	if !ok {
		return nil, &NotFoundError{TerminalID: id}
	}
	return s, nil
}

// List returns all terminals, in id order.
func (p *Pool) List() []Info {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Info
	for _, s := range p.sortedLocked() {
		out = append(out, s.Info())
	}
	return out
}

// Reservation is a terminal set aside for one command; no other Acquire
// or Run can take it until the command is submitted or it is released.
type Reservation struct {
	s    *Terminal
	once sync.Once
}

// Terminal returns the reserved terminal.
func (r *Reservation) Terminal() *Terminal { return r.s }

// Run submits command on the reserved terminal, consuming the reservation.
func (r *Reservation) Run(ctx context.Context, command string, o RunOptions) (*Result, error) {
	c, err := r.s.submit(command, o.Cwd, true)
	r.Release()
	if err != nil {
		return nil, err
	}
	return r.s.await(ctx, c, o)
}

// Release gives the terminal back unused.
func (r *Reservation) Release() {
	r.once.Do(func() {
		r.s.mu.Lock()
		r.s.reserved = false
		r.s.mu.Unlock()
	})
}

// Acquire reserves a terminal for a command that names none: an idle one,
// preferring one already in o.Cwd and with the same shell, else a new one
// if the limit allows, else a LimitError listing what runs where. Terminals
// opened with their own environment are only reused when o.Env is empty.
func (p *Pool) Acquire(ctx context.Context, o OpenOptions) (*Reservation, error) {
	if err := platformError(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, &PoolClosedError{}
	}
	p.pruneLocked()
	var fallback *Terminal
	if len(o.Env) == 0 {
		wantShell := ""
		if o.Shell != "" {
			kind, _, err := resolveShell(o.Shell)
			if err != nil {
				p.mu.Unlock()
				return nil, err
			}
			wantShell = kind
		}
		for _, s := range p.sortedLocked() {
			if wantShell != "" && s.shellKind != wantShell {
				continue
			}
			if s.tryReserve(o.Cwd) {
				if fallback != nil {
					fallback.releaseReserve()
				}
				p.mu.Unlock()
				return &Reservation{s: s}, nil
			}
			if fallback == nil && s.tryReserve("") {
				fallback = s
			}
		}
	}
	p.mu.Unlock()
	if fallback != nil {
		return &Reservation{s: fallback}, nil
	}
	s, err := p.create(o, true)
	if err != nil {
		return nil, err
	}
	if _, err := p.startCreated(ctx, s); err != nil {
		return nil, err
	}
	return &Reservation{s: s}, nil
}

// RunRequest is a command for Pool.Run.
type RunRequest struct {
	// TerminalID picks the terminal; "" lets Acquire choose one.
	TerminalID string
	Command    string
	// Open applies when a new terminal is opened; Open.Cwd is also where
	// the command runs (a reused terminal changes there first).
	Open    OpenOptions
	Options RunOptions
}

// Run runs a command on the named terminal, or on an acquired one.
func (p *Pool) Run(ctx context.Context, req RunRequest) (*Result, error) {
	o := req.Options
	if o.Cwd == "" {
		o.Cwd = req.Open.Cwd
	}
	if req.TerminalID != "" {
		s, err := p.Get(req.TerminalID)
		if err != nil {
			return nil, err
		}
		return s.Run(ctx, req.Command, o)
	}
	r, err := p.Acquire(ctx, req.Open)
	if err != nil {
		return nil, err
	}
	if o.Cwd == r.s.Cwd() {
		o.Cwd = ""
	}
	return r.Run(ctx, req.Command, o)
}

// CloseTerminal closes one terminal and forgets it.
func (p *Pool) CloseTerminal(id string) error {
	p.mu.Lock()
	s, ok := p.terms[id]
	delete(p.terms, id)
	p.mu.Unlock()
	if !ok {
		return &NotFoundError{TerminalID: id}
	}
	return s.Close()
}

// Close closes every terminal; the pool cannot be used afterwards.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	terms := p.terms
	p.terms = map[string]*Terminal{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, 0, len(terms))
	var emu sync.Mutex
	for _, s := range terms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Close(); err != nil {
				emu.Lock()
				errs = append(errs, err)
				emu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}
