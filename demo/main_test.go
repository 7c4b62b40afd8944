package main

import (
	"os"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/internal/ohtest/logbuf"

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

// TestDemo runs the README's demo end to end: the agent-server stand-in,
// the bridge, the on-demand connection, the MCP tools and the scripted
// agent.
func TestDemo(t *testing.T) {
	bin := buildBridge(t, agentservertest.Available)
	var out logbuf.Buffer
	st, err := runV1(bin, false, &out)
	if err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out.String())
	}
	checkOutput(t, out.String(),
		"user   ▸ Create a small calculator",
		"agent  ▸ starts with the tools file_editor, task_tracker, terminal, finish, think",
		"AssertionError: -1 != 5",
		"[The command completed with exit code 1.]", // the first test run fails
		"agent  ▸ file_editor str_replace ",
		"    return a + b",
		"OK\n", // and passes after the fix
		"[The command completed with exit code 0.]",
		"agent  ▸ finish: The calculator's tests pass",
	)
	if st.State != "connected" || st.ExecutionStatus != "finished" || st.RunningActions != 0 || st.Events < 15 {
		t.Errorf("final status %+v", st)
	}
}
