package main

import (
	"os"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/internal/ohtest/logbuf"
	"github.com/oh-bridge/oh-bridge/internal/realserver"

	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
	"github.com/oh-bridge/oh-bridge/rpc/rpctest"
)

func buildBridge(t *testing.T, available func() error) string {
	t.Helper()
	if err := available(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	bin, err := rpctest.BuildBridge("../cmd/oh-bridge", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func checkOutput(t *testing.T, text string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("demo output lacks %q:\n%s", want, text)
		}
	}
}

// The story's marks in the demo's output, whichever agent-server plays.
var story = []string{
	"user   ▸ Create a small calculator",
	"AssertionError: -1 != 5",
	"[The command completed with exit code 1.]", // the first test run fails
	"agent  ▸ file_editor str_replace ",
	"    return a + b",
	"OK\n", // and passes after the fix
	"[The command completed with exit code 0.]",
	"agent  ▸ finish: The calculator's tests pass",
}

func checkSummary(t *testing.T, st *summaryV1) {
	t.Helper()
	if st.State != "connected" || st.ExecutionStatus != "finished" || st.RunningActions != 0 || st.Events < 15 {
		t.Errorf("final status %+v", st)
	}
}

// TestDemo runs the README's demo end to end with OpenHands' own
// agent-server, 1.58.2 and 1.49.1 (Agent Canvas's): the bridge, the
// on-demand connection, the MCP tools, and the server's agent whose model
// plays the story's tool calls.
func TestDemo(t *testing.T) {
	dir, bin := t.TempDir(), ""
	for _, lock := range []string{realserver.Latest, realserver.Canvas} {
		t.Run(lock, func(t *testing.T) {
			realserver.Need(t, lock)
			if bin == "" {
				var err error
				if bin, err = rpctest.BuildBridge("../cmd/oh-bridge", dir); err != nil {
					t.Fatal(err)
				}
			}
			var out logbuf.Buffer
			st, err := runReal(bin, lock, false, &out)
			if err != nil {
				t.Fatalf("demo failed: %v\n%s", err, out.String())
			}
			checkOutput(t, out.String(), append([]string{
				"== starting OpenHands' agent-server (" + lock + ", installed by `task openhands`)",
				"agent  ▸ starts with the tools finish, think, file_editor, task_tracker, terminal",
			}, story...)...)
			checkSummary(t, st)
		})
	}
}

// TestDemoStandIn: where the real agent-server is not installed, the demo
// says so and the stand-in plays the story.
func TestDemoStandIn(t *testing.T) {
	bin := buildBridge(t, agentservertest.Available)
	t.Setenv("OH_BRIDGE_OPENHANDS_CACHE", t.TempDir())
	var out logbuf.Buffer
	st, err := run(bin, "auto", realserver.Latest, false, &out)
	if err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out.String())
	}
	checkOutput(t, out.String(), append([]string{
		"== OpenHands' agent-server is not installed here (the real OpenHands agent-server-1.58 is not installed",
		"== so the stand-in plays it",
		"== starting the stand-in for OpenHands' agent-server",
		"agent  ▸ starts with the tools finish, think, file_editor, task_tracker, terminal",
	}, story...)...)
	checkSummary(t, st)
	if _, err := run(bin, "docker", realserver.Latest, false, &out); err == nil || !strings.Contains(err.Error(), "use real, stand-in or auto") {
		t.Errorf("-server docker: %v", err)
	}
}
