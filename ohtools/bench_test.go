package ohtools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/oh-bridge/oh-bridge/shellint"
)

// BenchmarkTerminalEcho: terminal `echo hi` through the agent's tools,
// beside the same command on a bare shellint terminal, in the same run.
func BenchmarkTerminalEcho(b *testing.B) {
	a, dir, _ := newBenchAgent(b)
	ctx := context.Background()
	args := json.RawMessage(`{"command": "echo hi"}`)
	for range 20 {
		a.Call(ctx, "terminal", args, nil)
	}
	b.Run("agent", func(b *testing.B) {
		for range b.N {
			if _, err := a.Call(ctx, "terminal", args, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	s, err := shellint.Start(ctx, shellint.Options{Shell: "bash", Cwd: dir, Mode: shellint.ModeNoRC})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.Run("shellint", func(b *testing.B) {
		for range b.N {
			if _, err := s.Run(ctx, "echo hi", shellint.RunOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
