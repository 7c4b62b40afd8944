//go:build linux

package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/internal/netns"
	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/internal/realserver"
	"github.com/oh-bridge/oh-bridge/internal/relayrig"
	"github.com/oh-bridge/oh-bridge/internal/scriptedllm"
)

// cloud is the agent-server's machine: the real agent-server, and the
// relay and nginx in front of both (relayrig), as a cloud deployment puts
// them.
type cloud struct {
	*relayrig.Cloud
	server *realserver.Server
}

// needTopology skips (fails in CI) without what the machines need.
func needTopology(t *testing.T) {
	t.Helper()
	if missing := relayrig.Missing(); missing != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("the relay's topology needs %s", missing)
		}
		t.Skipf("the relay's topology needs %s", missing)
	}
}

// startCloud starts the cloud's programs in m: the real agent-server,
// the relay, nginx.
func startCloud(t *testing.T, m *netns.Machine) *cloud {
	t.Helper()
	server := realserver.Start(t, realserver.Latest, realserver.Options{Port: relayrig.AgentServerPort, Command: m.Command, Dial: m.DialContext})
	return &cloud{Cloud: relayrig.Start(t, m, bin), server: server}
}

// laptopACP is `oh-bridge acp` on the laptop, given the cloud's
// agent-server and relay through the proxy.
func laptopACP(t *testing.T, m *netns.Machine, c *cloud, llmURL string) *acpProcess {
	t.Helper()
	cmd := m.Command(bin, "acp", "--config", "", "--log-file", "-", "--find-server=false",
		"--server", c.AgentURL(), "--relay", c.RelayURL(), "--relay-secret-file", c.SecretFile)
	cmd.Env = append(os.Environ(), "OH_BRIDGE_SESSION_API_KEY="+c.server.Key,
		"LLM_MODEL="+scriptedModel, "LLM_BASE_URL="+llmURL, "LLM_API_KEY=k")
	return runACPProcess(t, cmd)
}

// promptWithin sends a prompt and waits up to within for the turn's end.
func promptWithin(t *testing.T, a *acpProcess, sessionID, text string, within time.Duration) {
	t.Helper()
	select {
	case m := <-a.request("session/prompt", map[string]any{"sessionId": sessionID, "prompt": []any{map[string]any{"type": "text", "text": text}}}):
		if e, ok := m["error"]; ok {
			t.Fatalf("session/prompt: %v", e)
		}
	case <-a.done:
		t.Fatal("session/prompt: the bridge exited")
	case <-time.After(within):
		t.Fatalf("session/prompt: no answer within %s", within)
	}
}

// window is a laptop window: an `oh-bridge acp` with a workspace, its
// session, and the model the cloud's agent asks for it.
type window struct {
	ws      string
	acp     *acpProcess
	session string
	llm     *scriptedllm.Server
}

// laptopWorkspace is a workspace folder named name.
func laptopWorkspace(t *testing.T, name string) string {
	t.Helper()
	ws := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	return ws
}

// cloudModel is the agent's scripted model, served in the cloud, where
// the agent-server that asks it runs.
func cloudModel(t *testing.T, cloudM *netns.Machine, turns ...scriptedllm.Turn) *scriptedllm.Server {
	t.Helper()
	ln, err := cloudM.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	llm := scriptedllm.StartOn(t, ln, turns...)
	llm.AnswerTitles("Relay turn")
	return llm
}

func openWindow(t *testing.T, laptop, cloudM *netns.Machine, c *cloud, name string, turns func(ws string) []scriptedllm.Turn) *window {
	t.Helper()
	w := &window{ws: laptopWorkspace(t, name)}
	w.llm = cloudModel(t, cloudM, turns(w.ws)...)
	w.acp = laptopACP(t, laptop, c, w.llm.URL)
	s, err := w.acp.call("session/new", map[string]any{"cwd": w.ws, "mcpServers": []any{}})
	if err != nil {
		t.Fatal(err)
	}
	w.session = s["sessionId"].(string)
	return w
}

func (w *window) file(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(w.ws, name))
	if err != nil {
		t.Fatalf("%s in %s: %v", name, w.ws, err)
	}
	return strings.TrimSpace(string(data))
}

// toolResults counts, in the last request the agent made of its model,
// the tool results that contain text.
func toolResults(w *window, text string) int {
	reqs := w.llm.Requests()
	n := 0
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == "tool" && strings.Contains(m.Text(), text) {
			n++
		}
	}
	return n
}

