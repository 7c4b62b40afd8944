package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest"
)

// The terminal benchmarks run the bridge, and the shells it starts, with an
// empty HOME, so that the machine's own ~/.bashrc (prompt hooks, version
// managers) does not count against the bridge; the bash -c baseline gets
// the same HOME.

func startTerminalBridge(b *testing.B) (*proc, string, string) {
	home := b.TempDir()
	p := spawn(b, "env", "HOME="+home, bin, "--stdio", "--workspace", b.TempDir(), "--log-level", "error")
	ctx := context.Background()
	if _, err := p.client.Initialize(ctx, nil); err != nil {
		b.Fatal(err)
	}
	var open struct{ TerminalID string }
	if err := p.client.Call(ctx, "terminal/open", map[string]any{"shell": "bash"}, &open); err != nil {
		b.Fatal(err)
	}
	return p, open.TerminalID, home
}

type runResult struct {
	Output     string
	ExitCode   *int
	TotalBytes int64
}

func (p *proc) run(b *testing.B, id, command string) runResult {
	var r runResult
	if err := p.client.Call(context.Background(), "terminal/run", map[string]any{"terminalId": id, "command": command}, &r); err != nil {
		b.Fatal(err)
	}
	if r.ExitCode == nil || *r.ExitCode != 0 {
		b.Fatalf("%s: %+v", command, r)
	}
	return r
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkTerminalRunEcho: terminal/run of `echo hi` in a persistent
// terminal, beside spawning `bash -c 'echo hi'` per command (target:
// median ratio ≤ 0.5).
func BenchmarkTerminalRunEcho(b *testing.B) {
	p, id, home := startTerminalBridge(b)
	for range 20 { // warm up
		p.run(b, id, "echo hi")
	}
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := range lat {
		t := time.Now()
		if r := p.run(b, id, "echo hi"); r.Output != "hi\n" {
			b.Fatalf("echo hi: %+v", r)
		}
		lat[i] = time.Since(t)
	}
	b.StopTimer()
	base := make([]time.Duration, max(min(b.N, 500), 50))
	for i := range base {
		cmd := exec.Command("bash", "-c", "echo hi")
		cmd.Env = append(os.Environ(), "HOME="+home)
		t := time.Now()
		if out, err := cmd.Output(); err != nil || string(out) != "hi\n" {
			b.Fatalf("bash -c: %q %v", out, err)
		}
		base[i] = time.Since(t)
	}
	b.ReportMetric(ms(percentile(lat, 0.5)), "p50-ms")
	b.ReportMetric(ms(percentile(lat, 0.99)), "p99-ms")
	b.ReportMetric(ms(percentile(base, 0.5)), "bash-c-p50-ms")
	b.ReportMetric(ms(percentile(base, 0.99)), "bash-c-p99-ms")
	b.ReportMetric(float64(percentile(lat, 0.5))/float64(percentile(base, 0.5)), "ratio-p50")
	b.ReportMetric(float64(percentile(lat, 0.99))/float64(percentile(base, 0.99)), "ratio-p99")
}

// BenchmarkTerminalRunThroughput: 100 MB of output through one
// terminal/run (targets ≥ 200 MB/s, bridge peak RSS ≤ 64 MB), beside the
// same pipeline writing to a pipe instead of a PTY.
func BenchmarkTerminalRunThroughput(b *testing.B) {
	const size = 100_000_000
	gen := fmt.Sprintf("head -c %d /dev/zero | tr '\\0' a", size)
	p, id, home := startTerminalBridge(b)
	p.run(b, id, "true")
	var took time.Duration
	b.ResetTimer()
	for range b.N {
		t := time.Now()
		r := p.run(b, id, gen)
		took += time.Since(t)
		if r.TotalBytes != size {
			b.Fatalf("output was %d bytes, want %d", r.TotalBytes, size)
		}
	}
	b.StopTimer()
	cmd := exec.Command("bash", "-c", gen+" | cat > /dev/null")
	cmd.Env = append(os.Environ(), "HOME="+home)
	t := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatal(err)
	}
	base := time.Since(t)
	hwm, err := statusMB(p.cmd.Process.Pid, "VmHWM")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(size)/1e6*float64(b.N)/took.Seconds(), "MB/s")
	b.ReportMetric(float64(size)/1e6/base.Seconds(), "pipe-MB/s")
	b.ReportMetric(hwm, "peak-rss-MB")
}

// statusMB reads a kB field of /proc/PID/status ("VmRSS"), in MB.
func statusMB(pid int, field string) (float64, error) {
	st, err := ohtest.Status(pid)
	if err != nil {
		return 0, err
	}
	kb, ok := st[field]
	if !ok {
		return 0, fmt.Errorf("no %s for pid %d", field, pid)
	}
	return float64(kb) / 1024, nil
}
