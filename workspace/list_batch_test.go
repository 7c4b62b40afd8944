package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// manyFiles makes n empty files f00000… in dir.
func manyFiles(t testing.TB, dir string, n int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// watchReads sets testHookListRead for the test: it counts the batches
// read and keeps the most entries the walk held, and calls also, if set,
// after each batch.
func watchReads(t *testing.T, also func(batch int)) (batches, peak *int) {
	batches, peak = new(int), new(int)
	testHookListRead = func(held int) {
		*batches++
		*peak = max(*peak, held)
		if also != nil {
			also(*batches)
		}
	}
	t.Cleanup(func() { testHookListRead = nil })
	return batches, peak
}

// TestListReadsInBatches: a directory is read listBatch entries at a time,
// and the reading stops at the batch that passes the limit; the entries
// kept are sorted by name.
func TestListReadsInBatches(t *testing.T) {
	fs, root := newFS(t, nil)
	manyFiles(t, filepath.Join(root, "d"), 5000)
	for _, tt := range []struct {
		name        string
		limit       int
		wantEntries int
		wantBatches int // reads of listBatch, the last of an unlimited listing finding the end
		truncated   bool
	}{
		{"a limit within the first batch", 10, 10, 1, true},
		{"a limit of three batches", 3000, 3000, 3, true},
		{"a limit of exactly the directory", 5000, 5000, 6, false},
		{"no limit", 0, 5000, 6, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			batches, peak := watchReads(t, nil)
			l, err := fs.ListDirectory(context.Background(), "d", ListOptions{Limit: tt.limit})
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Entries) != tt.wantEntries || l.Truncated != tt.truncated || *batches != tt.wantBatches {
				t.Errorf("limit %d: %d entries, truncated %v, %d batches; want %d, %v, %d",
					tt.limit, len(l.Entries), l.Truncated, *batches, tt.wantEntries, tt.truncated, tt.wantBatches)
			}
			if !slices.IsSortedFunc(l.Entries, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) }) {
				t.Errorf("limit %d: the entries are not sorted by name", tt.limit)
			}
			if tt.limit > 0 && *peak > tt.limit+listBatch {
				t.Errorf("limit %d: the walk held %d entries, more than the limit and a batch", tt.limit, *peak)
			}
		})
	}
}

// TestListCancelMidDirectory: a listing cancelled while it reads a
// directory returns ctx.Err() at the next batch, without reading the rest.
func TestListCancelMidDirectory(t *testing.T) {
	fs, root := newFS(t, nil)
	manyFiles(t, filepath.Join(root, "d"), 5000)
	for _, opts := range []ListOptions{{}, {RespectGitignore: true}, {Limit: 4000}} {
		ctx, cancel := context.WithCancel(context.Background())
		batches, _ := watchReads(t, func(batch int) {
			if batch == 2 {
				cancel()
			}
		})
		start := time.Now()
		l, err := fs.ListDirectory(ctx, "d", opts)
		took := time.Since(start)
		cancel()
		if !errors.Is(err, context.Canceled) || l != nil {
			t.Errorf("%+v: %v, %v; want context.Canceled and no listing", opts, l, err)
		}
		if *batches != 2 {
			t.Errorf("%+v: %d batches read; the listing should stop at the one after the cancel", opts, *batches)
		}
		t.Logf("%+v: cancelled after 2 batches, returned in %v", opts, took)
	}
}

// TestListHoldsBoundedDeep: a tree eight directories deep, each holding
// 1,000 files and the next directory (named to sort first), listed to
// depth 9 with a limit of 500. Each directory kept up to 500 entries to
// list after its subdirectory; without trimming them the walk held 8 × 500.
// Now what the open directories have still to list stays within the room
// left: the walk holds at most the limit plus the room and a batch.
func TestListHoldsBoundedDeep(t *testing.T) {
	fs, root := newFS(t, nil)
	dir := root
	for range 8 {
		dir = filepath.Join(dir, "a")
		manyFiles(t, dir, 1000)
	}
	_, peak := watchReads(t, nil)
	const limit = 500
	l, err := fs.ListDirectory(context.Background(), ".", ListOptions{Depth: 9, Limit: limit})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Entries) != limit || !l.Truncated {
		t.Fatalf("%d entries, truncated %v; want %d, true", len(l.Entries), l.Truncated, limit)
	}
	// Depth first: a, a/a, … down to the eighth, then its files, first by name.
	want := []string{"a", "a/a", "a/a/a"}
	for i, w := range want {
		if got := relSlash(root, l.Entries[i].Path); got != w {
			t.Errorf("entry %d: %s, want %s", i, got, w)
		}
	}
	if got := relSlash(root, l.Entries[8].Path); got != strings.Repeat("a/", 8)+"f00000" {
		t.Errorf("entry 8: %s, want the deepest directory's first file", got)
	}
	t.Logf("the walk held at most %d entries", *peak)
	if *peak > 2*limit+listBatch {
		t.Errorf("the walk held %d entries; the bound is %d", *peak, 2*limit+listBatch)
	}
}

// BenchmarkListDirectoryHuge lists a directory of 300,000 empty files
// (made by bash, as an agent's `seq | xargs touch` makes them) with the
// editor protocol's limits, 10,000 and 50,000, and reports the heap the
// listing allocated (B/op) and the most the walk held (held/op).
func BenchmarkListDirectoryHuge(b *testing.B) {
	fs, root := newFS(b, nil)
	cmd := exec.Command("bash", "-c", "mkdir big && cd big && seq 1 300000 | xargs touch")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%v\n%s", err, out)
	}
	for _, limit := range []int{10_000, 50_000} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) {
			peak := 0
			testHookListRead = func(held int) { peak = max(peak, held) }
			defer func() { testHookListRead = nil }()
			b.ReportAllocs()
			for b.Loop() {
				l, err := fs.ListDirectory(context.Background(), "big", ListOptions{Limit: limit})
				if err != nil || len(l.Entries) != limit {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(peak), "held/op")
		})
	}
}
