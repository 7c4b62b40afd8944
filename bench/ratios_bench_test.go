//go:build unix

package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/shellint"
	"golang.org/x/sys/unix"
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
	p.readPrompt(b) // the first prompt, so each round trip reads its own
	p.roundTrip(b, "set +o emacs +o vi")
	return p
}

// readPrompt reads until the prompt and returns what came before it too.
func (p *barePTY) readPrompt(b *testing.B) []byte {
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

// roundTrip sends line and reads until the prompt that follows it.
func (p *barePTY) roundTrip(b *testing.B, line string) []byte {
	if _, err := p.f.Write([]byte(line + "\r")); err != nil {
		b.Fatal(err)
	}
	return p.readPrompt(b)
}

// drain sends line and reads until the prompt that follows it, keeping
// only a count and the last bytes: a plain read loop.
func (p *barePTY) drain(b *testing.B, line string) int {
	if _, err := p.f.Write([]byte(line + "\r")); err != nil {
		b.Fatal(err)
	}
	total := 0
	var tail []byte
	for !bytes.HasSuffix(tail, []byte(barePrompt)) {
		n, err := p.f.Read(p.buf)
		if err != nil {
			b.Fatal(err)
		}
		total += n
		tail = append(tail, p.buf[:n]...)
		if len(tail) > 64 {
			tail = tail[len(tail)-64:]
		}
	}
	return total
}

// relayedPTY is the bare bash of barePTY behind util-linux script(1): a
// process that only copies bytes between its pipes and the PTY. Any
// design that puts a process between the caller and the shell (the
// bridge's) pays at least this hop; its round trip is the floor of
// terminal/run on the machine.
type relayedPTY struct {
	w   io.Writer
	r   io.Reader
	buf []byte
}

func startRelayedPTY(b *testing.B, home string) *relayedPTY {
	cmd := exec.Command("script", "-q", "-f", "-c", `exec env PS1="$BENCH_PS1" PROMPT_COMMAND= bash --norc --noprofile -i`, "/dev/null")
	cmd.Env = append(os.Environ(), "HOME="+home, "BENCH_PS1="+barePrompt)
	w, _ := cmd.StdinPipe()
	r, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatalf("script(1), the relay baseline: %v", err)
	}
	b.Cleanup(func() { stop(w, cmd) })
	p := &relayedPTY{w: w, r: blockingReader(b, r), buf: make([]byte, 32<<10)}
	p.roundTrip(b, "set +o emacs +o vi")
	return p
}

// roundTrip sends line and reads until the prompt that follows it (the
// first call also reads the first prompt).
func (p *relayedPTY) roundTrip(b *testing.B, line string) []byte {
	if _, err := p.w.Write([]byte(line + "\r")); err != nil {
		b.Fatal(err)
	}
	var got []byte
	for !bytes.HasSuffix(got, []byte(barePrompt)) || !bytes.Contains(got, []byte(line)) {
		n, err := p.r.Read(p.buf)
		if err != nil {
			b.Fatal(err)
		}
		got = append(got, p.buf[:n]...)
	}
	return got
}

// blockingReader reads r's pipe with plain blocking read(2) calls, as the
// bare PTY's master (creack/pty leaves it blocking) is read: a pipe from
// os/exec is read through the runtime's poller, whose wake-up costs more,
// and the three paths must be read alike.
func blockingReader(b *testing.B, r io.Reader) io.Reader {
	f, ok := r.(*os.File)
	if !ok {
		b.Fatalf("%T is not a pipe", r)
	}
	rc, err := f.SyscallConn()
	if err != nil {
		b.Fatal(err)
	}
	fd := -1
	rc.Control(func(p uintptr) { fd, err = unix.FcntlInt(p, unix.F_DUPFD_CLOEXEC, 0) })
	if err != nil {
		b.Fatal(err)
	}
	// The flag belongs to the open pipe, which f shares; f is not read again.
	if err := unix.SetNonblock(fd, false); err != nil {
		b.Fatal(err)
	}
	blocking := os.NewFile(uintptr(fd), "pipe")
	b.Cleanup(func() { blocking.Close() })
	return blocking
}

