//go:build linux

package main_test

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest/shellplant"

	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/rpc/rpctest"
)

// Hostile input the agent plants in the workspace from its terminal
// (issue 22), against the built binary over --stdio: the file system state
// is made by bash, as the agent's command would make it, and the editor's
// requests follow.

// hostileBridge starts the bridge on ws and initializes it.
func hostileBridge(t *testing.T, ws string) *bridge {
	t.Helper()
	b := startBridge(t, "--stdio", "--workspace", ws, "--log-level", "error")
	if _, err := b.client.Initialize(ctxT(t), nil); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestListingGitignoreURandom: `ln -s /dev/urandom .gitignore`, then a
// listing that respects .gitignore. The bridge used to read the device
// for ever, keeping every line: 1.2 GB in 7 s and no answer. Now the link
// is refused (it leads out of the roots) and the listing answers. The
// bridge's peak RSS (VmHWM) must stay under 200 MB; a watchdog kills it
// when it passes that, which is how the old code fails here.
func TestListingGitignoreURandom(t *testing.T) {
	ws := t.TempDir()
	shellplant.Run(t, ws, "ln -s /dev/urandom .gitignore && mkdir src && echo 'package a' > src/a.go && ln -s /dev/urandom src/.gitignore")
	b := hostileBridge(t, ws)
	pid := b.cmd.Process.Pid
	const boundKB = 200 * 1024
	over := killOverRSS(t, b, boundKB)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var res struct {
		Entries []struct{ Path, Type string }
	}
	err := b.client.Call(ctx, "fs/list_directory", map[string]any{"path": ".", "respectGitignore": true, "depth": 2}, &res)
	select {
	case kb := <-over:
		t.Fatalf("the bridge's peak RSS passed %d KB (%d KB) listing a workspace whose .gitignore is /dev/urandom; killed", boundKB, kb)
	default:
	}
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range res.Entries {
		got = append(got, strings.TrimPrefix(e.Path, ws+"/")+":"+e.Type)
	}
	if strings.Join(got, " ") != "src:directory src/a.go:file" {
		t.Errorf("listed %v, want src:directory src/a.go:file", got)
	}
	peak := rssKB(t, pid, "VmHWM")
	t.Logf("peak RSS %d KB", peak)
	if peak > boundKB {
		t.Errorf("peak RSS %d KB, over %d KB", peak, boundKB)
	}
}

// killOverRSS watches the bridge's peak RSS (VmHWM) until the test ends
// and kills the bridge when it passes boundKB; the channel then has the
// peak it saw. A test that reads it after its call fails with the figure
// instead of waiting for a bridge that grows without end.
func killOverRSS(t *testing.T, b *bridge, boundKB int) <-chan int {
	t.Helper()
	pid := b.cmd.Process.Pid
	over := make(chan int, 1)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			st, err := ohtest.Status(pid)
			if err != nil {
				return // the bridge is gone
			}
			if kb := st["VmHWM"]; kb > boundKB {
				over <- kb
				b.cmd.Process.Kill()
				return
			}
		}
	}()
	return over
}

// TestListingHugeDirectory: `seq 1 300000 | xargs touch` in a directory,
// then fs/list_directory on it with no limit, and with a limit above the
// maximum. The bridge used to read the whole directory before it looked at
// a limit, and answered every entry when none was given: 300,000 entries,
// a 33 MB answer and a peak RSS of 176-203 MB (killed here at the bound).
// Now a directory is read 1,024 entries at a time and the reading stops
// at the limit: 10,000 entries without one (1.1 MB, peak RSS about 30 MB),
// 50,000 at most (5.5 MB, about 70 MB), with truncated and the limit that
// applied, and the peak RSS stays under 100 MB whatever the directory
// holds. It measures memory and the answer, not time.
func TestListingHugeDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("plants 300,000 files")
	}
	ws := t.TempDir()
	shellplant.Run(t, ws, "mkdir big && cd big && seq 1 300000 | xargs touch")
	b := hostileBridge(t, ws)
	pid := b.cmd.Process.Pid
	const boundKB = 100 * 1024
	over := killOverRSS(t, b, boundKB)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, c := range []struct {
		params map[string]any
		want   int
	}{
		{map[string]any{"path": "big"}, 10_000},
		{map[string]any{"path": "big", "limit": 1_000_000}, 50_000},
	} {
		var raw json.RawMessage
		err := b.client.Call(ctx, "fs/list_directory", c.params, &raw)
		select {
		case kb := <-over:
			t.Fatalf("fs/list_directory %v: the bridge's peak RSS passed %d KB (%d KB) listing 300,000 files; killed", c.params, boundKB, kb)
		default:
		}
		if err != nil {
			t.Fatalf("fs/list_directory %v: %v", c.params, err)
		}
		var res struct {
			Entries   []struct{ Path string }
			Truncated bool
			Limit     int
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			t.Fatal(err)
		}
		t.Logf("fs/list_directory %v: %d entries, truncated %v, limit %d, %d bytes; peak RSS %d KB",
			c.params, len(res.Entries), res.Truncated, res.Limit, len(raw), rssKB(t, pid, "VmHWM"))
		if len(res.Entries) != c.want || !res.Truncated || res.Limit != c.want {
			t.Errorf("fs/list_directory %v: %d entries, truncated %v, limit %d; want %d, true, %d",
				c.params, len(res.Entries), res.Truncated, res.Limit, c.want, c.want)
		}
		if !sort.SliceIsSorted(res.Entries, func(i, j int) bool { return res.Entries[i].Path < res.Entries[j].Path }) {
			t.Errorf("fs/list_directory %v: the entries kept are not sorted by name", c.params)
		}
	}
	// The editor's view of a directory reads at most 50,000 entries too
	// (its text is cut at 16,000 characters anyway).
	var view struct{ Output string }
	err := b.client.Call(ctx, "edit/view", map[string]any{"path": ws + "/big"}, &view)
	select {
	case kb := <-over:
		t.Fatalf("edit/view: the bridge's peak RSS passed %d KB (%d KB) viewing 300,000 files; killed", boundKB, kb)
	default:
	}
	if err != nil || !strings.HasPrefix(view.Output, "Here's the files and directories up to 2 levels deep in "+ws+"/big") || !strings.Contains(view.Output, "<response clipped>") {
		t.Errorf("edit/view of the big directory: %v, %.300q", err, view.Output)
	}
	if peak := rssKB(t, pid, "VmHWM"); peak > boundKB {
		t.Errorf("peak RSS %d KB, over %d KB", peak, boundKB)
	}
}

