//go:build linux

package main_test

import (
	"encoding/json"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest/logbuf"
	"github.com/oh-bridge/oh-bridge/internal/ohtest/rogue"
	"github.com/oh-bridge/oh-bridge/internal/sockowner"
)

// The bridge's own files, planted: its config file, its choices, its
// endpoint records and a started server's secret key, each as a FIFO
// (which held the bridge for ever), a link to /dev/zero (which it read
// until it had gigabytes), a file of another user's, and one anyone may
// write. Each is refused at once, in words naming the file and why, on
// both faces, and the bridge serves on.

type plant struct {
	name  string
	do    func(t *testing.T, path, valid string)
	words string // in the refusal
}

var plants = []plant{
	{"a FIFO", func(t *testing.T, p, _ string) { must(t, syscall.Mkfifo(p, 0o600)) }, "is a FIFO"},
	{"a link to /dev/zero", func(t *testing.T, p, _ string) { must(t, os.Symlink("/dev/zero", p)) }, ""},
	{"another user's", func(t *testing.T, p, valid string) {
		if os.Getuid() != 0 {
			skipOrFail(t, "a file of another user needs root to chown")
		}
		must(t, os.WriteFile(p, []byte(valid), 0o600))
		must(t, os.Chown(p, rogue.UID, rogue.UID))
	}, "owned by user nobody (uid 65534)"},
	{"writable by others", func(t *testing.T, p, valid string) {
		must(t, os.WriteFile(p, []byte(valid), 0o600))
		must(t, os.Chmod(p, 0o666))
	}, "writable by other users (mode 0666)"},
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func skipOrFail(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// TestPlantedConfigFile: the editor's bridge answers initialize and says
// why the config file was left out when a server is looked for; `oh-bridge
// acp` stops at once with the reason, as for a config file that is not
// JSON.
func TestPlantedConfigFile(t *testing.T) {
	for _, pl := range plants {
		t.Run(pl.name, func(t *testing.T) {
			home := t.TempDir()
			config := filepath.Join(home, "config.json")
			pl.do(t, config, `{"serverUrl": "http://127.0.0.1:1"}`)
			b := startBridgeEnv(t, []string{"HOME=" + home, "OH_BRIDGE_SERVER_URL="}, "--stdio", "--workspace", t.TempDir(), "--config", config)
			if _, err := b.client.Initialize(ctxT(t), nil); err != nil {
				t.Fatalf("initialize: %v", err)
			}
			var found struct {
				Tried []struct{ Source, Why string }
			}
			if err := b.client.Call(ctxT(t), "openhands/find_server", nil, &found); err != nil {
				t.Fatal(err)
			}
			if len(found.Tried) == 0 || found.Tried[0].Source != "config file" || !strings.Contains(found.Tried[0].Why, config) || !strings.Contains(found.Tried[0].Why, pl.words) {
				t.Errorf("find_server does not say why the config file was left out: %+v", found.Tried)
			}

			cmd := exec.Command(bin, "acp", "--config", config, "--log-file", "-")
			cmd.Env = append(os.Environ(), "HOME="+home)
			var stderr logbuf.Buffer
			cmd.Stderr = &stderr
			done := make(chan error, 1)
			must(t, cmd.Start())
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("oh-bridge acp is held by the planted config file")
			}
			if cmd.ProcessState.ExitCode() != 2 || !strings.Contains(stderr.String(), "the config file "+config) || !strings.Contains(stderr.String(), pl.words) {
				t.Errorf("oh-bridge acp: exit %d, stderr:\n%s", cmd.ProcessState.ExitCode(), stderr.String())
			}
		})
	}
}

// TestPlantedChoicesFile: a choices file that is not the person's own
// trusts nobody, on either face: another user's server stays untrusted
// (and is sent nothing), whatever the file says, and the bridge answers.
func TestPlantedChoicesFile(t *testing.T) {
	r := rogue.Start(t, 0, "1.49.1")
	trusting, _ := json.Marshal(map[string]any{"alwaysStartServer": true, "trustedServers": []any{map[string]any{"port": r.Port, "uid": rogue.UID}}})
	path, _ := fakeAgentServerPath(t)
	for _, pl := range plants {
		t.Run(pl.name, func(t *testing.T) {
			home := rogueHome(t)
			choices := filepath.Join(home, ".config", "oh-bridge", "choices.json")
			must(t, os.MkdirAll(filepath.Dir(choices), 0o700))
			pl.do(t, choices, string(trusting))
			env := append(rogueEnv(home), "OH_BRIDGE_SERVER_URL="+r.URL(), "OH_BRIDGE_SESSION_API_KEY=")
			b := startBridgeEnv(t, env, "--stdio", "--workspace", t.TempDir(), "--config", filepath.Join(home, "none.json"))
			if _, err := b.client.Initialize(ctxT(t), nil); err != nil {
				t.Fatal(err)
			}
			var found struct {
				Found     *struct{ ServerURL string }
				Untrusted []struct{ ServerURL string }
			}
			if err := b.client.Call(ctxT(t), "openhands/find_server", nil, &found); err != nil {
				t.Fatal(err)
			}
			if found.Found != nil || len(found.Untrusted) == 0 {
				t.Errorf("the planted choices were believed: %+v", found)
			}

			// ACP: "always start" is not believed: the person is asked.
			q := &questions{}
			a := startACPProcess(t, "", append(rogueEnv(home), "PATH="+path+":/usr/bin:/bin"), q.reject)
			s, err := a.call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})
			must(t, err)
			a.prompt(s["sessionId"].(string), "hello")
			asked := q.asked()
			if len(asked) == 0 || !strings.Contains(strings.Join(asked, "\n"), "Start ") {
				t.Errorf("the planted \"always start\" was believed: asked %v", asked)
			}
			if !a.stderr.Contains("choices file", 10*time.Second) {
				t.Errorf("the log does not say the choices file is not used:\n%s", a.stderr.String())
			}
		})
	}
	r.CheckNothingReceived(t, secrets...)
}

