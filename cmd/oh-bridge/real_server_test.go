package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/internal/realserver"
	"github.com/oh-bridge/oh-bridge/internal/scriptedllm"
	"github.com/oh-bridge/oh-bridge/rpc"
)

// The real agent-servers of this test binary, one per lock, each started
// by the first test that needs it (10 to 40 s here) and shared by the
// tests after it: each test makes conversations of its own, with a model
// of its own. TestMain stops them.
var realServers struct {
	mu   sync.Mutex
	byID map[string]*sharedServer
}

type sharedServer struct {
	once sync.Once
	venv string
	// opts start it again as the same server: its directory, port, session
	// key and secret key (which its stored LLM keys are encrypted with).
	opts realserver.Options
	srv  *realserver.Server
	err  error
}

// realServer is the shared agent-server of the lock (realserver.Latest:
// 1.58.2; realserver.Canvas: 1.49.1). Outside CI the test is skipped when
// it is not installed. A failing test prints the end of its log.
func realServer(t *testing.T, lock string) *realserver.Server {
	t.Helper()
	s := shared(t, lock)
	s.once.Do(func() {
		dir, err := os.MkdirTemp("", "oh-shared-agent-server-")
		if err != nil {
			s.err = err
			return
		}
		s.opts = realserver.Options{Dir: dir, Key: "shared-" + filepath.Base(dir), Env: []string{"OH_SECRET_KEY=secret-" + filepath.Base(dir)}}
		s.srv, s.err = realserver.Launch(s.venv, s.opts)
		if s.err != nil {
			return
		}
		u, _ := url.Parse(s.srv.URL)
		s.opts.Port, _ = strconv.Atoi(u.Port())
		t.Logf("%s started in %v, shared by this binary's tests", lock, s.srv.Startup.Round(time.Millisecond))
	})
	if s.err != nil {
		t.Fatal(s.err)
	}
	srv := s.server()
	from := len(srv.Log())
	t.Cleanup(func() {
		if t.Failed() {
			now := s.server()
			if now != srv {
				from = 0
			}
			t.Logf("the agent-server's log during the test:\n%s", tail(now.Log()[from:], 20000))
		}
	})
	return srv
}

func shared(t *testing.T, lock string) *sharedServer {
	venv := realserver.Need(t, lock)
	realServers.mu.Lock()
	defer realServers.mu.Unlock()
	if realServers.byID == nil {
		realServers.byID = map[string]*sharedServer{}
	}
	s := realServers.byID[lock]
	if s == nil {
		s = &sharedServer{venv: venv}
		realServers.byID[lock] = s
	}
	return s
}

func (s *sharedServer) server() *realserver.Server {
	realServers.mu.Lock()
	defer realServers.mu.Unlock()
	return s.srv
}

// restartRealServer kills the shared server of the lock, as a crash does,
// calls down while it is down, and starts it again: the same server to its
// clients (its URL, keys and conversations).
func restartRealServer(t *testing.T, lock string, down func()) *realserver.Server {
	t.Helper()
	s := shared(t, lock)
	old := s.server()
	old.Kill()
	down()
	srv, err := realserver.Launch(s.venv, s.opts)
	if err != nil {
		t.Fatalf("starting the agent-server again: %v", err)
	}
	t.Logf("%s started again in %v", lock, srv.Startup.Round(time.Millisecond))
	realServers.mu.Lock()
	s.srv = srv
	realServers.mu.Unlock()
	return srv
}

// stopRealServers stops the shared agent-servers (TestMain).
func stopRealServers() {
	realServers.mu.Lock()
	defer realServers.mu.Unlock()
	for _, s := range realServers.byID {
		if s.srv != nil {
			s.srv.Stop()
			os.RemoveAll(s.opts.Dir)
		}
	}
}

// tail is the last n bytes of s, marked as cut.
func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// scriptedModel is the agent's LLM for the bridge's conversations: the
// model name and the base URL a conversation's llm takes.
const scriptedModel = "openai/oh-scripted"

// scriptedLLM is the llm object of a conversation whose model is m: no
// retries, so a request off the script fails at once.
func scriptedLLM(m *scriptedllm.Server) map[string]any {
	return map[string]any{"model": scriptedModel, "base_url": m.URL, "api_key": "sk-scripted", "num_retries": 0}
}

// bridgeTools are the tools the agent of a conversation the bridge
// creates is offered: the SDK's finish and think, and the bridge's three.
var bridgeTools = []string{"file_editor", "task_tracker", "terminal", "finish", "think"}

// call is a turn of one tool call.
func call(tool string, args map[string]any) scriptedllm.Turn {
	return scriptedllm.Turn{ToolCalls: []scriptedllm.ToolCall{scriptedllm.Call(tool, args)}}
}