// TestRelayTopology: a cloud (the real agent-server 1.58.2, the relay,
// nginx with a path prefix) and a laptop (the bridge, its workspace, no
// inbound connection) in network namespaces of their own. A turn of the
// cloud's agent runs its command and lands its edit in the laptop's
// workspace, through the relay the laptop dialed.
func TestRelayTopology(t *testing.T) {
	needTopology(t)
	realserver.Need(t, realserver.Latest)
	pair := netns.NewPair(t, "cloud", "laptop")
	cloudM, laptop := pair.A, pair.B
	laptop.RefuseInbound(t)

	// Nothing reaches into the laptop.
	if refused, err := laptop.Refuses(cloudM); err != nil || !refused {
		t.Fatalf("the cloud connected into the laptop (%v)", err)
	}

	c := startCloud(t, cloudM)

	one := openWindow(t, laptop, cloudM, c, "laptop-ws", func(ws string) []scriptedllm.Turn {
		return []scriptedllm.Turn{
			// A turn: a command and an edit.
			terminalCall("echo from-the-cloud-$((6*7)) > landed.txt && cat landed.txt"),
			call("file_editor", map[string]any{"command": "create", "path": filepath.Join(ws, "edited.txt"), "file_text": "edited through the relay\n"}),
			says("Done."),
			// The cut: the command ends while the link is down.
			terminalCall("touch started; while [ ! -e go ]; do sleep 0.05; done; echo finished-$((2*21)) | tee finished.txt"),
			says("Done after the cut."),
			// After the relay restarts.
			terminalCall("echo after-restart > restarted.txt"),
			says("Done after the restart."),
		}
	})
	two := openWindow(t, laptop, cloudM, c, "laptop-ws", func(ws string) []scriptedllm.Turn {
		return []scriptedllm.Turn{terminalCall("echo window-two > two.txt && pwd"), says("Two done.")}
	})

	t.Run("a turn lands in the laptop", func(t *testing.T) {
		promptWithin(t, one.acp, one.session, "Run it.", 60*time.Second)
		if got := one.file(t, "landed.txt"); got != "from-the-cloud-42" {
			t.Fatalf("the command's file: %q", got)
		}
		if got := one.file(t, "edited.txt"); got != "edited through the relay" {
			t.Fatalf("the edit: %q", got)
		}
		if n := toolResults(one, "from-the-cloud-42"); n == 0 {
			t.Errorf("the agent did not read the command's output")
		}
		said := one.acp.messages()
		if !regexp.MustCompile(`through the relay at http://` + regexp.QuoteMeta(cloudM.Addr) + `:\d+/s/abc/relay, as window "laptop-ws — ACP`).MatchString(said) {
			t.Errorf("the person was not told where the calls come from: %q", said)
		}
	})

	t.Run("two windows do not cross", func(t *testing.T) {
		promptWithin(t, two.acp, two.session, "Run yours.", 60*time.Second)
		if got := two.file(t, "two.txt"); got != "window-two" {
			t.Fatalf("window two's file: %q", got)
		}
		for _, f := range []string{"two.txt"} {
			if _, err := os.Stat(filepath.Join(one.ws, f)); err == nil {
				t.Errorf("window two's %s landed in window one", f)
			}
		}
		for _, f := range []string{"landed.txt", "edited.txt"} {
			if _, err := os.Stat(filepath.Join(two.ws, f)); err == nil {
				t.Errorf("window one's %s landed in window two", f)
			}
		}
		if !strings.Contains(two.acp.messages(), `as window "laptop-ws — ACP (2)"`) {
			t.Errorf("the second window of the same workspace is not told apart: %q", two.acp.messages())
		}
	})

	t.Run("the link cut mid-command", func(t *testing.T) {
		turn := make(chan struct{})
		go func() {
			defer close(turn)
			promptWithin(t, one.acp, one.session, "Wait for it.", 120*time.Second)
		}()
		ohtest.WaitWithin(t, 30*time.Second, "the command to start in the laptop", func() bool {
			_, err := os.Stat(filepath.Join(one.ws, "started"))
			return err == nil
		})
		laptop.LinkDown(t)
		if err := os.WriteFile(filepath.Join(one.ws, "go"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		ohtest.WaitWithin(t, 30*time.Second, "the command to finish while the link is down", func() bool {
			_, err := os.Stat(filepath.Join(one.ws, "finished.txt"))
			return err == nil
		})
		// The bridge's heartbeat finds the link dead, so the result
		// waits for a new link, not for TCP to resend it.
		ohtest.WaitWithin(t, 30*time.Second, "the laptop's bridge to see its relay link down", func() bool {
			return strings.Count(one.acp.stderr.String(), "relay link down") > 0
		})
		laptop.LinkUp(t)
		<-turn
		if n := toolResults(one, "finished-42"); n != 1 {
			t.Fatalf("the agent got the command's result %d times, not once", n)
		}
		// The person was told, in the turn, that the link went and came back.
		said := one.acp.messages()
		if !strings.Contains(said, "(The link to the relay at "+c.RelayURL()+" is down (") || !strings.Contains(said, "(The link to the relay is back.)") {
			t.Errorf("the person was not told of the link's drop and return: %q", said)
		}
		if !strings.Contains(said, "(the relay did not answer the heartbeat within 5s)") && !strings.Contains(said, "(cannot reach it: ") {
			t.Errorf("the person was not told why the link dropped, in a few words: %q", said)
		}
	})

	t.Run("refused: wrong secret, wrong token, foreign origin", func(t *testing.T) {
		hc := &http.Client{Transport: &http.Transport{DialContext: laptop.DialContext}, Timeout: 10 * time.Second}
		req, _ := http.NewRequest("GET", c.RelayURL()+"/link", nil)
		for k, v := range map[string]string{"Authorization": "Bearer not-the-secret", "Connection": "Upgrade", "Upgrade": "websocket",
			"Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="} {
			req.Header.Set(k, v)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("a wrong pairing secret through the proxy: %d", resp.StatusCode)
		}
		secret, _ := os.ReadFile(c.SecretFile)
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(secret)))
		req.Header.Set("Origin", "https://elsewhere.example")
		if resp, err = hc.Do(req); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("a foreign Origin through the proxy: %d", resp.StatusCode)
		}
		// The agents' side, from the cloud: a conversation's URL with a
		// wrong token.
		cc := &http.Client{Transport: &http.Transport{DialContext: cloudM.DialContext}, Timeout: 10 * time.Second}
		r2, _ := http.NewRequest("POST", fmt.Sprintf("http://127.0.0.1:%d/mcp/0123456789abcdef0123", relayrig.RelayAgentsPort), strings.NewReader(`{}`))
		r2.Header.Set("Authorization", "Bearer wrong")
		if resp, err = cc.Do(r2); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("a wrong conversation token: %d", resp.StatusCode)
		}
	})

	t.Run("the editor face (VS Code's) binds its conversation through the relay", func(t *testing.T) {
		ws := laptopWorkspace(t, "vscode-ws")
		llm := cloudModel(t, cloudM, terminalCall("echo from-vscode > vscode.txt"), says("Done."))
		b := runBridge(t, laptop.Command(bin, "--stdio", "--workspace", ws))
		if _, err := b.client.Initialize(ctxT(t), map[string]any{}); err != nil {
			t.Fatal(err)
		}
		secret, _ := os.ReadFile(c.SecretFile)
		var res struct {
			ConversationID string `json:"conversationId"`
			Via            string `json:"via"`
		}
		params := map[string]any{"serverUrl": c.AgentURL(), "sessionApiKey": c.server.Key, "task": "Go.",
			"relayUrl": c.RelayURL(), "relaySecret": strings.TrimSpace(string(secret)),
			"llm": map[string]any{"model": scriptedModel, "base_url": llm.URL, "api_key": "k"}}
		if err := b.client.Call(ctxT(t), "openhands/connect", params, &res); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Via, `as window "vscode-ws — editor"`) {
			t.Errorf("connect's answer does not say which window the conversation is bound to: %+v", res)
		}
		llm.Wait(60 * time.Second)
		ohtest.WaitFor(t, "the command's file in the editor's workspace", func() bool {
			data, err := os.ReadFile(filepath.Join(ws, "vscode.txt"))
			return err == nil && strings.TrimSpace(string(data)) == "from-vscode"
		})
		// The link to the relay drops and comes back: the status says so,
		// for the view and the status bar.
		awaitVia := func(what string, match func(down string) bool) {
			t.Helper()
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
			defer cancel()
			if _, err := b.client.AwaitNotification(ctx, "openhands/did_change_status", func(raw json.RawMessage) bool {
				var st agentserver.Status
				return json.Unmarshal(raw, &st) == nil && strings.Contains(st.Via, "vscode-ws — editor") && match(st.ViaDown)
			}); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
		laptop.LinkDown(t)
		// Why, in a few words: the quiet network's missed heartbeat, or
		// by then the dial again that finds no route.
		awaitVia("the status to say the relay's link is down, and why", func(down string) bool {
			return strings.HasPrefix(down, "the link to the relay at "+c.RelayURL()+" is down (") &&
				(strings.Contains(down, "(the relay did not answer the heartbeat within 5s)") || strings.Contains(down, "(cannot reach it: "))
		})
		laptop.LinkUp(t)
		awaitVia("the status to say the relay's link is back", func(down string) bool { return down == "" })
		// A relay URL without its secret is refused in words.
		params["relaySecret"] = ""
		err := b.client.Call(ctxT(t), "openhands/connect", params, &res)
		if err == nil || !strings.Contains(err.Error(), "pairing secret") {
			t.Errorf("a relay without its secret: %v", err)
		}
	})

	t.Run("a relay installed through the agent-server's own API", func(t *testing.T) {
		public := c.InstalledRelayURL()
		// The laptop's config directory, where the install keeps the
		// secret and `oh-bridge acp` finds it.
		config := t.TempDir()
		secretFile := filepath.Join(config, "oh-bridge", "relay-secret")
		remoteBin := c.server.Home + "/.oh-bridge/bin/oh-bridge"
		t.Cleanup(func() { _ = cloudM.Command("pkill", "-f", remoteBin+" relay").Run() })
		install := func(answer string) ([]byte, error) {
			cmd := laptop.Command(bin, "relay", "install", "--server", c.AgentURL(), "--public-url", public,
				"--agents", fmt.Sprintf("127.0.0.1:%d", relayrig.InstalledAgentsPort), "--editors", fmt.Sprintf("127.0.0.1:%d", relayrig.InstalledEditorsPort))
			cmd.Env = append(os.Environ(), "OH_BRIDGE_SESSION_API_KEY="+c.server.Key, "XDG_CONFIG_HOME="+config)
			cmd.Stdin = strings.NewReader(answer)
			return cmd.CombinedOutput()
		}
		// Asked first: "no" installs nothing.
		out, err := install("n\n")
		if err != nil || !strings.Contains(string(out), "Not installed.") {
			t.Fatalf("declined: %v\n%s", err, out)
		}
		if _, err := os.Stat(remoteBin); err == nil {
			t.Fatal("the binary was uploaded though the person said no")
		}
		if out, err = install("y\n"); err != nil || !strings.Contains(string(out), "The relay runs.") ||
			!strings.Contains(string(out), "oh-bridge acp --server "+c.AgentURL()+" (it finds the relay") {
			t.Fatalf("install: %v\n%s", err, out)
		}
		fi, err := os.Stat(secretFile)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("the secret kept here: %v %v", fi, err)
		}
		kept, _ := os.ReadFile(secretFile)
		if lines := strings.Split(strings.TrimSpace(string(kept)), "\n"); len(lines) != 3 || lines[1] != "relay "+public || lines[2] != "server "+c.AgentURL() {
			t.Fatalf("the secret is not kept with whose it is: %d lines, %q", len(lines), lines[1:])
		}
		ws := laptopWorkspace(t, "installed-ws")
		llm := cloudModel(t, cloudM, terminalCall("echo via-installed > installed.txt"), says("Done."))
		// The server alone: the relay installed beside it is found.
		cmd := laptop.Command(bin, "acp", "--config", "", "--log-file", "-", "--find-server=false", "--server", c.AgentURL())
		cmd.Env = append(os.Environ(), "OH_BRIDGE_SESSION_API_KEY="+c.server.Key, "XDG_CONFIG_HOME="+config,
			"LLM_MODEL="+scriptedModel, "LLM_BASE_URL="+llm.URL, "LLM_API_KEY=k")
		a := runACPProcess(t, cmd)
		s, err := a.call("session/new", map[string]any{"cwd": ws, "mcpServers": []any{}})
		if err != nil {
			t.Fatal(err)
		}
		promptWithin(t, a, s["sessionId"].(string), "Go.", 60*time.Second)
		if data, err := os.ReadFile(filepath.Join(ws, "installed.txt")); err != nil || strings.TrimSpace(string(data)) != "via-installed" {
			t.Fatalf("through the installed relay: %q %v", data, err)
		}
		if !strings.Contains(a.messages(), "through the relay at "+public) {
			t.Errorf("the person was not told the installed relay carries the calls: %q", a.messages())
		}
	})

	t.Run("the relay restarts", func(t *testing.T) {
		c.StopRelay()
		c.StartRelay(t)
		promptWithin(t, one.acp, one.session, "Again.", 120*time.Second)
		if got := one.file(t, "restarted.txt"); got != "after-restart" {
			t.Fatalf("after the restart: %q", got)
		}
	})
}
