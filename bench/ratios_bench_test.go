package bench

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/creack/pty"
)

// The issue-13 targets are ratios to a baseline measured in the same run,
// interleaved with the measured calls so both see the same machine load.

// barePTY is a bash with no rc files in a PTY, line editing off as in the
// bridge's terminals, and a prompt no output can contain. A round trip is
// writing "echo hi\r" and reading until the next prompt: the floor of any
// command run through an interactive shell.
type barePTY struct {
	f   *os.File
	buf []byte
}

const barePrompt = "\x1b]9999;ready\x07"

func startBarePTY(b *testing.B, home string) *barePTY {
	cmd := exec.Command("bash", "--norc", "--noprofile", "-i")
	cmd.Env = append(os.Environ(), "HOME="+home, "PS1="+barePrompt, "PROMPT_COMMAND=")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 250, Rows: 50})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close(); cmd.Process.Kill(); cmd.Wait() })
	p := &barePTY{f: f, buf: make([]byte, 32<<10)}
	p.roundTrip(b, "set +o emacs +o vi")
	return p
}

// roundTrip sends line and reads until the prompt that follows it.
func (p *barePTY) roundTrip(b *testing.B, line string) []byte {
	if _, err := p.f.Write([]byte(line + "\r")); err != nil {
		b.Fatal(err)
	}
	var got []byte
	for !bytes.HasSuffix(got, []byte(barePrompt)) {
		n, err := p.f.Read(p.buf)
		if err != nil {
			b.Fatal(err)
		}
		got = append(got, p.buf[:n]...)
	}
	return got
}

// BenchmarkEchoRatios: `echo hi` through terminal/run and through
// OpenHands' run (openhands/execute_action), each beside a bare bash PTY
// round trip in the same loop. Targets: terminal/run ≤ 1.5x bare,
// OpenHands run ≤ 1.2x terminal/run (medians).
func BenchmarkEchoRatios(b *testing.B) {
	p, _ := startOpenHandsBridge(b)
	home := b.TempDir()
	bare := startBarePTY(b, home)
	ctx := context.Background()
	var open struct{ TerminalID string }
	if err := p.client.Call(ctx, "terminal/open", map[string]any{"shell": "bash"}, &open); err != nil {
		b.Fatal(err)
	}
	action := map[string]any{"action": "run", "args": map[string]any{"command": "echo hi"}}
	executeAction(b, p, action) // start the agent shell
	for range 20 {
		p.run(b, open.TerminalID, "echo hi")
		bare.roundTrip(b, "echo hi")
	}
	n := max(b.N, 300)
	lat, oh, base := make([]time.Duration, n), make([]time.Duration, n), make([]time.Duration, n)
	b.ResetTimer()
	for i := range n {
		t := time.Now()
		if got := bare.roundTrip(b, "echo hi"); !bytes.Contains(got, []byte("hi\r\n")) {
			b.Fatalf("bare PTY: %q", got)
		}
		base[i] = time.Since(t)
		t = time.Now()
		if r := p.run(b, open.TerminalID, "echo hi"); r.Output != "hi\n" {
			b.Fatalf("terminal/run: %+v", r)
		}
		lat[i] = time.Since(t)
		t = time.Now()
		if obs := executeAction(b, p, action); obs["content"] != "hi" {
			b.Fatalf("observation %v", obs)
		}
		oh[i] = time.Since(t)
	}
	b.StopTimer()
	bm, rm, om := percentile(base, 0.5), percentile(lat, 0.5), percentile(oh, 0.5)
	b.ReportMetric(us(bm), "bare-pty-p50-µs")
	b.ReportMetric(us(rm), "run-p50-µs")
	b.ReportMetric(us(om), "openhands-p50-µs")
	b.ReportMetric(float64(rm)/float64(bm), "run/bare")
	b.ReportMetric(float64(om)/float64(rm), "openhands/run")
}
