package bench

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/rpc/rpctest"
)

// startOpenHandsBridge starts the bridge with a clean HOME, so the agent
// shell does not load this machine's ~/.bashrc prompt hooks.
func startOpenHandsBridge(b *testing.B) (*proc, string) {
	ws := b.TempDir()
	home := b.TempDir()
	cmd := exec.Command(bin, "--stdio", "--workspace", ws, "--log-level", "error")
	cmd.Env = append(os.Environ(), "HOME="+home)
	p := spawnCmd(b, cmd)
	if _, err := p.client.Initialize(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	return p, ws
}

// spawnCmd is spawn for a prepared command (its environment included).
func spawnCmd(b *testing.B, cmd *exec.Cmd) *proc {
	b.Helper()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	p := &proc{cmd: cmd, stdin: stdin, client: rpctest.NewProcessClient(stdout, stdin)}
	b.Cleanup(func() { stop(stdin, cmd) })
	return p
}

func executeAction(b *testing.B, p *proc, action map[string]any) map[string]any {
	var res struct {
		Observation map[string]any `json:"observation"`
	}
	if err := p.client.Call(context.Background(), "openhands/execute_action", map[string]any{"action": action}, &res); err != nil {
		b.Fatal(err)
	}
	return res.Observation
}

// BenchmarkOpenHandsRunEcho: `echo hi` through openhands/execute_action on
// the persistent agent shell, beside spawning `bash -c 'echo hi'` per
// command in the same run (OpenHands' own tmux runtime takes ~0.62 s).
func BenchmarkOpenHandsRunEcho(b *testing.B) {
	p, _ := startOpenHandsBridge(b)
	action := map[string]any{"action": "run", "args": map[string]any{"command": "echo hi"}}
	executeAction(b, p, action) // start the agent shell
	n := max(b.N, 200)
	lat := make([]time.Duration, n)
	b.ResetTimer()
	for i := range lat {
		t := time.Now()
		obs := executeAction(b, p, action)
		lat[i] = time.Since(t)
		if obs["content"] != "hi" {
			b.Fatalf("observation %v", obs)
		}
	}
	b.StopTimer()
	base := make([]time.Duration, n)
	for i := range base {
		t := time.Now()
		out, err := exec.Command("bash", "-c", "echo hi").Output()
		base[i] = time.Since(t)
		if err != nil || strings.TrimSpace(string(out)) != "hi" {
			b.Fatal(err)
		}
	}
	med, p99 := percentile(lat, 0.5), percentile(lat, 0.99)
	bmed, bp99 := percentile(base, 0.5), percentile(base, 0.99)
	b.ReportMetric(us(med), "median-µs")
	b.ReportMetric(us(p99), "p99-µs")
	b.ReportMetric(us(bmed), "bash-c-median-µs")
	b.ReportMetric(us(bp99), "bash-c-p99-µs")
	b.ReportMetric(float64(med)/float64(bmed), "ratio-to-bash-c")
}

// BenchmarkOpenHandsEditStrReplace1MiB: an oh_aci str_replace on a 1 MiB
// file through openhands/execute_action, alternating two replacements.
func BenchmarkOpenHandsEditStrReplace1MiB(b *testing.B) {
	p, ws := startOpenHandsBridge(b)
	path := filepath.Join(ws, "big.txt")
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		sb.WriteString("line of filler text number ")
		sb.WriteString(strings.Repeat("x", i%40))
		sb.WriteString("\n")
	}
	content := "MARKER_A\n" + sb.String()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	pair := [2]string{"MARKER_A", "MARKER_B"}
	n := max(b.N, 50)
	lat := make([]time.Duration, n)
	b.ResetTimer()
	for i := range lat {
		old, repl := pair[i%2], pair[(i+1)%2]
		action := map[string]any{"action": "edit", "args": map[string]any{
			"command": "str_replace", "path": path, "old_str": old, "new_str": repl, "impl_source": "oh_aci"}}
		t := time.Now()
		obs := executeAction(b, p, action)
		lat[i] = time.Since(t)
		if c, _ := obs["content"].(string); !strings.HasPrefix(c, "The file ") {
			raw, _ := json.Marshal(obs)
			b.Fatalf("observation %s", raw)
		}
	}
	b.StopTimer()
	b.ReportMetric(us(percentile(lat, 0.5)), "median-µs")
	b.ReportMetric(us(percentile(lat, 0.99)), "p99-µs")
}
