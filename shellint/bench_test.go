//go:build unix

package shellint

import (
	"context"
	"os/exec"
	"runtime"
	"sync"
	"testing"
	"time"
)

// BenchmarkEchoPersistentVsSpawn runs `echo hi` on a persistent integrated
// session and, in the same loop, spawns `bash -c 'echo hi'` (no rc files,
// no PTY: the cheapest per-command alternative). ratio = persistent/spawn.
// HOME is empty so the figure is our overhead, not the cost of whatever
// prompt hooks the machine's ~/.bashrc installs (pyenv's forks per prompt).
func BenchmarkEchoPersistentVsSpawn(b *testing.B) {
	ctx := context.Background()
	s, err := Start(ctx, Options{Shell: "bash", Cwd: b.TempDir(), Env: map[string]string{"HOME": b.TempDir()}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var persistent, spawn time.Duration
	n := 0
	for b.Loop() {
		t0 := time.Now()
		r, err := s.Run(ctx, "echo hi", RunOptions{Timeout: 10 * time.Second})
		if err != nil || r.Output != "hi\n" {
			b.Fatalf("%+v %v", r, err)
		}
		t1 := time.Now()
		out, err := exec.Command("bash", "--norc", "--noprofile", "-c", "echo hi").Output()
		if err != nil || string(out) != "hi\n" {
			b.Fatalf("%q %v", out, err)
		}
		spawn += time.Since(t1)
		persistent += t1.Sub(t0)
		n++
	}
	b.ReportMetric(float64(persistent.Microseconds())/float64(n), "persistent-µs/op")
	b.ReportMetric(float64(spawn.Microseconds())/float64(n), "spawn-µs/op")
	b.ReportMetric(float64(persistent)/float64(spawn), "ratio")
}

// BenchmarkOutput100MB measures throughput of a 100 MB command output
// through PTY, marker scanner, cooker and the capped buffer, and the peak
// heap while doing it.
func BenchmarkOutput100MB(b *testing.B) {
	ctx := context.Background()
	s, err := Start(ctx, Options{Shell: "bash", Cwd: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	b.SetBytes(100_000_000)
	for b.Loop() {
		r, err := s.Run(ctx, `yes 0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789 | head -c 100000000`, RunOptions{Timeout: 120 * time.Second})
		if err != nil || r.TotalBytes != 100_000_000 {
			b.Fatalf("%v total %d", err, r.TotalBytes)
		}
	}
	close(stop)
	wg.Wait()
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}