// rawCall is one request pre-encoded for a rawPeer: the bridge's answer is
// read on the calling goroutine, as the bare PTY's output is, and the
// notifications before it (the terminal's mirror) are skipped.
type rawCall struct {
	frame []byte
	id    []byte // `"id":N,` as the bridge writes it
}

func newRawCall(id int, method string, params any) rawCall {
	body := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		body["params"] = params
	}
	b, err := json.Marshal(body)
	if err != nil {
		panic(err)
	}
	return rawCall{
		frame: fmt.Appendf(nil, "Content-Length: %d\r\n\r\n%s", len(b), b),
		id:    fmt.Appendf(nil, `"id":%d,`, id),
	}
}

// do sends the call and returns its answer's body.
func (p rawPeer) do(b *testing.B, c rawCall) []byte {
	if _, err := p.w.Write(c.frame); err != nil {
		b.Fatal(err)
	}
	for {
		body, err := rpc.ReadFrame(p.r)
		if err != nil {
			b.Fatal(err)
		}
		if bytes.Contains(body[:min(len(body), 40)], c.id) {
			return body
		}
	}
}

// BenchmarkEchoRatios: `echo hi` through terminal/run and through
// OpenHands' run (openhands/execute_action), each beside a bare bash PTY
// round trip in the same loop. Targets: terminal/run ≤ 1.5x bare,
// OpenHands run ≤ 1.2x terminal/run (medians). The same bash behind a
// byte relay (relayedPTY) is timed too: the floor of any terminal reached
// through a process in between.
//
// The bridge is driven as the bare PTY is: a request written, its answer
// read on the same goroutine (rawPeer), so neither side pays for a client
// library's goroutines. Three layers in between are timed too: the same
// shell integration in this process (shellint.Terminal.Run, no JSON-RPC);
// bridge/info, the JSON-RPC floor of any call; and terminal/run through
// the Go test client (rpctest), whose reader goroutine hands each answer
// to the caller.
func BenchmarkEchoRatios(b *testing.B) {
	home := b.TempDir()
	cmd := exec.Command(bin, "--stdio", "--workspace", b.TempDir(), "--log-level", "error")
	cmd.Env = append(os.Environ(), "HOME="+home)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stop(stdin, cmd) })
	raw := rawPeer{w: stdin, r: bufio.NewReaderSize(blockingReader(b, stdout), 64<<10)}
	raw.do(b, newRawCall(0, "initialize", map[string]any{"capabilities": map[string]any{}}))
	var open struct {
		Result struct{ TerminalID string }
	}
	if err := json.Unmarshal(raw.do(b, newRawCall(1, "terminal/open", map[string]any{"shell": "bash"})), &open); err != nil {
		b.Fatal(err)
	}
	run := newRawCall(2, "terminal/run", map[string]any{"terminalId": open.Result.TerminalID, "command": "echo hi"})
	ohRun := newRawCall(3, "openhands/execute_action", map[string]any{"action": map[string]any{"action": "run", "args": map[string]any{"command": "echo hi"}}})
	info := newRawCall(4, "bridge/info", nil)
	wantRun, wantOH := []byte(`"output":"hi\n"`), []byte(`"content":"hi"`)

	client, _ := startOpenHandsBridge(b)
	var clientOpen struct{ TerminalID string }
	if err := client.client.Call(context.Background(), "terminal/open", map[string]any{"shell": "bash"}, &clientOpen); err != nil {
		b.Fatal(err)
	}
	bare := startBarePTY(b, home)
	relay := startRelayedPTY(b, home)
	ctx := context.Background()
	sess, err := shellint.Start(ctx, shellint.Options{Shell: "bash", Cwd: home, Env: map[string]string{"HOME": home}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	for range 20 { // warm up every path
		raw.do(b, run)
		raw.do(b, ohRun)
		client.run(b, clientOpen.TerminalID, "echo hi")
		bare.roundTrip(b, "echo hi")
		relay.roundTrip(b, "echo hi")
	}
	n := max(b.N, 300)
	lat, oh, base := make([]time.Duration, n), make([]time.Duration, n), make([]time.Duration, n)
	inproc, infoLat, viaClient := make([]time.Duration, n), make([]time.Duration, n), make([]time.Duration, n)
	relayed := make([]time.Duration, n)
	b.ResetTimer()
	for i := range n {
		t := time.Now()
		if r, err := sess.Run(ctx, "echo hi", shellint.RunOptions{}); err != nil || r.Output != "hi\n" {
			b.Fatalf("in-process run: %+v %v", r, err)
		}
		inproc[i] = time.Since(t)
		t = time.Now()
		raw.do(b, info)
		infoLat[i] = time.Since(t)
		t = time.Now()
		if r := client.run(b, clientOpen.TerminalID, "echo hi"); r.Output != "hi\n" {
			b.Fatalf("terminal/run: %+v", r)
		}
		viaClient[i] = time.Since(t)
		t = time.Now()
		if got := bare.roundTrip(b, "echo hi"); !bytes.Contains(got, []byte("hi\r\n")) {
			b.Fatalf("bare PTY: %q", got)
		}
		base[i] = time.Since(t)
		t = time.Now()
		if got := relay.roundTrip(b, "echo hi"); !bytes.Contains(got, []byte("hi\r\n")) {
			b.Fatalf("relayed PTY: %q", got)
		}
		relayed[i] = time.Since(t)
		t = time.Now()
		if got := raw.do(b, run); !bytes.Contains(got, wantRun) {
			b.Fatalf("terminal/run: %s", got)
		}
		lat[i] = time.Since(t)
		t = time.Now()
		if got := raw.do(b, ohRun); !bytes.Contains(got, wantOH) {
			b.Fatalf("openhands run: %s", got)
		}
		oh[i] = time.Since(t)
	}
	b.StopTimer()
	bm, rm, om := percentile(base, 0.5), percentile(lat, 0.5), percentile(oh, 0.5)
	b.ReportMetric(us(bm), "bare-pty-p50-µs")
	b.ReportMetric(us(percentile(relayed, 0.5)), "relayed-pty-p50-µs")
	b.ReportMetric(float64(percentile(relayed, 0.5))/float64(bm), "relayed/bare")
	b.ReportMetric(float64(rm)/float64(percentile(relayed, 0.5)), "run/relayed")
	b.ReportMetric(us(percentile(inproc, 0.5)), "in-process-p50-µs")
	b.ReportMetric(us(percentile(infoLat, 0.5)), "bridge-info-p50-µs")
	b.ReportMetric(us(percentile(viaClient, 0.5)), "run-go-client-p50-µs")
	b.ReportMetric(us(rm), "run-p50-µs")
	b.ReportMetric(us(om), "openhands-p50-µs")
	b.ReportMetric(float64(rm)/float64(bm), "run/bare")
	b.ReportMetric(float64(om)/float64(rm), "openhands/run")
}

// BenchmarkOutputRatio: 100 MB of output through terminal/run, beside the
// same command in a bare bash PTY whose output this process reads in a
// plain loop (target: ≥ 0.9x its throughput), alternating.
func BenchmarkOutputRatio(b *testing.B) {
	const size = 100_000_000
	gen := fmt.Sprintf("head -c %d /dev/zero | tr '\\0' a", size)
	p, id, home := startTerminalBridge(b)
	bare := startBarePTY(b, home)
	p.run(b, id, "true")
	var took, baseTook time.Duration
	n := max(b.N, 3)
	b.ResetTimer()
	for range n {
		t := time.Now()
		got := bare.drain(b, gen)
		baseTook += time.Since(t)
		if got < size {
			b.Fatalf("bare PTY read %d bytes, want ≥ %d", got, size)
		}
		t = time.Now()
		r := p.run(b, id, gen)
		took += time.Since(t)
		if r.TotalBytes != size {
			b.Fatalf("output was %d bytes, want %d", r.TotalBytes, size)
		}
	}
	b.StopTimer()
	mbs, base := float64(size)/1e6*float64(n)/took.Seconds(), float64(size)/1e6*float64(n)/baseTook.Seconds()
	b.ReportMetric(mbs, "run-MB/s")
	b.ReportMetric(base, "bare-pty-MB/s")
	b.ReportMetric(mbs/base, "run/bare")
}

// BenchmarkFileRatios: fs/read_text_file of 1 MiB beside os.ReadFile +
// json.Marshal of its content (target ≤ 2x), edit/str_replace on 1 MiB
// beside an atomic write + fsync of it (≤ 1.5x), fs/list_directory of
// 10,000 entries beside os.ReadDir + an Lstat each (≤ 1.5x); medians,
// each call alternating with its baseline.
func BenchmarkFileRatios(b *testing.B) {
	root := b.TempDir()
	big := filepath.Join(root, "big.py")
	text := oneMiBText("MARK_000000")
	os.WriteFile(big, []byte(text), 0o644)
	dir := manyFiles(b, root)
	p := startBridgeIn(b, root)
	ctx := context.Background()
	n := max(b.N, 60) // medians of 60: the disk and the host move single runs a lot
	var read, readBase, edit, editBase, list, listBase []time.Duration
	seq := 0
	b.ResetTimer()
	for range n {
		t := time.Now()
		data, _ := os.ReadFile(big)
		if _, err := json.Marshal(map[string]any{"content": string(data)}); err != nil {
			b.Fatal(err)
		}
		readBase = append(readBase, time.Since(t))
		t = time.Now()
		var res struct{ Content string }
		if err := p.client.Call(ctx, "fs/read_text_file", map[string]any{"path": big}, &res); err != nil || len(res.Content) < 1<<20 {
			b.Fatal(err, len(res.Content))
		}
		read = append(read, time.Since(t))

		t = time.Now()
		writeSynced(b, filepath.Join(root, "baseline.tmp"), []byte(text))
		editBase = append(editBase, time.Since(t))
		t = time.Now()
		if err := p.client.Call(ctx, "edit/str_replace", map[string]any{"path": big,
			"oldStr": fmt.Sprintf("MARK_%06d", seq), "newStr": fmt.Sprintf("MARK_%06d", seq+1)}, nil); err != nil {
			b.Fatal(err)
		}
		seq++
		edit = append(edit, time.Since(t))

		t = time.Now()
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			e.Info()
		}
		listBase = append(listBase, time.Since(t))
		t = time.Now()
		var lr struct{ Entries []struct{ Path string } }
		if err := p.client.Call(ctx, "fs/list_directory", map[string]any{"path": dir}, &lr); err != nil || len(lr.Entries) != 10_000 {
			b.Fatal(err, len(lr.Entries))
		}
		list = append(list, time.Since(t))
	}
	b.StopTimer()
	ratio := func(a, base []time.Duration) float64 {
		return float64(percentile(a, 0.5)) / float64(percentile(base, 0.5))
	}
	b.ReportMetric(filesMs(percentile(read, 0.5)), "read-p50-ms")
	b.ReportMetric(filesMs(percentile(readBase, 0.5)), "readfile+marshal-p50-ms")
	b.ReportMetric(ratio(read, readBase), "read/base")
	b.ReportMetric(filesMs(percentile(edit, 0.5)), "str_replace-p50-ms")
	b.ReportMetric(filesMs(percentile(editBase, 0.5)), "write+fsync-p50-ms")
	b.ReportMetric(ratio(edit, editBase), "str_replace/base")
	b.ReportMetric(filesMs(percentile(list, 0.5)), "list-p50-ms")
	b.ReportMetric(filesMs(percentile(listBase, 0.5)), "readdir+lstat-p50-ms")
	b.ReportMetric(ratio(list, listBase), "list/base")
}
