package dial_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/dial"
)

// recordingExecutor answers every action with an observation naming its
// id, counts executions per id, and can hold one action until released.
type recordingExecutor struct {
	mu      sync.Mutex
	runs    map[int]int
	order   []int
	holdID  int
	held    chan struct{}
	release chan struct{}
}

func newExecutor(holdID int) *recordingExecutor {
	return &recordingExecutor{runs: map[int]int{}, holdID: holdID, held: make(chan struct{}, 1), release: make(chan struct{})}
}

func (x *recordingExecutor) execute(ctx context.Context, action json.RawMessage) (json.RawMessage, error) {
	var a struct {
		ID   int `json:"id"`
		Args struct {
			Command string `json:"command"`
		} `json:"args"`
	}
	json.Unmarshal(action, &a)
	x.mu.Lock()
	x.runs[a.ID]++
	x.order = append(x.order, a.ID)
	x.mu.Unlock()
	if a.ID == x.holdID {
		x.held <- struct{}{}
		<-x.release
	}
	return json.Marshal(map[string]any{"observation": "run", "cause": a.ID, "content": "ran " + a.Args.Command, "extras": map[string]any{}})
}

func (x *recordingExecutor) count(id int) int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.runs[id]
}

// awaitStatus polls the session until ok holds; status changes come from
// the server's messages, so they settle asynchronously.
func awaitStatus(t *testing.T, s *dial.Session, ok func(dial.Status) bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if ok(s.Status()) {
			return
		}
	}
	t.Fatalf("status never settled: %+v", s.Status())
}

func actions(commands ...string) []map[string]any {
	var out []map[string]any
	for _, c := range commands {
		out = append(out, map[string]any{"action": "run", "args": map[string]any{"command": c}})
	}
	return out
}

// observationsOf collects the stand-in's OBSERVATION lines by cause.
func observationCauses(t *testing.T, p *peer, n int) map[int]int {
	t.Helper()
	got := map[int]int{}
	for range n {
		line := p.AwaitLine(t, "OBSERVATION ")
		var v struct {
			Observation struct{ Cause int }
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("bad OBSERVATION line %s", line)
		}
		got[v.Observation.Cause]++
	}
	return got
}

