//go:build linux

package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
	"github.com/oh-bridge/oh-bridge/internal/ohtest/logbuf"
	"github.com/oh-bridge/oh-bridge/rpc"
)

// A conversation outlives the bridge that created it: its agent keeps the
// mcp_config naming that bridge's endpoint. A later bridge attached to it
// (ACP session/load and session/resume after the editor restarted, VS Code
// reopening it with openhands/connect and its conversationId) serves the
// tools there, so the agent's next command runs, and its result reaches
// the agent-server.

// reattachScript: the first message runs a command, the second another.
func reattachScript(t *testing.T) *agentservertest.Peer {
	t.Helper()
	script, _ := json.Marshal(map[string]any{"turns": [][]map[string]any{
		{{"tool": "terminal", "arguments": map[string]any{"command": "echo first-$((1+1))"}}},
		{{"message": "Done."}},
		{{"tool": "terminal", "arguments": map[string]any{"command": "echo second-$((2+2))"}}},
		{{"message": "Done again."}},
	}})
	file := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(file, script, 0o600)
	// The stand-in, for speed: each test needs its own server, whose
	// agent's script runs across a bridge killed and started again; its
	// events are held to the real server's by agentserver's
	// TestStandInKeepsToTheRealServer.
	return agentservertest.Start(t, "--script", file)
}

// awaitCommand waits for the stand-in's result of a terminal call and
// checks the agent got the command's output.
func awaitCommand(t *testing.T, p *agentservertest.Peer, want string) {
	t.Helper()
	r := awaitResult(t, p)
	if r.Tool != "terminal" || r.IsError || !strings.Contains(r.Text, want) {
		t.Fatalf("the agent's command did not run: the agent-server got %+v, want the output %q", r, want)
	}
}

// acpProcess is `oh-bridge acp` on stdio, with a client that allows every
// action it is asked about.
type acpProcess struct {
	*acpLines
	t      *testing.T
	cmd    *exec.Cmd
	stderr *logbuf.Buffer
	done   chan struct{}
	// answer, when set, answers the bridge's requests (its result, or nil
	// for handle's default); set it before the bridge asks.
	answer func(m map[string]any) any

	notesMu sync.Mutex
	said    []string // the agent's messages (agent_message_chunk texts)
}

// messages are the agent's messages the client was sent so far.
func (a *acpProcess) messages() string {
	a.notesMu.Lock()
	defer a.notesMu.Unlock()
	return strings.Join(a.said, "\n")
}

func startACPProcess(t *testing.T, serverURL string, env []string, answer ...func(map[string]any) any) *acpProcess {
	t.Helper()
	return startACPProcessIn(t, "", serverURL, env, answer...)
}

// startACPProcessIn is startACPProcess with the bridge's working
// directory dir ("" for the test's).
func startACPProcessIn(t *testing.T, dir, serverURL string, env []string, answer ...func(map[string]any) any) *acpProcess {
	t.Helper()
	cmd := exec.Command(bin, "acp", "--config", "", "--log-file", "-")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OH_BRIDGE_SERVER_URL="+serverURL, "LLM_MODEL=stand-in/scripted", "LLM_API_KEY=k")
	cmd.Env = append(cmd.Env, env...)
	return runACPProcess(t, cmd, answer...)
}

// runACPProcess starts cmd, an `oh-bridge acp` (run however the test
// needs), and initializes it.
func runACPProcess(t *testing.T, cmd *exec.Cmd, answer ...func(map[string]any) any) *acpProcess {
	t.Helper()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	a := &acpProcess{acpLines: newACPLines(stdin), t: t, cmd: cmd, stderr: &logbuf.Buffer{}, done: make(chan struct{})}
	if len(answer) > 0 {
		a.answer = answer[0]
	}
	cmd.Stderr = a.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); close(a.done) }()
	go a.read(stdout, a.handle)
	t.Cleanup(func() {
		a.kill()
		if t.Failed() {
			t.Logf("oh-bridge acp (pid %d) log:\n%s", cmd.Process.Pid, a.stderr.String())
		}
	})
	if _, err := a.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	return a
}

// kill ends the process as an editor's crash or restart does.
func (a *acpProcess) kill() {
	a.cmd.Process.Kill()
	<-a.done
}

// call sends a request and waits for its answer: the result, or the
// error's message.
func (a *acpProcess) call(method string, params any) (map[string]any, error) {
	select {
	case m := <-a.request(method, params):
		if e, ok := m["error"].(map[string]any); ok {
			return nil, fmt.Errorf("%v", e["message"])
		}
		res, _ := m["result"].(map[string]any)
		return res, nil
	case <-a.done:
		return nil, fmt.Errorf("%s: the bridge exited", method)
	case <-time.After(30 * time.Second):
		return nil, fmt.Errorf("%s: no answer within 30s", method)
	}
}