// TestPlantedRecord: a planted endpoint record is not used; loading or
// reopening the conversation answers, with its history, and serves no
// tools there.
func TestPlantedRecord(t *testing.T) {
	p := reattachScript(t)
	for _, pl := range plants {
		t.Run(pl.name, func(t *testing.T) {
			ws := t.TempDir()
			env, _ := acpHome(t)
			id := acpConversation(t, p, ws, env)
			cache := strings.TrimPrefix(env[1], "XDG_CACHE_HOME=")
			record := filepath.Join(cache, "oh-bridge", "endpoints", id+".json")
			valid, err := os.ReadFile(record)
			must(t, err)
			must(t, os.Remove(record))
			pl.do(t, record, string(valid))

			a := startACPProcess(t, p.URL, env)
			if _, err := a.call("session/load", map[string]any{"sessionId": id, "cwd": ws, "mcpServers": []any{}}); err != nil {
				t.Fatalf("session/load: %v", err)
			}
			if !a.stderr.Contains("its record cannot be used", 10*time.Second) {
				t.Errorf("the log does not say the record is not used:\n%s", a.stderr.String())
			}
			a.kill()

			b := startBridgeEnv(t, env, "--stdio", "--workspace", ws)
			if _, err := b.client.Initialize(ctxT(t), nil); err != nil {
				t.Fatal(err)
			}
			if err := b.client.Call(ctxT(t), "openhands/connect", map[string]any{"serverUrl": p.URL, "conversationId": id}, nil); err != nil {
				t.Fatalf("openhands/connect: %v", err)
			}
			if port := agentPort(t, p.URL, id); portListening(port) {
				t.Errorf("port %d is served with the token of a planted record", port)
			}
		})
	}
}

// TestPlantedSecretKey: a started server's secret key that is not the
// bridge's own stops the start at once, in words, on both faces.
func TestPlantedSecretKey(t *testing.T) {
	holdDefaultPorts(t)
	path, _ := fakeAgentServerPath(t)
	for _, pl := range plants {
		t.Run(pl.name, func(t *testing.T) {
			home := t.TempDir()
			state := filepath.Join(home, ".local", "share", "oh-bridge", "agent-server")
			must(t, os.MkdirAll(state, 0o700))
			secret := filepath.Join(state, "secret-key.txt")
			pl.do(t, secret, strings.Repeat("ab", 24)+"\n")
			env := []string{"HOME=" + home, "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"), "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
				"PATH=" + path + ":/usr/bin:/bin", "OH_BRIDGE_SERVER_URL=", "OH_BRIDGE_SESSION_API_KEY=", "LOCAL_BACKEND_API_KEY="}
			b := startBridgeEnv(t, env, "--stdio", "--workspace", t.TempDir(), "--config", filepath.Join(home, "none.json"))
			if _, err := b.client.Initialize(ctxT(t), nil); err != nil {
				t.Fatal(err)
			}
			err := b.client.Call(ctxT(t), "openhands/start_server", map[string]any{"kind": "installed"}, nil)
			if err == nil || !strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), pl.words) || !strings.Contains(errorData(err), "server_start_failed") {
				t.Errorf("openhands/start_server: %v %s", err, errorData(err))
			}

			a := startACPProcess(t, "", env)
			s, err := a.call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})
			must(t, err)
			a.prompt(s["sessionId"].(string), "hello")
			if msg := a.messages(); !strings.Contains(msg, secret) {
				t.Errorf("the prompt's answer does not name the secret key: %q", msg)
			}
		})
	}
}

// portListening says whether something listens on 127.0.0.1:port.
func portListening(port int) bool {
	_, ok, _ := sockowner.Listening(netip.MustParseAddr("127.0.0.1"), port)
	return ok
}