// says is a turn that answers with text and ends the agent's turn.
func says(text string) scriptedllm.Turn { return scriptedllm.Turn{Content: text} }

// offered has the turn check the tools offered.
func offered(turn scriptedllm.Turn) scriptedllm.Turn {
	turn.Tools = bridgeTools
	return turn
}

// terminalCall is a turn running a command in the bridge's terminal.
func terminalCall(command string) scriptedllm.Turn {
	return call("terminal", map[string]any{"command": command})
}

// joined lists turns of several parts.
func joined(parts ...[]scriptedllm.Turn) []scriptedllm.Turn {
	var out []scriptedllm.Turn
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// editor is a bridge on stdio with an editor's client that allows every
// action it is asked about.
type editor struct {
	*bridge
	t *testing.T
}

// startEditor starts a bridge on ws with env added (HOME, XDG_CACHE_HOME:
// where it keeps its endpoint records) and initializes it as VS Code does.
func startEditor(t *testing.T, ws string, env []string) *editor {
	t.Helper()
	b := startBridgeEnv(t, env, "--stdio", "--workspace", ws, "--log-level", "debug")
	b.client.OnRequest = func(method string, _ json.RawMessage) (any, *rpc.Error) {
		if method != "session/request_permission" {
			return nil, &rpc.Error{Code: rpc.CodeMethodNotFound, Message: method}
		}
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}, nil
	}
	if _, err := b.client.Initialize(ctxT(t), map[string]any{"capabilities": map[string]any{"permissions": map[string]any{"requestPermission": true}}}); err != nil {
		t.Fatal(err)
	}
	// Ended as an editor ends it, before the test's directories go: its
	// shells write their history on the way out.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if b.client.Call(ctx, "shutdown", nil, nil) == nil {
			b.client.Notify("exit", nil)
		}
		select {
		case <-b.done:
		case <-ctx.Done():
		}
	})
	return &editor{bridge: b, t: t}
}

// homeDir is a home for bridges the test kills: their shells end in their
// own time and may still write there (their history) while the test ends,
// so it is removed without the check t.TempDir makes.
func homeDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "oh-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// connect calls openhands/connect and answers the conversation's id.
func (e *editor) connect(params map[string]any) string {
	e.t.Helper()
	var res struct {
		ConversationID string `json:"conversationId"`
	}
	// The real server, a Python process beside the whole suite on a
	// loaded machine, has been seen to take past ctxT's 10 s to accept
	// the socket of a conversation it had just created; the editor's own
	// connect has no such bound.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := e.client.Call(ctx, "openhands/connect", params, &res); err != nil {
		e.t.Fatal(err)
	}
	return res.ConversationID
}

// forgetStatuses drops the status notifications received so far: the
// next awaitStatus sees only later ones.
func (e *editor) forgetStatuses() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for {
		if _, err := e.client.AwaitNotification(ctx, "openhands/did_change_status", nil); err != nil {
			return
		}
	}
}

// awaitStatus waits up to limit for an openhands/did_change_status that
// match accepts, and answers it.
func (e *editor) awaitStatus(limit time.Duration, what string, match func(agentserver.Status) bool) agentserver.Status {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var st agentserver.Status
	_, err := e.client.AwaitNotification(ctx, "openhands/did_change_status", func(raw json.RawMessage) bool {
		var s agentserver.Status
		if json.Unmarshal(raw, &s) != nil || !match(s) {
			return false
		}
		st = s
		return true
	})
	if err != nil {
		e.t.Fatalf("waiting for %s: %v", what, err)
	}
	return st
}

// awaitFinished waits until the agent asked its model for every turn of
// the script, then until openhands/status says it finished.
func (e *editor) awaitFinished(m *scriptedllm.Server, limit time.Duration) agentserver.Status {
	e.t.Helper()
	m.Wait(limit)
	return ohtest.Poll(e.t, limit, "openhands/status to say the conversation finished", func() (agentserver.Status, bool) {
		var st agentserver.Status
		if err := e.client.Call(ctxT(e.t), "openhands/status", nil, &st); err != nil {
			e.t.Fatal(err)
		}
		return st, finished(st)
	})
}

// finished is a status of a conversation whose agent is done.
func finished(st agentserver.Status) bool {
	return st.State == agentserver.StateConnected && st.ExecutionStatus == "finished"
}

// awaitFile waits up to limit for a file to hold want.
func awaitFile(t *testing.T, path, want string, limit time.Duration) {
	t.Helper()
	ohtest.Poll(t, limit, fmt.Sprintf("%s to hold %q", path, want), func() (string, bool) {
		b, err := os.ReadFile(path)
		if err != nil {
			return err.Error(), false
		}
		return fmt.Sprintf("%q", b), string(b) == want
	})
}
