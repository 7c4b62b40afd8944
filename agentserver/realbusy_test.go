package agentserver_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/internal/realserver"
	"github.com/oh-bridge/oh-bridge/internal/scriptedllm"
)

// TestServerBusy: an agent-server running as many conversations as it
// allows (1.58.2 with max_concurrent_runs 2, two conversations held in
// their first model call) answers 429 to each request that would start
// another run. The bridge words each as server_busy: a new conversation
// is refused; a message to an idle one is kept but not run, and resuming
// it is refused. Once a run ends, resuming runs the kept message.
// (1.49.1 has no 429: past its limit a run waits for a worker.)
func TestServerBusy(t *testing.T) {
	srv := sharedServer(t, realserver.Latest)
	b := newBridge(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := agentserver.NewClient(srv.URL, srv.Key, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := func(model *scriptedllm.Server, task string) string {
		t.Helper()
		req := map[string]any{
			"agent":     map[string]any{"kind": "Agent", "llm": scriptedLLM(model), "tools": []any{}},
			"workspace": map[string]any{"kind": "LocalWorkspace", "working_dir": b.dir},
			"autotitle": false,
		}
		if task != "" {
			req["initial_message"] = map[string]any{"role": "user", "content": []map[string]any{{"type": "text", "text": task}}, "run": true}
		}
		conv, err := c.StartConversation(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return conv.ID
	}

	// An idle conversation, made first: a creation holds a run slot only
	// while it is made. Its model expects the message kept for it.
	idleModel := scriptedllm.Start(t, scriptedllm.Turn{Content: "Ran it.", Check: func(r *scriptedllm.Request) error {
		if m := r.Messages[len(r.Messages)-1]; m.Role != "user" || m.Text() != "Run this later." {
			return errors.New("the last message is not the one kept: " + m.Text())
		}
		return nil
	}})
	idle := start(idleModel, "")
	// Two running conversations fill the server.
	holds := []chan struct{}{make(chan struct{}), make(chan struct{})}
	released := 0
	defer func() {
		for _, h := range holds[released:] {
			close(h)
		}
	}()
	for _, h := range holds {
		m := scriptedllm.Start(t, scriptedllm.Turn{Hold: h, Content: "Done."})
		start(m, "Wait.")
		select {
		case <-m.Reached(0):
		case <-time.After(2 * time.Minute):
			t.Fatal("a conversation never called its model")
		}
	}

	busy := func(what string, err error, words ...string) {
		t.Helper()
		t.Logf("%s: %v", what, err)
		var be *agentserver.ServerBusyError
		if !errors.As(err, &be) || be.Kind() != "server_busy" {
			t.Errorf("%s: %v (%T); want a ServerBusyError", what, err, err)
			return
		}
		for _, w := range append(words, srv.URL, "HTTP 429", "OH_MAX_CONCURRENT_RUNS") {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", what, err, w)
			}
		}
	}

	// A new conversation through the bridge.
	r := newRecorder()
	o := connectOptions(b, srv.URL, r)
	o.SessionAPIKey, o.LLM, o.Task = srv.Key, scriptedLLM(scriptedllm.Start(t)), "Start."
	if s, err := agentserver.Connect(ctx, o); err == nil {
		s.Close()
		t.Error("a new conversation started on a full server")
	} else {
		busy("a new conversation", err, "refused to start another conversation", "wait for one of its running conversations to finish")
	}

	// The idle conversation, attached to: a message is kept, not run.
	r = newRecorder()
	o = connectOptions(b, srv.URL, r)
	o.SessionAPIKey, o.ConversationID, o.LLM = srv.Key, idle, nil
	s := connect(t, o)
	err = s.SendMessage(ctx, "Run this later.")
	busy("a message", err, "kept the message but did not start the agent on it", "then resume this one to run the message (do not send it again)")
	if be := (*agentserver.ServerBusyError)(nil); errors.As(err, &be) && (!be.Saved || !strings.HasSuffix(be.Request, "/events")) {
		t.Errorf("the message's error: %+v", be)
	}
	r.awaitEvent(t, "MessageEvent")
	busy("resume", s.Resume(ctx), "refused to run the conversation")

	// One run ends: resuming the idle conversation runs the message it
	// kept (the ended run gives its slot back as it winds up).
	close(holds[0])
	released++
	var resumeErr error
	ohtest.WaitFor(t, "a run slot to come back", func() bool {
		resumeErr = s.Resume(ctx)
		var be *agentserver.ServerBusyError
		return !errors.As(resumeErr, &be)
	})
	if resumeErr != nil {
		t.Fatalf("resume once a run ended: %v", resumeErr)
	}
	idleModel.Wait(time.Minute)
	r.awaitExecution(t, "finished")
}
