package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest"

	"github.com/oh-bridge/oh-bridge/rpc"
)

// TestFloodWithoutReading sends 100,000 requests and reads no reply: the
// bridge must stop reading while its replies cannot be written, so its
// memory stays bounded, and once the client reads again every request is
// answered.
func TestFloodWithoutReading(t *testing.T) {
	if testing.Short() {
		t.Skip("floods the bridge with 100,000 requests")
	}
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello\n"), 0o644)
	cmd := exec.Command(bin, "--stdio", "--workspace", ws, "--log-level", "error")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	frame := func(body string) []byte {
		return []byte(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
	}
	stdin.Write(frame(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`))
	r := bufio.NewReaderSize(stdout, 1<<16)
	if _, err := rpc.ReadFrame(r); err != nil {
		t.Fatal(err)
	}
	stdin.Write(frame(`{"jsonrpc":"2.0","method":"initialized","params":{}}`))

	// Inline, concurrent and per-path methods, with replies of some size.
	const n = 100_000
	methods := []string{
		`"method":"fs/read_text_file","params":{"path":"a.txt"}`,
		`"method":"fs/stat","params":{"path":"a.txt"}`,
	}
	sent := make(chan int, 1)
	go func() {
		w := bufio.NewWriterSize(stdin, 1<<16)
		i := 1
		for ; i <= n; i++ {
			if _, err := w.Write(frame(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,` + methods[i%len(methods)] + `}`)); err != nil {
				break
			}
		}
		w.Flush()
		sent <- i - 1
	}()

	// Not reading: the bridge's peak memory must level off.
	base := rssKB(t, cmd.Process.Pid, "VmRSS")
	var peaks []int
	for range 6 {
		time.Sleep(500 * time.Millisecond) // the sampling interval: the peak over 3 s, nothing to await
		peaks = append(peaks, rssKB(t, cmd.Process.Pid, "VmHWM"))
	}
	t.Logf("RSS before the flood %d KB; peak while the client does not read: %v KB", base, peaks)
	if last := peaks[len(peaks)-1]; last > 96*1024 {
		t.Errorf("the bridge's peak RSS reached %d KB while the client did not read; want it bounded (< 96 MB)", last)
	}
	if grew := peaks[len(peaks)-1] - peaks[2]; grew > 8*1024 {
		t.Errorf("the bridge's memory kept growing while the client did not read: %v KB", peaks)
	}
	select {
	case <-sent:
		t.Error("all 100,000 requests were taken in while no reply could be written: the bridge did not stop reading")
	default:
	}

	// Reading again: every request is answered.
	seen := make(map[int]bool, n)
	deadline := time.Now().Add(2 * time.Minute)
	for len(seen) < n && time.Now().Before(deadline) {
		body, err := rpc.ReadFrame(r)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		i := bytes.Index(body, []byte(`"id":`))
		if i < 0 {
			continue // a notification
		}
		rest := body[i+5:]
		end := bytes.IndexAny(rest, ",}")
		id, err := strconv.Atoi(string(rest[:end]))
		if err != nil {
			t.Fatalf("a reply with a strange id: %s", body)
		}
		if bytes.Contains(body, []byte(`"error"`)) {
			t.Fatalf("request %d failed: %s", id, body)
		}
		seen[id] = true
	}
	if got := <-sent; got != n {
		t.Errorf("the client could send %d requests, want %d", got, n)
	}
	if len(seen) != n {
		t.Errorf("%d of %d requests answered", len(seen), n)
	}
	t.Logf("peak RSS after answering everything: %d KB", rssKB(t, cmd.Process.Pid, "VmHWM"))
}

// rssKB reads a memory figure of a process from /proc, in KB.
func rssKB(t *testing.T, pid int, field string) int {
	t.Helper()
	st, err := ohtest.Status(pid)
	if err != nil {
		t.Fatal(err)
	}
	kb, ok := st[field]
	if !ok {
		t.Fatalf("no %s in /proc/%d/status", field, pid)
	}
	return kb
}

// TestTerminalOutputNotRead streams 100 MB of a command's output to a
// client that reads nothing for a while: the bridge's memory stays
// bounded, the command still finishes, and the stream's lost counts say
// how much the client missed.
func TestTerminalOutputNotRead(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 100 MB")
	}
	ws := t.TempDir()
	cmd := exec.Command(bin, "--stdio", "--workspace", ws, "--log-level", "error")
	cmd.Env = append(os.Environ(), "HOME="+ws)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	frame := func(body string) []byte {
		return []byte(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
	}
	r := bufio.NewReaderSize(stdout, 1<<16)
	stdin.Write(frame(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{"terminal":{"streaming":true}}}}`))
	if _, err := rpc.ReadFrame(r); err != nil {
		t.Fatal(err)
	}
	stdin.Write(frame(`{"jsonrpc":"2.0","method":"initialized","params":{}}`))
	stdin.Write(frame(`{"jsonrpc":"2.0","id":1,"method":"terminal/run","params":{"command":"head -c 100000000 /dev/zero | tr '\\0' x; echo; echo flood-done","timeoutMs":120000}}`))

	var peaks []int
	for range 10 {
		time.Sleep(time.Second) // the sampling interval: the peak over 10 s, nothing to await
		peaks = append(peaks, rssKB(t, cmd.Process.Pid, "VmHWM"))
	}
	t.Logf("peak RSS while the client reads nothing: %v KB", peaks)
	if last := peaks[len(peaks)-1]; last > 96*1024 {
		t.Errorf("the bridge's peak RSS reached %d KB with 100 MB of unread output; want it bounded (< 96 MB)", last)
	}

	var lost, got int64
	answered := false
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		body, err := rpc.ReadFrame(r)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			ID     *int   `json:"id"`
			Method string `json:"method"`
			Params struct {
				Data string `json:"data"`
				Lost int64  `json:"lost"`
			} `json:"params"`
			Result struct {
				ExitCode   *int  `json:"exitCode"`
				TotalBytes int64 `json:"totalBytes"`
			} `json:"result"`
		}
		json.Unmarshal(body, &m)
		if m.Method == "terminal/did_output" {
			lost += m.Params.Lost
			got += int64(len(m.Params.Data))
		}
		if m.ID != nil && *m.ID == 1 {
			answered = true
			if m.Result.ExitCode == nil || *m.Result.ExitCode != 0 || m.Result.TotalBytes < 100_000_000 {
				t.Errorf("terminal/run: exit %v, total %d bytes; want 0 and the 100 MB", m.Result.ExitCode, m.Result.TotalBytes)
			}
		}
		// The stream's own end (the prompt after the command) may trail
		// the answer.
		if answered && (m.Method == "terminal/did_output" && strings.Contains(m.Params.Data, "flood-done") ||
			m.Method == "terminal/did_change_state" && strings.Contains(string(body), `"idle"`)) {
			t.Logf("streamed %d bytes, lost %d", got, lost)
			if lost == 0 {
				t.Error("no lost count although the client read nothing while 100 MB streamed")
			}
			if got+lost < 100_000_000 {
				t.Errorf("streamed %d + lost %d bytes: the stream must account for all 100 MB", got, lost)
			}
			return
		}
	}
	t.Fatalf("by the deadline: answered %v, streamed %d bytes, lost %d", answered, got, lost)
}