// handle allows every action the bridge asks about, and answers its
// other requests that this client serves none.
func (a *acpProcess) handle(m map[string]any) {
	if m["method"] == "session/update" {
		var n struct {
			Params struct {
				Update struct {
					SessionUpdate string
					Content       struct{ Text string }
				}
			}
		}
		raw, _ := json.Marshal(m)
		if json.Unmarshal(raw, &n) == nil && n.Params.Update.SessionUpdate == "agent_message_chunk" {
			a.notesMu.Lock()
			a.said = append(a.said, n.Params.Update.Content.Text)
			a.notesMu.Unlock()
		}
	}
	if a.answer != nil && m["id"] != nil {
		if res := a.answer(m); res != nil {
			a.send(map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": res})
			return
		}
	}
	switch {
	case m["method"] == "session/request_permission":
		a.send(map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}})
	case m["id"] != nil:
		a.send(map[string]any{"jsonrpc": "2.0", "id": m["id"], "error": map[string]any{"code": -32601, "message": "not served by this client"}})
	}
}

func (a *acpProcess) prompt(sessionID, text string) {
	a.t.Helper()
	if _, err := a.call("session/prompt", map[string]any{"sessionId": sessionID, "prompt": []any{map[string]any{"type": "text", "text": text}}}); err != nil {
		a.t.Fatal(err)
	}
}

// acpConversation has a first bridge create a conversation whose agent
// runs a command, then kills that bridge.
func acpConversation(t *testing.T, p *agentservertest.Peer, ws string, env []string) string {
	t.Helper()
	first := startACPProcess(t, p.URL, env)
	s, err := first.call("session/new", map[string]any{"cwd": ws, "mcpServers": []any{}})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := s["sessionId"].(string)
	first.prompt(id, "Run the first command.")
	awaitCommand(t, p, "first-2")
	first.kill()
	return id
}

func TestReattachACP(t *testing.T) {
	p := reattachScript(t)
	for _, method := range []string{"session/load", "session/resume"} {
		t.Run(method, func(t *testing.T) {
			ws := t.TempDir()
			env, _ := acpHome(t)
			id := acpConversation(t, p, ws, env)
			second := startACPProcess(t, p.URL, env)
			if _, err := second.call(method, map[string]any{"sessionId": id, "cwd": ws, "mcpServers": []any{}}); err != nil {
				t.Fatal(err)
			}
			second.prompt(id, "Run the second command.")
			awaitCommand(t, p, "second-4")
		})
	}
}

// TestReattachVSCode: the editor's bridge reopens a conversation a bridge
// now gone created, as the view's History list or a window reload does.
func TestReattachVSCode(t *testing.T) {
	p := reattachScript(t)
	ws := t.TempDir()
	env, _ := acpHome(t)
	connect := func(params map[string]any) (*bridge, string) {
		b := startBridgeEnv(t, env, "--stdio", "--workspace", ws)
		b.client.OnRequest = func(method string, _ json.RawMessage) (any, *rpc.Error) {
			if method != "session/request_permission" {
				return nil, &rpc.Error{Code: rpc.CodeMethodNotFound, Message: method}
			}
			return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}, nil
		}
		if _, err := b.client.Initialize(ctxT(t), map[string]any{"capabilities": map[string]any{"permissions": map[string]any{"requestPermission": true}}}); err != nil {
			t.Fatal(err)
		}
		params["serverUrl"] = p.URL
		var res struct {
			ConversationID string `json:"conversationId"`
		}
		if err := b.client.Call(ctxT(t), "openhands/connect", params, &res); err != nil {
			t.Fatal(err)
		}
		return b, res.ConversationID
	}
	first, id := connect(map[string]any{"llm": map[string]any{"model": "m"}, "task": "Run the first command."})
	awaitCommand(t, p, "first-2")
	first.cmd.Process.Kill()
	<-first.done

	second, again := connect(map[string]any{"conversationId": id})
	if again != id {
		t.Fatalf("attached to %q, want %q", again, id)
	}
	if err := second.client.Call(ctxT(t), "openhands/send_message", map[string]any{"text": "Run the second command."}, nil); err != nil {
		t.Fatal(err)
	}
	awaitCommand(t, p, "second-4")
}

// TestReattachPortTaken: another program took the port the agent reaches
// its tools at; attaching says so, naming the port and what to do.
func TestReattachPortTaken(t *testing.T) {
	p := reattachScript(t)
	ws := t.TempDir()
	env, _ := acpHome(t)
	id := acpConversation(t, p, ws, env)
	port := agentPort(t, p.URL, id)
	ln, err := net.Listen("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("the test cannot take port %d: %v", port, err)
	}
	defer ln.Close()
	second := startACPProcess(t, p.URL, env)
	_, err = second.call("session/load", map[string]any{"sessionId": id, "cwd": ws, "mcpServers": []any{}})
	if err == nil {
		t.Fatal("session/load succeeded with the agent's port taken by another program")
	}
	for _, want := range []string{fmt.Sprintf("port %d", port), "taken by another program", "sport = :" + strconv.Itoa(port), "attach again"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
}

// agentPort is the port of the bridge's endpoint in the conversation's
// agent's mcp_config, as the agent-server has it.
func agentPort(t *testing.T, serverURL, id string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, serverURL+"/api/conversations/"+id, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var info struct {
		Agent struct {
			MCPConfig map[string]struct {
				URL string `json:"url"`
			} `json:"mcp_config"`
		} `json:"agent"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(info.Agent.MCPConfig["oh-bridge"].URL)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())
	if port == 0 {
		t.Fatalf("the agent names no endpoint of the bridge: %+v", info)
	}
	return port
}
