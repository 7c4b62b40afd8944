package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func BenchmarkReadTextFile1MiB(b *testing.B) {
	content := strings.Repeat("the quick brown fox jumps over the lazy dog 0123456789\n", (1<<20)/55)
	fs, _ := newFS(b, map[string]string{"big.txt": content})
	ctx := context.Background()
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fs.ReadTextFile(ctx, "big.txt", 0, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkListDirectory10k(b *testing.B) {
	fs, root := newFS(b, nil)
	for i := range 10_000 {
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("f%05d.txt", i)), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte("*.log\nbuild/\n!keep.log\n"), 0o644)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		l, err := fs.ListDirectory(ctx, ".", ListOptions{RespectGitignore: true})
		if err != nil || len(l.Entries) != 10_000 {
			b.Fatalf("%v, %d entries", err, len(l.Entries))
		}
	}
}

// BenchmarkWatchStart50k measures starting a watch on 50,000 files in 2,500
// directories, and the heap the running watcher keeps (MB/watch).
func BenchmarkWatchStart50k(b *testing.B) {
	fs, root := newFS(b, nil)
	for d := range 2_500 {
		dir := filepath.Join(root, fmt.Sprintf("d%02d/s%04d", d%50, d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 20 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.go", f)), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	var heapMB float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		ctx, cancel := context.WithCancel(context.Background())
		w, err := fs.Watch(ctx, WatchOptions{}, func([]Change) {})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		heapMB = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / (1 << 20)
		cancel()
		<-w.Done()
		b.StartTimer()
	}
	b.ReportMetric(heapMB, "MB/watch")
}
