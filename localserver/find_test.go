//go:build unix

package localserver_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest/shellplant"

	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
	"github.com/oh-bridge/oh-bridge/localserver"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// closedURL is a loopback URL nothing listens on.
func closedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + l.Addr().String()
	l.Close()
	return u
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// sh runs a shell command, the way an agent or another program leaves a
// canvasHome makes a home whose Agent Canvas key file holds key.
func canvasHome(t *testing.T, key string) string {
	home := t.TempDir()
	shellplant.Run(t, home, "mkdir -p .openhands/agent-canvas && printf '%s\\n' \""+key+"\" > .openhands/agent-canvas/api-key.txt")
	return home
}

// TestFindOrder: the environment, then the config file, then Agent
// Canvas, then the default port; each taken only once it answered, the
// ones before it said with why they were passed over.
func TestFindOrder(t *testing.T) {
	// The stand-in: three servers at once, one without a session key (the
	// real one always gets a key from realserver, and takes 10-40 s to
	// start). Find reads /server_info and a listing, whose answers
	// agentserver's TestStandInKeepsToTheRealServer holds to the real
	// server's.
	keyed := agentservertest.Start(t, "--session-api-key", "sekrit-env")
	plain := agentservertest.Start(t)
	canvas := agentservertest.Start(t, "--session-api-key", "sekrit-canvas")
	down := closedURL(t)
	home := canvasHome(t, "sekrit-canvas")

	cases := []struct {
		name      string
		env       map[string]string
		config    localserver.Config
		canvas    []string
		def       string
		want      localserver.Source
		wantURL   string
		keyFrom   string
		triedKeys []localserver.Source
	}{
		{"the environment first", map[string]string{"OH_BRIDGE_SERVER_URL": keyed.URL, "OH_BRIDGE_SESSION_API_KEY": "sekrit-env"},
			localserver.Config{Path: "/c.json", ServerURL: plain.URL}, []string{canvas.URL}, plain.URL,
			localserver.FromEnvironment, keyed.URL, "OH_BRIDGE_SESSION_API_KEY", nil},
		{"the config file when the environment's server is down", map[string]string{"OH_BRIDGE_SERVER_URL": down},
			localserver.Config{Path: "/c.json", ServerURL: plain.URL}, []string{canvas.URL}, plain.URL,
			localserver.FromConfig, plain.URL, "", []localserver.Source{localserver.FromEnvironment}},
		{"Agent Canvas, with its key file", nil,
			localserver.Config{}, []string{down, canvas.URL}, plain.URL,
			localserver.FromAgentCanvas, canvas.URL, filepath.Join(home, ".openhands/agent-canvas/api-key.txt"), []localserver.Source{localserver.FromAgentCanvas}},
		{"the default port last", nil,
			localserver.Config{Path: "/c.json", ServerURL: down}, []string{down}, plain.URL,
			localserver.FromDefaultPort, plain.URL, "", []localserver.Source{localserver.FromConfig, localserver.FromAgentCanvas}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, tried, err := localserver.Find(ctxT(t), localserver.Options{Getenv: env(c.env), Home: home, Config: c.config, CanvasURLs: c.canvas, DefaultURL: c.def})
			if err != nil {
				t.Fatal(err)
			}
			if f.Source != c.want || f.URL != c.wantURL || f.KeySource != c.keyFrom || f.Version == "" {
				t.Fatalf("found %+v; want %s at %s with the key from %q", f, c.want, c.wantURL, c.keyFrom)
			}
			var got []localserver.Source
			for _, tr := range tried {
				got = append(got, tr.Source)
				if tr.Why == "" || !strings.Contains(tr.Why, "nothing listens on") {
					t.Errorf("passed over %+v: want why it was (nothing listens there)", tr)
				}
			}
			if len(got) != len(c.triedKeys) || (len(got) > 0 && got[0] != c.triedKeys[0]) {
				t.Errorf("passed over %v; want %v", got, c.triedKeys)
			}
			words := f.Describe()
			if strings.Contains(words, "sekrit") || !strings.Contains(words, f.URL) || (c.keyFrom != "" && !strings.Contains(words, c.keyFrom)) {
				t.Errorf("Describe: %q", words)
			}
		})
	}
}