func TestSessionExecutesScriptedActions(t *testing.T) {
	p := startPeer(t, "--script", writeJSON(t, actions("make", "make test", "git diff")))
	x := newExecutor(-1)
	var mu sync.Mutex
	var states []string
	var events []json.RawMessage
	s, err := dial.Connect(ctxT(t), dial.SessionOptions{
		ServerURL:    p.URL,
		Task:         "build the project",
		Registration: map[string]any{"workspace": map[string]any{"name": "w", "path": "/w"}},
		Execute:      x.execute,
		OnStatus:     func(st dial.Status) { mu.Lock(); states = append(states, st.State); mu.Unlock() },
		OnEvent:      func(e json.RawMessage) { mu.Lock(); events = append(events, e); mu.Unlock() },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	reg := p.AwaitLine(t, "REGISTERED ")
	if !strings.Contains(reg, `"path": "/w"`) {
		t.Fatalf("registration payload not passed on: %s", reg)
	}
	p.AwaitLine(t, "SCRIPT_DONE")
	if got := observationCauses(t, p, 3); len(got) != 3 {
		t.Fatalf("observations by cause: %v", got)
	}
	x.mu.Lock()
	order := fmt.Sprint(x.order)
	x.mu.Unlock()
	// Event 0 is the task; each action is followed by its observation.
	if order != "[1 3 5]" {
		t.Fatalf("actions executed in order %s, want [1 3 5]", order)
	}
	awaitStatus(t, s, func(st dial.Status) bool {
		return st.State == dial.StateConnected && st.ConversationID != "" && st.PendingObservations == 0 && strings.HasPrefix(st.RuntimeID, "rt-")
	})
	mu.Lock()
	defer mu.Unlock()
	if len(events) == 0 || !strings.Contains(string(events[0]), "build the project") {
		t.Fatalf("the task was not the first event: %d events", len(events))
	}
	if states[0] != dial.StateConnecting {
		t.Fatalf("states %v", states)
	}
}

func TestSessionFailuresInPlainWords(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	var last dial.Status
	_, err := dial.Connect(ctxT(t), dial.SessionOptions{ServerURL: "http://" + addr, OnStatus: func(s dial.Status) { last = s }})
	want := "cannot reach OpenHands at http://" + addr + ": connection refused — is the OpenHands server running?"
	if err == nil || err.Error() != want || last.State != dial.StateFailed || last.Error != want {
		t.Fatalf("got %v / %+v, want %q and state failed", err, last, want)
	}

	p := startPeer(t, "--session-api-key", "k")
	_, err = dial.Connect(ctxT(t), dial.SessionOptions{ServerURL: p.URL, ConversationID: "nope", SessionAPIKey: "k"})
	var nf *dial.NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("unknown conversation: %v", err)
	}
	_, err = dial.Connect(ctxT(t), dial.SessionOptions{ServerURL: p.URL, SessionAPIKey: "bad"})
	var ke *dial.APIKeyError
	if !errors.As(err, &ke) || !strings.Contains(err.Error(), "refused the session API key") {
		t.Fatalf("wrong key: %v", err)
	}
}

// TestSessionSurvivesServerRestartMidAction kills the server while an
// action runs, restarts it on the same port with its stored state, and
// checks that every action ran once and every observation arrived once.
func TestSessionSurvivesServerRestartMidAction(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	state := filepath.Join(t.TempDir(), "state.json")
	script := writeJSON(t, actions("a0", "a1 slow", "a2"))
	args := []string{"--port", port, "--state", state, "--script", script, "--ping", "0.5"}
	p1 := startPeer(t, args...)

	// Events: a0 (0), its observation (1), a1 (2) — hold a1.
	x := newExecutor(2)
	var mu sync.Mutex
	var states []string
	s, err := dial.Connect(ctxT(t), dial.SessionOptions{
		ServerURL: p1.URL, Execute: x.execute, MinBackoff: 100 * time.Millisecond, MaxBackoff: 500 * time.Millisecond,
		OnStatus: func(st dial.Status) { mu.Lock(); states = append(states, st.State); mu.Unlock() },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	<-x.held // action 1 is running
	p1.Cmd.Process.Kill()
	p1.Cmd.Wait()
	close(x.release) // it finishes while the server is down
	awaitStatus(t, s, func(st dial.Status) bool {
		return st.State == dial.StateReconnecting && st.RunningActions == 0 &&
			strings.Contains(st.Error, "closed the connection") && st.PendingObservations == 1
	})

	p2 := startPeer(t, args...)
	p2.AwaitLine(t, "SCRIPT_DONE")
	delivered := observationCauses(t, p1, 1) // p1 recorded a0 before it died
	for cause, n := range observationCauses(t, p2, 2) {
		delivered[cause] += n
	}
	if len(delivered) != 3 {
		t.Fatalf("observations delivered per cause: %v, want three actions", delivered)
	}
	for cause, n := range delivered {
		if n != 1 {
			t.Fatalf("observation for action %d delivered %d times: %v", cause, n, delivered)
		}
		if runs := x.count(cause); runs != 1 {
			t.Fatalf("action %d ran %d times", cause, runs)
		}
	}
	// The server's broadcast of the last observation confirms it.
	awaitStatus(t, s, func(st dial.Status) bool {
		return st.State == dial.StateConnected && st.PendingObservations == 0 && st.LastEventID >= 5
	})
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(strings.Join(states, " "), "reconnecting") {
		t.Fatalf("status never said reconnecting: %v", states)
	}
}

func TestTwoBridgesRegisterAtOnce(t *testing.T) {
	p := startPeer(t, "--script", writeJSON(t, actions("echo one")))
	var sessions []*dial.Session
	var execs []*recordingExecutor
	for i := range 2 {
		x := newExecutor(-1)
		s, err := dial.Connect(ctxT(t), dial.SessionOptions{ServerURL: p.URL, Task: fmt.Sprint("task ", i), Execute: x.execute,
			Registration: map[string]any{"workspace": map[string]any{"name": fmt.Sprint("w", i)}}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		sessions = append(sessions, s)
		execs = append(execs, x)
	}
	p.AwaitLine(t, "SCRIPT_DONE")
	p.AwaitLine(t, "SCRIPT_DONE")
	if sessions[0].Status().RuntimeID == sessions[1].Status().RuntimeID {
		t.Fatal("both bridges got the same runtime id")
	}
	for i, x := range execs {
		if x.count(1) != 1 {
			t.Fatalf("bridge %d ran its conversation's action %d times, want once", i, x.count(1))
		}
	}
}
