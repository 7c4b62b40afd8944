package agentserver_test

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/internal/realserver"
	"github.com/oh-bridge/oh-bridge/internal/scriptedllm"
)

// maxRuns is the shared 1.58.2 server's max_concurrent_runs: two, so
// that TestServerBusy fills it with two held conversations, while every
// other test, one conversation at a time, stays clear of it even while
// the run before still gives its slot back.
const maxRuns = "2"

var shared struct {
	sync.Mutex
	servers map[string]*realserver.Server
	failed  map[string]error
}

// sharedServer is the package's real agent-server of the lock, started
// by the first test that asks (10 to 40 s) and stopped after the last.
// Tests use it one after the other, each with conversations of its own.
// It is skipped outside CI, and fails in CI, when not installed.
func sharedServer(t *testing.T, lock string) *realserver.Server {
	t.Helper()
	venv := realserver.Need(t, lock)
	shared.Lock()
	defer shared.Unlock()
	if err := shared.failed[lock]; err != nil {
		t.Fatal(err)
	}
	s := shared.servers[lock]
	if s == nil {
		o := realserver.Options{}
		if lock == realserver.Latest {
			o.Env = []string{"OH_MAX_CONCURRENT_RUNS=" + maxRuns}
		}
		var err error
		if s, err = realserver.Launch(venv, o); err != nil {
			if shared.failed == nil {
				shared.failed = map[string]error{}
			}
			shared.failed[lock] = err
			t.Fatal(err)
		}
		t.Logf("%s started in %v", lock, s.Startup.Round(time.Millisecond))
		if shared.servers == nil {
			shared.servers = map[string]*realserver.Server{}
		}
		shared.servers[lock] = s
		agentserver.AtExit(s.Stop)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the agent-server's log:\n%s", s.Log())
		}
	})
	return s
}

// scriptedLLM is the agent's llm for a scripted model.
func scriptedLLM(m *scriptedllm.Server) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"model": "openai/oh-scripted", "base_url": m.URL, "api_key": "sk-scripted",
		"num_retries": 0, "usage_id": "agent"})
	return b
}
