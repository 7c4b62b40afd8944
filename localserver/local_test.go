//go:build linux

package localserver_test

import (
	"errors"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
	"github.com/oh-bridge/oh-bridge/localserver"
)

// TestLocalRemembersWhatItFound: the server a search found is the one in
// use, and its key goes to a request that names its URL and no key (with
// or without a trailing slash); a key the request gives is its own.
func TestLocalRemembersWhatItFound(t *testing.T) {
	keyed := agentservertest.Start(t, "--session-api-key", "sekrit-env")
	l := &localserver.Local{Find: localserver.Options{
		Getenv:     env(map[string]string{"OH_BRIDGE_SERVER_URL": keyed.URL, "OH_BRIDGE_SESSION_API_KEY": "sekrit-env"}),
		Home:       t.TempDir(),
		CanvasURLs: []string{},
		DefaultURL: closedURL(t),
	}}
	if f := l.Current(); f != nil {
		t.Fatalf("before a search: %+v", f)
	}
	if k := l.KeyFor(keyed.URL, ""); k != "" {
		t.Fatalf("a key before the search: %q", k)
	}
	f, _, err := l.Search(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if c := l.Current(); c == nil || c.URL != f.URL || c.Source != localserver.FromEnvironment {
		t.Errorf("the server in use: %+v; want %+v", c, f)
	}
	if k := l.KeyFor(keyed.URL+"/", ""); k != "sekrit-env" {
		t.Errorf("the key for %s/: %q", keyed.URL, k)
	}
	if k := l.KeyFor(keyed.URL, "given"); k != "given" {
		t.Errorf("a given key: %q", k)
	}
	if s := l.Stop(); s != nil {
		t.Errorf("Stop with nothing started stopped %s", s.URL)
	}
}

// TestLocalStartsOneAtATime: two starts at once (two ACP sessions' first
// prompts, or two openhands/start_server) start one server, which both
// get; it is the server in use, its key is kept, and Stop ends its
// process and forgets it.
func TestLocalStartsOneAtATime(t *testing.T) {
	dir := fakeAgentServer(t)
	way := localserver.Ways(lookIn(dir), nil)[0]
	l := &localserver.Local{}
	type started struct {
		s     *localserver.Server
		fresh bool
		err   error
	}
	got := make([]started, 2)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			s, fresh, err := l.Start(ctxT(t), way, localserver.StartOptions{Dir: t.TempDir(), Log: &syncWriter{b: &strings.Builder{}}, StateDir: t.TempDir()})
			got[i] = started{s, fresh, err}
		})
	}
	wg.Wait()
	for _, g := range got {
		if g.err != nil {
			t.Fatal(g.err)
		}
		defer g.s.Stop()
	}
	if got[0].s != got[1].s || got[0].fresh == got[1].fresh {
		t.Fatalf("two starts at once: %s and %s (fresh %v, %v); want one server, started once",
			got[0].s.URL, got[1].s.URL, got[0].fresh, got[1].fresh)
	}
	s := got[0].s
	if l.Running() != s {
		t.Errorf("Running: %v", l.Running())
	}
	if c := l.Current(); c == nil || c.URL != s.URL || c.Source != localserver.FromStarted {
		t.Errorf("the server in use: %+v", c)
	}
	if k := l.KeyFor(s.URL, ""); k != s.SessionAPIKey {
		t.Errorf("the started server's key is not kept")
	}
	pid := s.PID()
	if stopped := l.Stop(); stopped != s {
		t.Fatalf("Stop stopped %v", stopped)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the server's process %d is still there after Stop: %v", pid, err)
	}
	if l.Running() != nil || l.Current() != nil {
		t.Errorf("after Stop: running %v, in use %+v", l.Running(), l.Current())
	}
}
