package agentserver_test

// The tests that keep the stand-in (fixtures/peers/agent_server_standin.py)
// rather than the real agent-server: each needs a fault or a version the
// real one cannot give, and says which. TestStandInKeepsToTheRealServer
// holds the stand-in's answers and events to the real server's.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
	"github.com/oh-bridge/oh-bridge/internal/ohtest"
)

// TestInterruptStopsTheCommand: an interrupt that cancels the agent's MCP
// call has the bridge interrupt the command it was running.
func TestInterruptStopsTheCommand(t *testing.T) {
	b := newBridge(t)
	marker := fmt.Sprintf("sleep %d", 40+time.Now().Nanosecond()%20)
	script := writeScript(t, []step{terminal(marker + " && touch late.txt")})
	// The stand-in: an MCP client that cancels its call when the agent is
	// interrupted (--cancel-on-interrupt), as the MCP SDKs do on an abort;
	// OpenHands' own does not (TestInterruptLeavesTheCommand).
	p := agentservertest.Start(t, "--script", script, "--cancel-on-interrupt")
	r := newRecorder()
	o := connectOptions(b, p.URL, r)
	o.Task = "sleep"
	s := connect(t, o)
	r.awaitEvent(t, "ActionEvent")
	ohtest.WaitFor(t, "the command to start", func() bool { return ohtest.Running(marker) })
	if err := s.Interrupt(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.awaitExecution(t, "paused")
	ohtest.WaitFor(t, "the command to be interrupted", func() bool { return !ohtest.Running(marker) })
	events := r.snapshot()
	if !has(events, "AgentErrorEvent") {
		t.Errorf("no AgentErrorEvent for the interrupted action")
	}
	if _, err := os.Stat(filepath.Join(b.dir, "late.txt")); err == nil {
		t.Errorf("the command ran on")
	}
	// The AgentErrorEvent answers the action by its tool call id (it has
	// no action_id): nothing is left running.
	r.await(t, "no running action", func(_ []json.RawMessage, st []agentserver.Status) bool { return last(st).RunningActions == 0 })
}

// TestServerDiesMidAction: an agent-server that dies while a tool call
// runs comes back with the conversation in "error" and the call answered
// by an AgentErrorEvent; the session follows.
func TestServerDiesMidAction(t *testing.T) {
	b := newBridge(t)
	state := t.TempDir()
	script := writeScript(t, []step{terminal("sleep 30")})
	// The stand-in: a server killed mid-call and started again on its
	// state and port in a second (--state); the real one takes 10-40 s.
	p := agentservertest.Start(t, "--script", script, "--state", state)
	port := p.URL[strings.LastIndex(p.URL, ":")+1:]
	r := newRecorder()
	o := connectOptions(b, p.URL, r)
	o.Task = "wait"
	s := connect(t, o)
	r.await(t, "the running action", func(_ []json.RawMessage, st []agentserver.Status) bool { return last(st).RunningActions == 1 })
	p.Stop()
	agentservertest.Start(t, "--script", script, "--state", state, "--port", port)
	r.awaitExecution(t, "error")
	r.await(t, "the AgentErrorEvent", func(ev []json.RawMessage, st []agentserver.Status) bool {
		return has(ev, "AgentErrorEvent") && last(st).RunningActions == 0
	})
	if st := s.Status(); st.State != agentserver.StateConnected {
		t.Errorf("status %+v", st)
	}
}

// TestServerRestart: the agent-server restarts on the same port with its
// conversations on disk; the session finds it again and the conversation
// goes on, no event lost or repeated.
func TestServerRestart(t *testing.T) {
	b := newBridge(t)
	state := t.TempDir()
	script := writeScript(t,
		[]step{terminal("echo before")},
		[]step{{"message": "first part done"}},
		[]step{terminal("echo after")},
		[]step{{"finish": "all done"}},
	)
	// The stand-in: a server stopped and started again on its state and
	// port in a second (--state); the real one takes 10-40 s.
	p := agentservertest.Start(t, "--script", script, "--state", state)
	port := p.URL[strings.LastIndex(p.URL, ":")+1:]
	r := newRecorder()
	o := connectOptions(b, p.URL, r)
	o.Task = "two parts"
	s := connect(t, o)
	r.awaitExecution(t, "finished")
	p.Stop()
	r.await(t, "the session to notice", func(_ []json.RawMessage, st []agentserver.Status) bool {
		return last(st).State == agentserver.StateReconnecting
	})
	if err := s.SendMessage(context.Background(), "go on"); err == nil {
		t.Errorf("sending with the server down succeeded")
	} else if !strings.Contains(err.Error(), "cannot reach the OpenHands agent-server") {
		t.Errorf("sending with the server down: %v", err)
	}
	p2 := agentservertest.Start(t, "--script", script, "--state", state, "--port", port)
	r.await(t, "the session to reconnect", func(_ []json.RawMessage, st []agentserver.Status) bool {
		return last(st).State == agentserver.StateConnected
	})
	if err := s.SendMessage(context.Background(), "go on"); err != nil {
		t.Fatal(err)
	}
	p2.AwaitLine(t, "SCRIPT_DONE ")
	r.await(t, "the finish", func(ev []json.RawMessage, st []agentserver.Status) bool {
		return has(ev, "ObservationEvent(finish)") && last(st).ExecutionStatus == "finished"
	})
	sameOnce(t, persisted(r.snapshot()), allEvents(t, p2.URL, "", s.ConversationID()))
	if obs := observations(r.snapshot()); len(obs) != 2 || !strings.Contains(obs[1], "after") {
		t.Errorf("observations: %q", obs)
	}
}
