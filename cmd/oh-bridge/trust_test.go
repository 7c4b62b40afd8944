//go:build linux

package main_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/oh-bridge/oh-bridge/internal/ohtest/rogue"
	"github.com/oh-bridge/oh-bridge/rpc"
)

// What the bridge trusts: a server merely found on a local port is not
// the person's because it answers as an agent-server.

// rogueHome is a home with every secret the red team saw sent to another
// user's server: Agent Canvas's key file, and the person's LLM key in the
// OpenHands CLI's settings.
func rogueHome(t *testing.T) string {
	home := t.TempDir()
	for path, data := range map[string]string{
		".openhands/agent-canvas/api-key.txt": "sekrit-canvas\n",
		".openhands/agent_settings.json":      `{"llm": {"model": "openai/gpt-4o", "api_key": "sk-sekrit-llm"}}`,
	} {
		p := filepath.Join(home, path)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

// rogueEnv is the environment of a bridge whose person has a session key
// meant for another server, and nothing to start a server with.
func rogueEnv(home string) []string {
	return []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "PATH=/usr/local/bin:/usr/bin:/bin",
		"OH_BRIDGE_SERVER_URL=", "OH_BRIDGE_SESSION_API_KEY=sekrit-env", "LOCAL_BACKEND_API_KEY=", "OPENHANDS_PERSISTENCE_DIR=", "LLM_MODEL=", "LLM_API_KEY="}
}

var secrets = []string{"sekrit-canvas", "sk-sekrit-llm", "sekrit-env"}

// TestRogueOnTheDefaultPortsGetsNothing: another user's program answers
// as agent-server 1.49.1 on the default port and on Agent Canvas's. The
// editor's bridge finds nothing there, says who runs it, and refuses to
// connect or list when told its URL; ACP asks the person (declined here)
// before anything goes to it. Neither sends it a request: no key, no
// token, no LLM key.
func TestRogueOnTheDefaultPortsGetsNothing(t *testing.T) {
	onDefault := rogue.Start(t, 8000, "1.49.1")
	onCanvas := rogue.Start(t, 18000, "1.49.1")
	home := rogueHome(t)

	t.Run("the editor's bridge", func(t *testing.T) {
		b := startBridgeEnv(t, rogueEnv(home), "--stdio", "--workspace", t.TempDir(), "--config", filepath.Join(home, "none.json"))
		if _, err := b.client.Initialize(ctxT(t), nil); err != nil {
			t.Fatal(err)
		}
		var found struct {
			Found     *struct{ ServerURL string }
			Untrusted []struct {
				ServerURL, Source, Description string
				Owner                          struct {
					UID                                 int
					User, Program, Command, Description string
					PID                                 int
				}
			}
		}
		if err := b.client.Call(ctxT(t), "openhands/find_server", nil, &found); err != nil {
			t.Fatal(err)
		}
		if found.Found != nil || len(found.Untrusted) != 3 {
			t.Fatalf("found %+v, want nothing found and the three places passed over as another user's", found)
		}
		for _, u := range found.Untrusted {
			if u.Owner.UID != rogue.UID || u.Owner.User != "nobody" || u.Owner.PID == 0 || !strings.Contains(u.Owner.Command, "python3") ||
				!strings.Contains(u.Description, "not by you") {
				t.Errorf("untrusted %+v: want its owner, process and program named", u)
			}
		}
		for _, method := range []string{"openhands/connect", "openhands/list_conversations"} {
			err := b.client.Call(ctxT(t), method, map[string]any{"serverUrl": "http://127.0.0.1:8000", "task": "hello"}, nil)
			if err == nil || !strings.Contains(err.Error(), "user nobody (uid 65534)") || !strings.Contains(errorData(err), `"kind":"server_not_trusted"`) {
				t.Errorf("%s to another user's server: %v %s", method, err, errorData(err))
			}
		}
	})

	t.Run("ACP", func(t *testing.T) {
		q := &questions{}
		a := startACPProcess(t, "", rogueEnv(home), q.reject)
		s, err := a.call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})
		if err != nil {
			t.Fatal(err)
		}
		a.prompt(s["sessionId"].(string), "hello")
		asked := q.asked()
		if len(asked) == 0 || !strings.Contains(asked[0], "run by user nobody (uid 65534), process ") || !strings.Contains(asked[0], "127.0.0.1:") {
			t.Fatalf("the person was not asked about the server with its owner: %v", asked)
		}
	})
	onDefault.CheckNothingReceived(t, secrets...)
	onCanvas.CheckNothingReceived(t, secrets...)
}

// questions is an ACP client's side of the bridge's permission
// questions: it declines each, and keeps their params.
type questions struct {
	mu   sync.Mutex
	seen []string
}

// reject answers a session/request_permission reject_once (nil for any
// other request: acpProcess's default answers it).
func (q *questions) reject(m map[string]any) any {
	if m["method"] != "session/request_permission" {
		return nil
	}
	raw, _ := json.Marshal(m["params"])
	q.mu.Lock()
	q.seen = append(q.seen, string(raw))
	q.mu.Unlock()
	return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "reject_once"}}
}

