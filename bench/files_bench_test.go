package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The file benchmarks: fs/* and edit/* through the compiled binary, each
// beside a baseline of the same work done directly in this process.

// startBridgeIn starts an initialized bridge whose one root is root.
func startBridgeIn(b *testing.B, root string) *proc {
	b.Helper()
	p := spawn(b, bin, "--stdio", "--workspace", root, "--log-level", "error")
	if _, err := p.client.Initialize(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	return p
}

// oneMiBText is about 1 MiB of source-like lines with a unique marker in
// the middle.
func oneMiBText(marker string) string {
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		if i == 8000 {
			sb.WriteString("    value = " + marker + "\n")
		}
		fmt.Fprintf(&sb, "    line_%06d = compute(%d)  # some ordinary text\n", i, i)
	}
	return sb.String()
}

// manyFiles makes root/many with 10,000 one-byte files and returns its path.
func manyFiles(b *testing.B, root string) string {
	dir := filepath.Join(root, "many")
	if err := os.Mkdir(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range 10_000 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file-%05d.txt", i)), []byte("x"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

func filesMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkStrReplace1MiB: edit/str_replace of one line in a 1 MiB file
// (target: median ≤ 5 ms), beside writing and fsyncing 1 MiB atomically
// in-process, the floor of any durable edit.
func BenchmarkStrReplace1MiB(b *testing.B) {
	root := b.TempDir()
	path := filepath.Join(root, "big.py")
	text := oneMiBText("MARK_000000")
	os.WriteFile(path, []byte(text), 0o644)
	p := startBridgeIn(b, root)
	ctx := context.Background()
	n := 0
	edit := func() time.Duration {
		t := time.Now()
		err := p.client.Call(ctx, "edit/str_replace", map[string]any{"path": path,
			"oldStr": fmt.Sprintf("MARK_%06d", n), "newStr": fmt.Sprintf("MARK_%06d", n+1)}, nil)
		if err != nil {
			b.Fatal(err)
		}
		n++
		return time.Since(t)
	}
	for range 5 {
		edit()
	}
	b.ResetTimer()
	lat := make([]time.Duration, b.N)
	for i := range lat {
		lat[i] = edit()
	}
	b.StopTimer()
	base := make([]time.Duration, 20)
	for i := range base {
		t := time.Now()
		writeSynced(b, filepath.Join(root, "baseline.tmp"), []byte(text))
		base[i] = time.Since(t)
	}
	b.ReportMetric(filesMs(percentile(lat, 0.5)), "p50-ms")
	b.ReportMetric(filesMs(percentile(lat, 0.99)), "p99-ms")
	b.ReportMetric(filesMs(percentile(base, 0.5)), "write+fsync-1MiB-p50-ms")
}

func writeSynced(b *testing.B, path string, data []byte) {
	f, err := os.Create(path + ".new")
	if err != nil {
		b.Fatal(err)
	}
	f.Write(data)
	f.Sync()
	f.Close()
	os.Rename(path+".new", path)
}

// BenchmarkReadTextFile1MiB: fs/read_text_file of a 1 MiB file, beside
// os.ReadFile of it in-process.
func BenchmarkReadTextFile1MiB(b *testing.B) {
	root := b.TempDir()
	path := filepath.Join(root, "big.py")
	os.WriteFile(path, []byte(oneMiBText("MARK")), 0o644)
	p := startBridgeIn(b, root)
	ctx := context.Background()
	read := func() time.Duration {
		t := time.Now()
		var res struct{ Content string }
		if err := p.client.Call(ctx, "fs/read_text_file", map[string]any{"path": path}, &res); err != nil || len(res.Content) < 1<<20 {
			b.Fatal(err, len(res.Content))
		}
		return time.Since(t)
	}
	read()
	b.ResetTimer()
	lat := make([]time.Duration, b.N)
	for i := range lat {
		lat[i] = read()
	}
	b.StopTimer()
	base := make([]time.Duration, 50)
	for i := range base {
		t := time.Now()
		os.ReadFile(path)
		base[i] = time.Since(t)
	}
	b.ReportMetric(filesMs(percentile(lat, 0.5)), "p50-ms")
	b.ReportMetric(filesMs(percentile(lat, 0.99)), "p99-ms")
	b.ReportMetric(filesMs(percentile(base, 0.5)), "os.ReadFile-p50-ms")
}

// BenchmarkListDirectory10k: fs/list_directory of a directory of 10,000
// files, beside os.ReadDir plus an Lstat per entry in-process.
func BenchmarkListDirectory10k(b *testing.B) {
	root := b.TempDir()
	dir := manyFiles(b, root)
	p := startBridgeIn(b, root)
	ctx := context.Background()
	list := func() time.Duration {
		t := time.Now()
		var res struct{ Entries []struct{ Path string } }
		if err := p.client.Call(ctx, "fs/list_directory", map[string]any{"path": dir}, &res); err != nil || len(res.Entries) != 10_000 {
			b.Fatal(err, len(res.Entries))
		}
		return time.Since(t)
	}
	list()
	b.ResetTimer()
	lat := make([]time.Duration, b.N)
	for i := range lat {
		lat[i] = list()
	}
	b.StopTimer()
	base := make([]time.Duration, 10)
	for i := range base {
		t := time.Now()
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			e.Info()
		}
		base[i] = time.Since(t)
	}
	b.ReportMetric(filesMs(percentile(lat, 0.5)), "p50-ms")
	b.ReportMetric(filesMs(percentile(lat, 0.99)), "p99-ms")
	b.ReportMetric(filesMs(percentile(base, 0.5)), "readdir+lstat-p50-ms")
}

// BenchmarkWatchStart50k: a workspace of 50,000 files in 500 directories.
// It measures initialize (which must not wait for the watcher), the time
// from sending initialize until fs/watch_status {wait: true} answers (the
// watcher has walked the tree and watches every directory), and the RSS of
// the bridge once it watches, beside the idle RSS of a bridge on an empty
// workspace.
func BenchmarkWatchStart50k(b *testing.B) {
	root := b.TempDir()
	for d := range 500 {
		dir := filepath.Join(root, fmt.Sprintf("pkg%03d", d))
		os.Mkdir(dir, 0o755)
		for f := range 100 {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.go", f)), nil, 0o644)
		}
	}
	ctx := context.Background()
	var initTotal, readyTotal time.Duration
	var rssTotal float64
	b.ResetTimer()
	for range b.N {
		p := spawn(b, bin, "--stdio", "--workspace", root, "--log-level", "error")
		// The process is up once it answers anything; time initialize alone.
		if err := p.client.Call(ctx, "bridge/info", nil, nil); err == nil {
			b.Fatal("bridge/info answered before initialize")
		}
		t := time.Now()
		if _, err := p.client.Initialize(ctx, nil); err != nil {
			b.Fatal(err)
		}
		initTotal += time.Since(t)
		var st struct{ State string }
		if err := p.client.Call(ctx, "fs/watch_status", map[string]any{"wait": true}, &st); err != nil || st.State != "watching" {
			b.Fatal(err, st.State)
		}
		readyTotal += time.Since(t)
		rss, err := rssMB(p.cmd.Process.Pid)
		if err != nil {
			b.Fatal(err)
		}
		rssTotal += rss
		p.stdin.Close()
		p.cmd.Wait()
	}
	b.StopTimer()
	idle := startBridgeIn(b, b.TempDir())
	idleRSS, _ := rssMB(idle.cmd.Process.Pid)
	b.ReportMetric(filesMs(initTotal)/float64(b.N), "ms-initialize")
	b.ReportMetric(filesMs(readyTotal)/float64(b.N), "ms-to-watching")
	b.ReportMetric(rssTotal/float64(b.N), "rss-watching-MB")
	b.ReportMetric(idleRSS, "rss-idle-empty-MB")
}
