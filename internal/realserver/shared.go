package realserver

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// A real server takes 10 to 40 s to start, so the tests of a package share
// one per lock: each makes its own conversations, with its own scripted
// model and workspace, and none changes the server's settings.

var shared struct {
	mu      sync.Mutex
	servers map[string]*sharedServer
}

type sharedServer struct {
	once sync.Once
	srv  *Server
	err  error
	env  string // the options' Env it was started with, for the check
}

// Shared is the test binary's one server of the lock, started by the
// first test that asks; StopShared, from TestMain, ends it. It skips or
// fails the test as Need does when the lock is not installed, and fails
// every test that asks when it could not start. A failing test prints
// the end of the server's log.
//
//	func TestMain(m *testing.M) {
//		os.Exit(func() int { defer realserver.StopShared(); return m.Run() }())
//	}
//
// o, when given, is how the server starts (its Env: a package whose tests
// need OH_MAX_CONCURRENT_RUNS, say); every test of the package must then
// ask with the same, or the one that differs fails.
func Shared(t testing.TB, lock string, o ...Options) *Server {
	t.Helper()
	var opts Options
	if len(o) > 0 {
		opts = o[0]
	}
	venv := Need(t, lock)
	shared.mu.Lock()
	if shared.servers == nil {
		shared.servers = map[string]*sharedServer{}
	}
	s := shared.servers[lock]
	if s == nil {
		s = &sharedServer{}
		shared.servers[lock] = s
	}
	shared.mu.Unlock()
	env := strings.Join(opts.Env, "\x00")
	s.once.Do(func() {
		s.env = env
		s.srv, s.err = Launch(venv, opts)
		if s.err == nil {
			t.Logf("%s started in %v, for this package's tests", lock, s.srv.Startup.Round(time.Millisecond))
		}
	})
	if s.err != nil {
		t.Fatal(s.err)
	}
	if s.env != env {
		t.Fatalf("the shared agent-server %s was started with the environment %q; this test asks for %q: ask with the same options in the whole package", lock, s.env, env)
	}
	srv := s.srv
	select {
	case <-srv.Exited():
		t.Fatalf("the shared agent-server %s has ended; its log:\n%s", lock, tail(srv.Log()))
	default:
	}
	before := len(srv.Log())
	t.Cleanup(func() {
		if t.Failed() {
			if log := srv.Log(); len(log) > before {
				t.Logf("the shared agent-server's log during the test:\n%s", tail(log[before:]))
			}
		}
	})
	return srv
}

// StopShared ends the servers Shared started.
func StopShared() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	for _, s := range shared.servers {
		if s.srv != nil {
			s.srv.Stop()
		}
	}
	shared.servers = nil
}