// asked are the questions' params, as JSON, so far.
func (q *questions) asked() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.seen...)
}

// errorData is a JSON-RPC error's data, as JSON.
func errorData(err error) string {
	var e *rpc.Error
	if !errors.As(err, &e) || e.Data == nil {
		return fmt.Sprintf("%v", err)
	}
	return string(*e.Data)
}

// TestTrustServerCommand: `oh-bridge trust-server` shows who runs the
// server, asks, and keeps the answer where both faces read it.
func TestTrustServerCommand(t *testing.T) {
	r := rogue.Start(t, 0, "1.49.1")
	home := t.TempDir()
	run := func(stdin string, args ...string) (string, int) {
		cmd := exec.Command(bin, append([]string{"trust-server"}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
		cmd.Stdin = strings.NewReader(stdin)
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	out, code := run("n\n", r.URL())
	if code != 1 || !strings.Contains(out, "is run by user nobody (uid 65534), process") || !strings.Contains(out, "Not confirmed") {
		t.Fatalf("declined: exit %d\n%s", code, out)
	}
	out, code = run("y\n", r.URL())
	choices := filepath.Join(home, ".config", "oh-bridge", "choices.json")
	data, _ := os.ReadFile(choices)
	if code != 0 || !strings.Contains(out, "Confirmed") || !strings.Contains(string(data), `"uid": 65534`) {
		t.Fatalf("confirmed: exit %d\n%s\n%s", code, out, data)
	}
	// The editor's bridge now finds it, and the rogue gets its probe.
	b := startBridgeEnv(t, []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "OH_BRIDGE_SERVER_URL=" + r.URL(), "OH_BRIDGE_SESSION_API_KEY="},
		"--stdio", "--workspace", t.TempDir(), "--config", filepath.Join(home, "none.json"))
	if _, err := b.client.Initialize(ctxT(t), nil); err != nil {
		t.Fatal(err)
	}
	var found struct{ Found *struct{ ServerURL string } }
	if err := b.client.Call(ctxT(t), "openhands/find_server", nil, &found); err != nil || found.Found == nil || found.Found.ServerURL != r.URL() {
		t.Fatalf("after trust-server: %+v %v", found, err)
	}
	if out, code := run("", "http://10.1.2.3:8000"); code != 2 || !strings.Contains(out, "not a server on this machine") {
		t.Errorf("a remote URL: exit %d\n%s", code, out)
	}
}

// TestPlantedModuleRunsNothing: a cloned repository holding an openhands
// package, opened as the workspace and as the bridge's working directory,
// runs nothing when a server is looked for (the editor's find_server, ACP's
// first prompt) nor when one is started the python way.
func TestPlantedModuleRunsNothing(t *testing.T) {
	holdDefaultPorts(t)
	ws := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	for path, data := range map[string]string{
		"openhands/__init__.py":                    "open(" + strconv.Quote(marker) + ", 'a').write('ran\\n')\n",
		"openhands/agent_server/__init__.py":       "",
		"openhands/agent_server/__main__.py":       "open(" + strconv.Quote(marker) + ", 'a').write('main\\n')\n",
		"bin/agent-server":                         "#!/bin/sh\necho ran >> " + marker + "\n",
		"node_modules/.bin/openhands-agent-server": "#!/bin/sh\necho ran >> " + marker + "\n",
	} {
		p := filepath.Join(ws, path)
		os.MkdirAll(filepath.Dir(p), 0o755)
		must(t, os.WriteFile(p, []byte(data), 0o755))
	}
	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"PATH=bin:" + filepath.Join(ws, "node_modules", ".bin") + ":/usr/bin:/bin", "PYTHONPATH=" + ws,
		"OH_BRIDGE_SERVER_URL=", "OH_BRIDGE_SESSION_API_KEY=", "LOCAL_BACKEND_API_KEY="}
	b := startBridgeIn(t, ws, env, "--stdio", "--workspace", ws, "--config", filepath.Join(home, "none.json"))
	if _, err := b.client.Initialize(ctxT(t), nil); err != nil {
		t.Fatal(err)
	}
	var found struct {
		Ways []struct{ Kind, Command string }
	}
	must(t, b.client.Call(ctxT(t), "openhands/find_server", nil, &found))
	for _, w := range found.Ways {
		if strings.Contains(w.Command, ws) || w.Kind == "installed" {
			t.Errorf("a way from the workspace is offered: %+v", w)
		}
	}
	if data, err := os.ReadFile(marker); err == nil {
		t.Fatalf("the workspace's code ran on find_server: %q", data)
	}
	a := startACPProcessIn(t, ws, "", env)
	s, err := a.call("session/new", map[string]any{"cwd": ws, "mcpServers": []any{}})
	must(t, err)
	a.prompt(s["sessionId"].(string), "hello")
	if data, err := os.ReadFile(marker); err == nil {
		t.Fatalf("the workspace's code ran on ACP's first prompt: %q", data)
	}
}
