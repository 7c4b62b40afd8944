package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/internal/realserver"
	"github.com/oh-bridge/oh-bridge/internal/scriptedllm"
)

// TestServerKilledMidTurn: the agent-server dies while its agent waits on
// a command in the bridge's terminal. The editor is told the connection is
// lost, in words naming the server, and a message it sends meanwhile fails
// in the same words; the bridge reconnects by itself once the server is
// back (started again in the same directory, on the same port, with the
// same keys: the same server to its clients), and the conversation goes on
// from there with the next message. The shared server is killed and
// started again: it serves the tests after this one as before.
func TestServerKilledMidTurn(t *testing.T) {
	srv := realServer(t, realserver.Latest)
	ws := t.TempDir()
	model := scriptedllm.Start(t,
		offered(terminalCall("echo started > started.txt; sleep 45.5; echo never > never.txt")),
		terminalCall("echo after-restart > after.txt"),
		says("Done after the restart."),
	)
	home := t.TempDir()
	e := startEditor(t, ws, []string{"HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(home, ".cache")})
	id := e.connect(map[string]any{"serverUrl": srv.URL, "sessionApiKey": srv.Key, "llm": scriptedLLM(model), "task": "Run the long command."})
	awaitFile(t, filepath.Join(ws, "started.txt"), "started\n", time.Minute)

	e.forgetStatuses()
	restartRealServer(t, realserver.Latest, func() {
		lost := e.awaitStatus(30*time.Second, "the connection to be lost", func(st agentserver.Status) bool {
			return st.State == agentserver.StateReconnecting
		})
		for _, want := range []string{"cannot reach the OpenHands agent-server", srv.URL} {
			if !strings.Contains(lost.Error, want) {
				t.Errorf("the status while the server is down says %q, want it to say %q", lost.Error, want)
			}
		}
		err := e.client.Call(ctxT(t), "openhands/send_message", map[string]any{"text": "Are you there?"}, nil)
		if err == nil || !strings.Contains(err.Error(), "cannot reach the OpenHands agent-server") || !strings.Contains(err.Error(), srv.URL) {
			t.Errorf("send_message to the dead server: %v, want it to say the server at %s cannot be reached", err, srv.URL)
		}
		t.Logf("while the server was down: status %+v; send_message: %v", lost, err)
		e.forgetStatuses()
	})
	back := e.awaitStatus(time.Minute, "the bridge to reconnect", func(st agentserver.Status) bool {
		return st.State == agentserver.StateConnected
	})
	if back.ConversationID != id || back.Error != "" {
		t.Errorf("reconnected to %+v, want conversation %s with no error", back, id)
	}
	if err := e.client.Call(ctxT(t), "openhands/send_message", map[string]any{"text": "Go on."}, nil); err != nil {
		t.Fatal(err)
	}
	awaitFile(t, filepath.Join(ws, "after.txt"), "after-restart\n", time.Minute)
	done := e.awaitStatus(time.Minute, "the agent to finish", finished)
	if done.RunningActions != 0 {
		t.Errorf("the finished conversation counts %d actions running: %+v", done.RunningActions, done)
	}
	played(t, "the model", model)
	if _, err := os.Stat(filepath.Join(ws, "never.txt")); err == nil {
		t.Error("the command the dead server's agent waited on ran to its end")
	}
}
