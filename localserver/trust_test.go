//go:build linux

package localserver_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
	"github.com/oh-bridge/oh-bridge/internal/ohtest/rogue"
	"github.com/oh-bridge/oh-bridge/localserver"
)

// TestFindPassesOverAnotherUsersServer: a server of another user on Agent
// Canvas's port and on the default port answers as agent-server 1.49.1;
// Find sends it nothing (not Canvas's key, not the environment's key),
// says who runs it, and takes the person's own server behind it.
func TestFindPassesOverAnotherUsersServer(t *testing.T) {
	r := rogue.Start(t, 0, "1.49.1")
	home := canvasHome(t, "sekrit-canvas")
	e := env(map[string]string{"OH_BRIDGE_SESSION_API_KEY": "sekrit-env"})
	_, tried, err := localserver.Find(ctxT(t), localserver.Options{Getenv: e, Home: home, CanvasURLs: []string{r.URL()}, DefaultURL: r.URL()})
	var nf *localserver.NotFoundError
	if !errors.As(err, &nf) || len(tried) != 2 {
		t.Fatalf("Find: %v, tried %+v", err, tried)
	}
	for _, tr := range tried {
		if tr.Untrusted == nil || tr.Untrusted.Owner.UID != rogue.UID || tr.Untrusted.Kind() != "server_not_trusted" {
			t.Errorf("%s: %+v, want it passed over as another user's", tr.Source, tr)
			continue
		}
		for _, want := range []string{"user nobody (uid 65534)", "process " + itoa(r.PID), "python3", "no key, token or command is sent to it", "oh-bridge trust-server"} {
			if !strings.Contains(tr.Why, want) {
				t.Errorf("%s: the words %q do not say %q", tr.Source, tr.Why, want)
			}
		}
	}
	r.CheckNothingReceived(t, "sekrit-canvas", "sekrit-env")

	// The person's own server on the default port is still found.
	// The stand-in, for speed: what is checked is who owns the socket that
	// listens, and any server of the person's will do; the stand-in starts
	// in a second where the real one takes 10-40 s.
	own := agentservertest.Start(t)
	f, _, err := localserver.Find(ctxT(t), localserver.Options{Getenv: e, Home: t.TempDir(), CanvasURLs: []string{}, DefaultURL: own.URL})
	if err != nil || f.Source != localserver.FromDefaultPort || f.SessionAPIKey != "" {
		t.Fatalf("the person's server: %+v, %v (no key goes to the default port)", f, err)
	}
}

// TestConfirmedServer: once the person confirms the owner shown, the same
// server is found and talked to; a confirmation kept in the choices file
// lasts, and one for another owner confirms nothing.
func TestConfirmedServer(t *testing.T) {
	r := rogue.Start(t, 0, "1.49.1")
	choices := filepath.Join(t.TempDir(), "oh-bridge", "choices.json")
	trust := &localserver.Trust{Choices: &localserver.Choices{Path: choices}}
	opts := localserver.Options{Getenv: env(nil), Home: t.TempDir(), CanvasURLs: []string{}, DefaultURL: r.URL(), Trust: trust}
	if err := trust.Confirm(r.URL(), 1234); err == nil || !strings.Contains(err.Error(), "nothing is confirmed") {
		t.Fatalf("a confirmation for another owner: %v", err)
	}
	if _, _, err := localserver.Find(ctxT(t), opts); err == nil {
		t.Fatal("found before any confirmation")
	}
	if err := trust.Confirm(r.URL(), rogue.UID); err != nil {
		t.Fatal(err)
	}
	f, _, err := localserver.Find(ctxT(t), opts)
	if err != nil || f.URL != r.URL() || f.Version != "1.49.1" {
		t.Fatalf("after confirming: %+v, %v", f, err)
	}
	if st, err := os.Stat(choices); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the choices file: %v %v", st, err)
	}
	again := &localserver.Trust{Choices: &localserver.Choices{Path: choices}}
	if _, err := again.Check(r.URL()); err != nil {
		t.Errorf("a kept confirmation did not last: %v", err)
	}
	if !again.AllowsUID(rogue.UID) || again.AllowsUID(4321) {
		t.Error("AllowsUID does not follow the confirmations")
	}
	// A choices file another user could write trusts nobody.
	os.Chmod(choices, 0o666)
	if _, err := (&localserver.Trust{Choices: &localserver.Choices{Path: choices}}).Check(r.URL()); err == nil {
		t.Error("a world-writable choices file was believed")
	}
}

// TestCheckedClientRefusesAnotherUser: the probe's client, and
// agentserver's default one, send nothing to another user's server.
func TestCheckedClientRefusesAnotherUser(t *testing.T) {
	r := rogue.Start(t, 0, "1.49.1")
	_, err := localserver.Probe(ctxT(t), (*localserver.Trust)(nil).HTTPClient(localserver.ProbeTimeout), r.URL(), "sekrit-probe")
	var ue *localserver.UntrustedError
	if !errors.As(err, &ue) {
		t.Fatalf("a probe of another user's server: %v", err)
	}
	c, _ := agentserver.NewClient(r.URL(), "sekrit-default", nil, nil)
	if _, err := c.ServerInfo(ctxT(t)); err == nil || !strings.Contains(err.Error(), "not by you") {
		t.Fatalf("agentserver's default client: %v", err)
	}
	r.CheckNothingReceived(t, "sekrit-probe", "sekrit-default")
}

func itoa(n int) string { return strconv.Itoa(n) }
