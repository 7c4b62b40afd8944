package agentserver_test

import (
	"encoding/json"
	"testing"

	"github.com/oh-bridge/oh-bridge/internal/realserver"
	"github.com/oh-bridge/oh-bridge/internal/scriptedllm"
)

// maxRuns is the shared 1.58.2 server's max_concurrent_runs: two, so
// that TestServerBusy fills it with two held conversations, while every
// other test, one conversation at a time, stays clear of it even while
// the run before still gives its slot back.
const maxRuns = "2"

// sharedServer is the package's real agent-server of the lock
// (realserver.Shared, stopped after the last test), its 1.58.2 with
// maxRuns: every test of the package asks through it, so that all share
// one server started one way.
func sharedServer(t testing.TB, lock string) *realserver.Server {
	t.Helper()
	var o realserver.Options
	if lock == realserver.Latest {
		o.Env = []string{"OH_MAX_CONCURRENT_RUNS=" + maxRuns}
	}
	return realserver.Shared(t, lock, o)
}

// scriptedLLM is the agent's llm for a scripted model.
func scriptedLLM(m *scriptedllm.Server) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"model": "openai/oh-scripted", "base_url": m.URL, "api_key": "sk-scripted",
		"num_retries": 0, "usage_id": "agent"})
	return b
}
