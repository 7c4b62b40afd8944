package main_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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
		time.Sleep(500 * time.Millisecond)
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
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return kb
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
