package localserver

import (
	"context"
	"strings"
	"sync"
)

// Local is the agent-server a face's connection found on this machine or
// started, for the editor's bridge (openhands/find_server,
// openhands/start_server) and for ACP (a prompt with no server
// configured) alike: the server in use, the process the bridge started
// (stopped with the connection), and the session keys of the servers
// found, kept here so that a face names a key's source to its client,
// never the key. Its zero value is ready; Find's Trust also checks the
// servers it starts.
type Local struct {
	// Find is Find's options: the config file's server, and the Trust that
	// checks what is found.
	Find Options

	start   sync.Mutex // one start at a time, and Stop after it
	mu      sync.Mutex
	keys    map[string]string // server URL → its session key
	current *Found            // the server found or started last
	started *Server
}

// Search looks for the agent-server the person runs here (Find), and
// remembers the one found: its key (KeyFor) and that it is the server in
// use (Current). It probes loopback ports: a face calls it only when the
// person asks for a conversation.
func (l *Local) Search(ctx context.Context) (*Found, []Tried, error) {
	found, tried, err := Find(ctx, l.Find)
	if err != nil {
		return found, tried, err
	}
	l.mu.Lock()
	l.rememberLocked(found)
	l.mu.Unlock()
	return found, tried, nil
}

// Current is the server found or started last, nil before either.
func (l *Local) Current() *Found {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.current == nil {
		return nil
	}
	f := *l.current
	return &f
}

// Running is the server the bridge started, while its process lives.
func (l *Local) Running() *Server {
	l.mu.Lock()
	s := l.started
	l.mu.Unlock()
	if s == nil {
		return nil
	}
	select {
	case <-s.Done():
		return nil
	default:
		return s
	}
}

// Start starts an agent-server the way given (Start), one at a time: a
// server this connection started that still runs is kept, and returned
// with fresh false. o.Trust is Find's Trust when nil.
func (l *Local) Start(ctx context.Context, w Way, o StartOptions) (s *Server, fresh bool, err error) {
	l.start.Lock()
	defer l.start.Unlock()
	if s := l.Running(); s != nil {
		return s, false, nil
	}
	if o.Trust == nil {
		o.Trust = l.Find.Trust
	}
	s, err = Start(ctx, w, o)
	if err != nil {
		return nil, false, err
	}
	l.mu.Lock()
	l.started = s
	l.rememberLocked(&s.Found)
	l.mu.Unlock()
	return s, true, nil
}

func (l *Local) rememberLocked(f *Found) {
	c := *f
	l.current = &c
	if f.SessionAPIKey == "" {
		return
	}
	if l.keys == nil {
		l.keys = map[string]string{}
	}
	l.keys[f.URL] = f.SessionAPIKey
}

// KeyFor is the key a request that names url should send: the one it
// gives, else the key of a server found or started at url.
func (l *Local) KeyFor(url, given string) string {
	if given != "" {
		return given
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.keys[strings.TrimRight(url, "/")]
}

// Stop stops the server the bridge started, after a start in progress
// ends (its context ends with the connection), and forgets the server in
// use. It returns the server stopped, nil when there was none.
func (l *Local) Stop() *Server {
	l.start.Lock()
	defer l.start.Unlock()
	l.mu.Lock()
	s := l.started
	l.started, l.current = nil, nil
	l.mu.Unlock()
	if s != nil {
		s.Stop()
	}
	return s
}
