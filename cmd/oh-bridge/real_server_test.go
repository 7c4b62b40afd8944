package main_test

import (
	"sync"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/realserver"
	"github.com/oh-bridge/oh-bridge/internal/scriptedllm"
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
	srv  *realserver.Server
	err  error
}

// realServer is the shared agent-server of the lock (realserver.Latest:
// 1.58.2; realserver.Canvas: 1.49.1). Outside CI the test is skipped when
// it is not installed. A failing test prints the end of its log.
func realServer(t *testing.T, lock string) *realserver.Server {
	t.Helper()
	venv := realserver.Need(t, lock)
	realServers.mu.Lock()
	if realServers.byID == nil {
		realServers.byID = map[string]*sharedServer{}
	}
	s := realServers.byID[lock]
	if s == nil {
		s = &sharedServer{}
		realServers.byID[lock] = s
	}
	realServers.mu.Unlock()
	s.once.Do(func() {
		s.srv, s.err = realserver.Launch(venv, realserver.Options{})
		if s.err == nil {
			t.Logf("%s started in %v, shared by this binary's tests", lock, s.srv.Startup.Round(time.Millisecond))
		}
	})
	if s.err != nil {
		t.Fatal(s.err)
	}
	from := len(s.srv.Log())
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the agent-server's log during the test:\n%s", tail(s.srv.Log()[from:], 20000))
		}
	})
	return s.srv
}

// stopRealServers stops the shared agent-servers (TestMain).
func stopRealServers() {
	realServers.mu.Lock()
	defer realServers.mu.Unlock()
	for _, s := range realServers.byID {
		if s.srv != nil {
			s.srv.Stop()
		}
	}
}

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