// TestFindKeySources: Agent Canvas's key comes from LOCAL_BACKEND_API_KEY
// before its file, and from OH_SESSION_API_KEY_PATH's file when that is
// set; a wrong key, or none, is said in words, never shown.
func TestFindKeySources(t *testing.T) {
	// The stand-in, for speed: a server that takes one key of the test's
	// choosing (TestFindOrder says why).
	canvas := agentservertest.Start(t, "--session-api-key", "sekrit-right")
	home := canvasHome(t, "sekrit-wrong")
	elsewhere := filepath.Join(t.TempDir(), "key.txt")
	if err := os.WriteFile(elsewhere, []byte("sekrit-right\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	find := func(e map[string]string) (*localserver.Found, []localserver.Tried, error) {
		return localserver.Find(ctxT(t), localserver.Options{Getenv: env(e), Home: home, CanvasURLs: []string{canvas.URL}, DefaultURL: canvas.URL})
	}
	f, _, err := find(map[string]string{"LOCAL_BACKEND_API_KEY": "sekrit-right"})
	if err != nil || f.KeySource != "LOCAL_BACKEND_API_KEY" || f.SessionAPIKey != "sekrit-right" {
		t.Fatalf("LOCAL_BACKEND_API_KEY: %+v, %v", f, err)
	}
	f, _, err = find(map[string]string{"OH_SESSION_API_KEY_PATH": elsewhere})
	if err != nil || f.KeySource != elsewhere {
		t.Fatalf("OH_SESSION_API_KEY_PATH: %+v, %v", f, err)
	}
	// The file's key is wrong, and the default port has no key.
	_, tried, err := find(nil)
	var nf *localserver.NotFoundError
	if !errors.As(err, &nf) || len(tried) != 2 {
		t.Fatalf("a wrong key: %v, tried %+v", err, tried)
	}
	if !strings.Contains(tried[0].Why, "refused the session API key") || !strings.Contains(tried[1].Why, "none is sent to a server merely found on the default port: name it with OH_BRIDGE_SERVER_URL=") {
		t.Errorf("why: %+v", tried)
	}
	if msg := err.Error(); strings.Contains(msg, "sekrit") || !strings.Contains(msg, "start one") {
		t.Errorf("the error: %s", msg)
	}
	if k, ok := err.(interface{ Kind() string }); !ok || k.Kind() != "server_not_found" {
		t.Errorf("kind: %v", err)
	}
}

// TestFindBadKeyFiles: a key file that is not a small regular file inside
// its directory is not read, whatever was planted there, and Find says
// so and goes on.
func TestFindBadKeyFiles(t *testing.T) {
	// The stand-in, for speed: a server that takes one key of the test's
	// choosing (TestFindOrder says why).
	canvas := agentservertest.Start(t, "--session-api-key", "sekrit-outside")
	outside := t.TempDir()
	shellplant.Run(t, outside, "printf 'sekrit-outside\\n' > key.txt")
	cases := []struct{ name, plant, why string }{
		{"a FIFO", "mkfifo api-key.txt", "FIFO"},
		{"a symlink", "ln -s " + outside + "/key.txt api-key.txt", "is a symbolic link"},
		{"a directory", "mkdir api-key.txt", "directory"},
		{"an empty file", ": > api-key.txt", "holds no key"},
		{"a huge file", "head -c 100000 /dev/zero | tr '\\0' k > api-key.txt", "over the 4096"},
		{"a device", "ln -s /dev/zero api-key.txt", "is a symbolic link"},
		{"writable by others", "printf 'sekrit-outside\\n' > api-key.txt && chmod 666 api-key.txt", "writable by other users (mode 0666)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			dir := filepath.Join(home, ".openhands", "agent-canvas")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			shellplant.Run(t, dir, c.plant)
			_, tried, err := localserver.Find(ctxT(t), localserver.Options{Getenv: env(nil), Home: home, CanvasURLs: []string{canvas.URL}, DefaultURL: closedURL(t)})
			if err == nil || len(tried) != 2 || tried[0].Source != localserver.FromAgentCanvas {
				t.Fatalf("got %v, tried %+v", err, tried)
			}
			if !strings.Contains(tried[0].Why, "the key file could not be read") || !strings.Contains(tried[0].Why, c.why) {
				t.Errorf("why: %s; want it to say %q", tried[0].Why, c.why)
			}
		})
	}
}

// TestFindNotAnAgentServer: something else on the port is passed over.
func TestFindNotAnAgentServer(t *testing.T) {
	other := httptest.NewServer(http.NotFoundHandler())
	defer other.Close()
	_, tried, err := localserver.Find(ctxT(t), localserver.Options{Getenv: env(map[string]string{"OH_BRIDGE_SERVER_URL": other.URL}), Home: t.TempDir(), CanvasURLs: []string{}, DefaultURL: closedURL(t)})
	if err == nil || len(tried) != 2 || !strings.Contains(tried[0].Why, "is not an OpenHands agent-server") {
		t.Fatalf("got %v, tried %+v", err, tried)
	}
}
