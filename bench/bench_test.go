package bench

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/rpc/rpctest"
)

var bin string

func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		os.Exit(m.Run()) // no benchmark selected: nothing to build
	}
	code := rpctest.RunWithBridge(m, "../cmd/oh-bridge", &bin)
	stopRealServer()
	os.Exit(code)
}

type proc struct {
	cmd    *exec.Cmd
	client *rpctest.Client
	stdin  io.Closer
}

func spawn(b *testing.B, name string, args ...string) *proc {
	b.Helper()
	return spawnCmd(b, exec.Command(name, args...))
}

func startBridge(b *testing.B) *proc {
	p := spawn(b, bin, "--stdio", "--workspace", b.TempDir(), "--log-level", "error")
	if _, err := p.client.Initialize(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	return p
}

// rawPeer writes pre-encoded frames and reads answers on the calling
// goroutine, so the bridge and the baseline are timed the same way and the
// client library adds nothing.
type rawPeer struct {
	w io.Writer
	r *bufio.Reader
}

func frame(id int) []byte {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"bridge/info"}`, id)
	return []byte(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
}

func (p rawPeer) roundTrips(b *testing.B, n int) []time.Duration {
	f := frame(1)
	lat := make([]time.Duration, n)
	for i := range lat {
		t := time.Now()
		if _, err := p.w.Write(f); err != nil {
			b.Fatal(err)
		}
		if _, err := rpc.ReadFrame(p.r); err != nil {
			b.Fatal(err)
		}
		lat[i] = time.Since(t)
	}
	return lat
}

// stop ends a process started with a stdin pipe: stdin closed, then up to
// 5 s for it to exit before it is killed. The bridge and bash exit on
// their own, and their shells write the history file into the benchmark's
// HOME on the way out: before its temp dir is removed, not during.
func stop(stdin io.Closer, cmd *exec.Cmd) {
	stdin.Close()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// startRaw starts a process for rawPeer use; initialize is sent for the bridge.
func startRaw(b *testing.B, initialize bool, name string, args ...string) rawPeer {
	cmd := exec.Command(name, args...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stop(stdin, cmd) })
	p := rawPeer{w: stdin, r: bufio.NewReader(stdout)}
	if initialize {
		body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{}}}`
		fmt.Fprintf(stdin, "Content-Length: %d\r\n\r\n%s", len(body), body)
		if _, err := rpc.ReadFrame(p.r); err != nil {
			b.Fatal(err)
		}
	}
	return p
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(float64(len(s)-1)*p)]
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// BenchmarkInfoRoundTrip: sequential bridge/info calls (target: median
// ≤ 50 µs), beside the same frames echoed by `cat`.
func BenchmarkInfoRoundTrip(b *testing.B) {
	bridge := startRaw(b, true, bin, "--stdio", "--workspace", b.TempDir(), "--log-level", "error")
	echo := startRaw(b, false, "cat")
	bridge.roundTrips(b, 500) // warm up
	b.ResetTimer()
	lat := bridge.roundTrips(b, b.N)
	b.StopTimer()
	base := echo.roundTrips(b, max(b.N, 1000))
	b.ReportMetric(us(percentile(lat, 0.5)), "p50-µs")
	b.ReportMetric(us(percentile(lat, 0.99)), "p99-µs")
	b.ReportMetric(us(percentile(base, 0.5)), "cat-echo-p50-µs")
	b.ReportMetric(float64(percentile(lat, 0.5))/float64(percentile(base, 0.5)), "ratio-vs-echo")
}

// BenchmarkPipelined: requests written without waiting for answers, read
// back by a second goroutine (target ≥ 50,000 requests/s).
func BenchmarkPipelined(b *testing.B) {
	p := startRaw(b, true, bin, "--stdio", "--workspace", b.TempDir(), "--log-level", "error")
	var batch bytes.Buffer
	for i := range 256 {
		batch.Write(frame(i + 1))
	}
	done := make(chan error, 1)
	b.ResetTimer()
	start := time.Now()
	go func() {
		for range b.N {
			if _, err := rpc.ReadFrame(p.r); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for sent := 0; sent < b.N; sent += 256 {
		chunk := batch.Bytes()
		if rest := b.N - sent; rest < 256 {
			chunk = nil
			for i := range rest {
				chunk = append(chunk, frame(i+1)...)
			}
		}
		if _, err := p.w.Write(chunk); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}

// BenchmarkStartup: process start until initialize is answered (target
// ≤ 15 ms), beside spawning /bin/true.
func BenchmarkStartup(b *testing.B) {
	ws := b.TempDir()
	var bridge, baseline time.Duration
	for range b.N {
		t := time.Now()
		exec.Command("/bin/true").Run()
		baseline += time.Since(t)

		t = time.Now()
		// An empty workspace: the watcher's walk is part of start-up.
		cmd := exec.Command(bin, "--stdio", "--log-level", "error", "--workspace", ws)
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		cmd.Start()
		c := rpctest.NewProcessClient(stdout, stdin)
		if _, err := c.Initialize(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
		bridge += time.Since(t)
		stdin.Close()
		cmd.Wait()
	}
	b.ReportMetric(float64(bridge.Microseconds())/float64(b.N)/1000, "ms-to-initialize")
	b.ReportMetric(float64(baseline.Microseconds())/float64(b.N)/1000, "ms-spawn-true")
}

// BenchmarkIdleRSS: resident memory of an initialized, idle bridge
// (target ≤ 20 MB), after some traffic.
func BenchmarkIdleRSS(b *testing.B) {
	var total float64
	for range b.N {
		p := startBridge(b)
		for range 1000 {
			p.client.Call(context.Background(), "bridge/info", nil, nil)
		}
		rss, err := rssMB(p.cmd.Process.Pid)
		if err != nil {
			b.Fatal(err)
		}
		total += rss
	}
	b.ReportMetric(total/float64(b.N), "rss-MB")
}

func rssMB(pid int) (float64, error) { return statusMB(pid, "VmRSS") }
