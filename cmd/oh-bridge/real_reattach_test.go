package main_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/internal/realserver"
	"github.com/oh-bridge/oh-bridge/internal/scriptedllm"
)

// TestReattachThroughTheRecord: the editor's bridge restarts (a window
// reload) and reopens a conversation the real agent-server keeps. The
// server hides the token of the agent's MCP server, so the new bridge
// reads it from the endpoint record the first one wrote, serves the tools
// where the agent reaches them, and the agent's next command runs in it.
func TestReattachThroughTheRecord(t *testing.T) {
	srv := realServer(t, realserver.Latest)
	ws := t.TempDir()
	model := scriptedllm.Start(t,
		offered(terminalCall("echo first-$((1+1)) > first.txt")),
		says("Done."),
		terminalCall("echo second-$((2+2)) > second.txt"),
		says("Done again."),
	)
	home := homeDir(t)
	env := []string{"HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(home, ".cache")}
	first := startEditor(t, ws, env)
	id := first.connect(map[string]any{"serverUrl": srv.URL, "sessionApiKey": srv.Key, "llm": scriptedLLM(model), "task": "Run the first command."})
	first.awaitStatus(time.Minute, "the first turn to finish", finished)
	awaitFile(t, filepath.Join(ws, "first.txt"), "first-2\n", time.Second)

	c, err := agentserver.NewClient(srv.URL, srv.Key, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Conversation(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	ep, ok := info.BridgeMCP()
	if !ok || ep.Token != "" {
		t.Fatalf("the server shows the agent's endpoint as %+v (%v); the test needs it to hide the token", ep, ok)
	}
	record := filepath.Join(home, ".cache", "oh-bridge", "endpoints", id+".json")
	if _, err := os.Stat(record); err != nil {
		t.Fatalf("the first bridge recorded no endpoint: %v", err)
	}
	first.cmd.Process.Kill()
	<-first.done

	second := startEditor(t, ws, env)
	if again := second.connect(map[string]any{"serverUrl": srv.URL, "sessionApiKey": srv.Key, "conversationId": id}); again != id {
		t.Fatalf("attached to %q, want %q", again, id)
	}
	if err := second.client.Call(ctxT(t), "openhands/send_message", map[string]any{"text": "Run the second command."}, nil); err != nil {
		t.Fatal(err)
	}
	awaitFile(t, filepath.Join(ws, "second.txt"), "second-4\n", time.Minute)
	second.awaitFinished(model, time.Minute)
}