// TestListingGitignoreFIFO: `mkfifo .gitignore`, then 50 listings. Each
// used to wait in open(2) for a writer that never comes, uncancellable,
// holding a thread (51 calls: 5 threads to 56). Now all 50 answer, and the
// bridge's thread count stays where it was.
func TestListingGitignoreFIFO(t *testing.T) {
	ws := t.TempDir()
	shellplant.Run(t, ws, "mkfifo .gitignore && echo x > a.txt")
	t.Cleanup(func() { unblockFIFO(ws + "/.gitignore") })
	b := hostileBridge(t, ws)
	pid := b.cmd.Process.Pid
	before := rssKB(t, pid, "Threads")

	const n = 50
	answers := make([]<-chan rpctest.Message, 0, n)
	for range n {
		_, ch, err := b.client.Start("fs/list_directory", map[string]any{"path": ".", "respectGitignore": true})
		if err != nil {
			t.Fatal(err)
		}
		answers = append(answers, ch)
	}
	deadline := time.After(time.Minute)
	for i, ch := range answers {
		select {
		case m, ok := <-ch:
			if !ok || m.Error != nil {
				t.Fatalf("listing %d: %v (connection open: %v)", i, m.Error, ok)
			}
		case <-deadline:
			t.Fatalf("%d of %d listings answered in a minute; the rest wait on the FIFO .gitignore (the bridge has %d threads, had %d)",
				i, n, rssKB(t, pid, "Threads"), before)
		}
	}
	after := rssKB(t, pid, "Threads")
	t.Logf("threads: %d before the listings, %d after", before, after)
	if after > before+8 {
		t.Errorf("threads: %d before the listings, %d after", before, after)
	}
}

// unblockFIFO lets a reader blocked opening the FIFO (the old code) go on.
func unblockFIFO(p string) {
	for range 64 {
		fd, err := syscall.Open(p, syscall.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return
		}
		syscall.Close(fd)
	}
}

// TestSpecialFilesOnTheWire: a FIFO and a Unix socket made from a shell.
// fs/stat names their type; fs/read_text_file and fs/write_text_file
// refuse them with 1002 not_regular_file and a message naming the type
// (a FIFO used to be "binary (it contains NUL bytes)" and a "file" to
// fs/stat), and edit/view says what it is too.
func TestSpecialFilesOnTheWire(t *testing.T) {
	ws := t.TempDir()
	shellplant.Run(t, ws, `mkfifo fifo && python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("sock")'`)
	t.Cleanup(func() { unblockFIFO(ws + "/fifo") })
	b := hostileBridge(t, ws)
	ctx := ctxT(t)
	for _, c := range []struct{ name, typ, words string }{
		{"fifo", "fifo", "is a FIFO (named pipe), not a regular file"},
		{"sock", "socket", "is a Unix domain socket, not a regular file"},
	} {
		var st struct {
			Exists bool
			Type   string
		}
		if err := b.client.Call(ctx, "fs/stat", map[string]any{"path": c.name}, &st); err != nil {
			t.Fatal(err)
		}
		if !st.Exists || st.Type != c.typ {
			t.Errorf("fs/stat %s: %+v, want type %q", c.name, st, c.typ)
		}
		for _, call := range []struct {
			method string
			params map[string]any
		}{
			{"fs/read_text_file", map[string]any{"path": c.name}},
			{"fs/write_text_file", map[string]any{"path": c.name, "content": "text\n"}},
		} {
			err := b.client.Call(ctx, call.method, call.params, nil)
			var re *rpc.Error
			if !errors.As(err, &re) {
				t.Errorf("%s %s: %v, want error 1002 not_regular_file", call.method, c.name, err)
				continue
			}
			var data struct{ Kind, Type string }
			if re.Data != nil {
				json.Unmarshal(*re.Data, &data)
			}
			if re.Code != 1002 || data.Kind != "not_regular_file" || data.Type != c.typ || !strings.Contains(re.Message, c.name+" "+c.words) {
				t.Errorf("%s %s: code %d, data %+v, message %q; want 1002, not_regular_file, type %s and %q", call.method, c.name, re.Code, data, re.Message, c.typ, c.words)
			}
		}
		err := b.client.Call(ctx, "edit/view", map[string]any{"path": c.name}, nil)
		if err == nil || !strings.Contains(err.Error(), c.words) {
			t.Errorf("edit/view %s: %v, want a message that says it %s", c.name, err, c.words)
		}
	}
}
