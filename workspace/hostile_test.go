//go:build unix

package workspace

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest/shellplant"

	"github.com/oh-bridge/oh-bridge/internal/ohtest/logbuf"
)

// Hostile input the agent can plant in the workspace (issue 22): each test
// makes the file system state with a shell command, as an agent's terminal
// would, and drives the FS as the editor's requests do.

// hostileFS is an FS over a new directory whose log the test can read.
func hostileFS(t testing.TB) (*FS, string, *logbuf.Buffer) {
	t.Helper()
	roots, err := NewRoots([]string{t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { roots.Close() })
	log := &logbuf.Buffer{}
	fs := New(roots, Options{Logger: slog.New(slog.NewTextHandler(log, nil))})
	return fs, roots.First(), log
}

// threads is this process's thread count, or -1 without /proc.
func threads() int {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			var n int
			for _, c := range strings.TrimSpace(v) {
				n = n*10 + int(c-'0')
			}
			return n
		}
	}
	return -1
}

// TestGitignoreFIFO: a FIFO named .gitignore, in the listed directory and
// in a subdirectory the walk enters, used to block each listing in open(2)
// for ever, holding an OS thread each (51 listings: 5 threads to 56), and
// no cancel could reach it. Now 50 listings at once all answer, list
// what is there, say in the log why the FIFO was not applied, and leave
// the thread count where it was.
func TestGitignoreFIFO(t *testing.T) {
	fs, root, log := hostileFS(t)
	shellplant.Run(t, root, "mkdir sub && echo x > sub/kept.go && echo y > a.log && mkfifo .gitignore sub/.gitignore")
	t.Cleanup(func() { unblockFIFOs(root, ".gitignore", "sub/.gitignore") })

	before := threads()
	const n = 50
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	answered := make(chan error, n)
	for range n {
		go func() {
			l, err := fs.ListDirectory(ctx, ".", ListOptions{RespectGitignore: true, IncludeHidden: true, Depth: 2})
			if err == nil && listed(root, l) != ".gitignore a.log sub/ sub/.gitignore sub/kept.go" {
				err = errors.New("listed " + listed(root, l))
			}
			answered <- err
		}()
	}
	for i := range n {
		select {
		case err := <-answered:
			if err != nil {
				t.Fatalf("listing %d: %v", i, err)
			}
		case <-ctx.Done():
			t.Fatalf("%d of %d listings answered in a minute; the rest wait on the FIFO .gitignore (threads: %d, were %d)", i, n, threads(), before)
		}
	}
	if after := threads(); before > 0 && after > before+10 {
		t.Errorf("threads: %d before the listings, %d after; a blocked open holds a thread each", before, after)
	}
	if got := log.String(); !strings.Contains(got, "FIFO (named pipe), not a regular file") {
		t.Errorf("the log does not say why the FIFO .gitignore was skipped:\n%s", got)
	}
}

// unblockFIFOs opens each FIFO for writing and closes it, which lets a
// reader blocked in open(2) (the old code) go on to EOF.
func unblockFIFOs(root string, names ...string) {
	for _, n := range names {
		for range 64 {
			fd, err := syscall.Open(filepath.Join(root, n), syscall.O_WRONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				break // ENXIO: no reader waits any more
			}
			syscall.Close(fd)
		}
	}
}

// listed is a listing as names relative to root, directories with a "/".
func listed(root string, l *Listing) string {
	var names []string
	for _, e := range l.Entries {
		n := relSlash(root, e.Path)
		if e.Type == TypeDirectory {
			n += "/"
		}
		names = append(names, n)
	}
	return strings.Join(names, " ")
}

// TestGitignoreOutOfBounds: .gitignore files the listing will not apply
// are skipped, the listing goes on and the log says why: a symlink to
// /dev/urandom (it used to be read for ever, 1.2 GB in 7 s), one to a file
// outside the roots, one to a FIFO inside, and a file over 1 MiB. A
// symlink to a good file inside the roots is followed, as for the
// agent's reads.
func TestGitignoreOutOfBounds(t *testing.T) {
	fs, root, log := hostileFS(t)
	outside := t.TempDir()
	shellplant.Run(t, outside, "echo '*.go' > .gitignore")
	shellplant.Run(t, root, `
		mkdir urandom outside fifo big good
		for d in urandom outside fifo big good; do echo x > $d/a.go; done
		ln -s /dev/urandom urandom/.gitignore
		ln -s `+outside+`/.gitignore outside/.gitignore
		mkfifo fifo/pipe && ln -s pipe fifo/.gitignore
		{ echo '*.go'; head -c 1100000 /dev/zero | tr '\0' 'x'; echo; } > big/.gitignore
		echo '*.go' > good/rules && ln -s rules good/.gitignore`)
	t.Cleanup(func() { unblockFIFOs(root, "fifo/pipe") })

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var l *Listing
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		l, err = fs.ListDirectory(ctx, ".", ListOptions{RespectGitignore: true, Depth: 2})
	}()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("no answer in a minute")
	}
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, "listing", "big/ big/a.go fifo/ fifo/a.go fifo/pipe good/ good/rules outside/ outside/a.go urandom/ urandom/a.go", listed(root, l))
	got := log.String()
	for _, why := range []string{
		"urandom/.gitignore reason=\"it is a symlink that leads out of the workspace roots\"",
		"outside/.gitignore reason=\"it is a symlink that leads out of the workspace roots\"",
		"fifo/.gitignore reason=\"it is a FIFO (named pipe), not a regular file\"",
		"big/.gitignore reason=\"it is larger than 1048576 bytes (1100006)\"",
	} {
		if !strings.Contains(got, why) {
			t.Errorf("the log does not say %s:\n%s", why, got)
		}
	}
}

// TestGitignoreBudget: the rules held at once are bounded however deep
// the tree: with a .gitignore of 1 MiB of rules in each of 20 nested
// directories, the deeper ones are skipped once the budget is full, and
// the listing still answers.
func TestGitignoreBudget(t *testing.T) {
	fs, root, log := hostileFS(t)
	shellplant.Run(t, root, `
		d=.
		rule=$(head -c 999 /dev/zero | tr '\0' r)
		for i in $(seq 20); do
			d=$d/d
			mkdir $d
			yes "$rule*" | head -c 1000000 > $d/.gitignore
		done`)
	var held atomic.Int64
	testHookIgnoreHeld = func(cost int) {
		if int64(cost) > held.Load() {
			held.Store(int64(cost))
		}
	}
	t.Cleanup(func() { testHookIgnoreHeld = nil })
	l, err := fs.ListDirectory(context.Background(), ".", ListOptions{RespectGitignore: true, Depth: 21})
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, "entries", 20, len(l.Entries))
	if held.Load() > ignoreBudget {
		t.Errorf("the .gitignore files in effect held %d, over the budget of %d", held.Load(), ignoreBudget)
	}
	if !strings.Contains(log.String(), "already hold as many rules as a listing keeps") {
		t.Errorf("the log does not say the deeper files were skipped:\n%s", log.String())
	}
}

// TestNestedDoubleStar: twelve "**/" before "zzz", on a tree 24 levels
// deep. The old matcher tried every way the "**" could split each path,
// C(n+12, 12) of them for a path n deep (11 s to list to depth 20). The
// matcher's steps are counted (testHookMatchSteps): at most
// (segments of the pattern + 1) × segments of the path for each entry.
// The listing is cancelled as soon as the count passes that bound, so the
// old code fails here quickly instead of running for minutes.
func TestNestedDoubleStar(t *testing.T) {
	fs, root, _ := hostileFS(t)
	shellplant.Run(t, root, `mkdir -p `+strings.Repeat("a/", 24)+` && echo "`+strings.Repeat("**/", 12)+`zzz" > .gitignore`)
	const depth = 20
	// Each entry k deep costs at most 13 × k steps: 13 × (1+...+20) in all.
	bound := int64(13 * depth * (depth + 1) / 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var steps atomic.Int64
	testHookMatchSteps = func(n int) {
		if steps.Add(int64(n)) > bound {
			cancel()
		}
	}
	t.Cleanup(func() { testHookMatchSteps = nil })
	l, err := fs.ListDirectory(ctx, ".", ListOptions{RespectGitignore: true, Depth: depth})
	if err != nil {
		t.Fatalf("the listing stopped after %d matcher steps, over the bound of %d: %v", steps.Load(), bound, err)
	}
	assertEqual(t, "entries", depth, len(l.Entries))
	t.Logf("%d matcher steps for %d entries (bound %d)", steps.Load(), len(l.Entries), bound)
}

// TestSpecialFilesRefused: a FIFO, a Unix socket and (as root) a character
// device, made from a shell, are named for what they are by Stat and the
// listing, and refused with not_regular_file by reads and by writes over
// them, with a message naming the type. Reading the FIFO used to answer
// "appears to be binary", and Stat said "file".
func TestSpecialFilesRefused(t *testing.T) {
	fs, root, _ := hostileFS(t)
	shellplant.Run(t, root, `mkfifo fifo && python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("sock")'`)
	t.Cleanup(func() { unblockFIFOs(root, "fifo") })
	rows := []struct{ name, typ, words string }{
		{"fifo", TypeFIFO, "is a FIFO (named pipe), not a regular file"},
		{"sock", TypeSocket, "is a Unix domain socket, not a regular file"},
	}
	if os.Geteuid() == 0 && runtime.GOOS == "linux" {
		shellplant.Run(t, root, "mknod null c 1 3")
		rows = append(rows, struct{ name, typ, words string }{"null", TypeCharDevice, "is a character device, not a regular file"})
	}
	ctx := context.Background()
	for _, r := range rows {
		info, err := fs.Stat(ctx, r.name)
		if err != nil {
			t.Fatal(err)
		}
		assertEqual(t, "stat "+r.name, r.typ, info.Type)
		_, err = fs.ReadTextFile(ctx, r.name, 0, 0)
		checkSpecial(t, "read_text_file "+r.name, err, r.name, r.typ, r.words)
		_, err = fs.ReadFile(ctx, r.name)
		checkSpecial(t, "read "+r.name, err, r.name, r.typ, r.words)
		_, err = fs.WriteTextFile(ctx, r.name, "text\n", "", false)
		checkSpecial(t, "write "+r.name, err, r.name, r.typ, r.words)
		if fi, err := os.Lstat(filepath.Join(root, r.name)); err != nil || typeOf(fi.Mode()) != r.typ {
			t.Errorf("write %s: it is no longer a %s (%v)", r.name, r.typ, err)
		}
	}
	l, err := fs.ListDirectory(ctx, ".", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Entries {
		assertEqual(t, "listed type of "+filepath.Base(e.Path), map[string]string{"fifo": TypeFIFO, "sock": TypeSocket, "null": TypeCharDevice}[filepath.Base(e.Path)], e.Type)
	}
}

func checkSpecial(t *testing.T, input string, err error, name, typ, words string) {
	t.Helper()
	var se *SpecialFileError
	if !errors.As(err, &se) {
		t.Errorf("input: %s\nwant: a *SpecialFileError (not_regular_file)\ngot:  %s", input, kindOf(err))
		return
	}
	assertEqual(t, input+" kind", "not_regular_file", se.Kind())
	assertEqual(t, input+" type", any(typ), se.Data()["type"])
	assertEqual(t, input+" message", name+" "+words, err.Error()[:len(name)+1+len(words)])
}

// BenchmarkGitignoreNestedDoubleStar lists the tree of TestNestedDoubleStar
// (24 levels, twelve "**/" before "zzz") to depth 20. The old matcher took
// 11 s an op here.
func BenchmarkGitignoreNestedDoubleStar(b *testing.B) {
	fs, root, _ := hostileFS(b)
	shellplant.Run(b, root, `mkdir -p `+strings.Repeat("a/", 24)+` && echo "`+strings.Repeat("**/", 12)+`zzz" > .gitignore`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if l, err := fs.ListDirectory(ctx, ".", ListOptions{RespectGitignore: true, Depth: 20}); err != nil || len(l.Entries) != 20 {
			b.Fatalf("%v, %d entries", err, len(l.Entries))
		}
	}
}

// BenchmarkGitignoreHostile lists a directory of 100 files whose
// .gitignore is planted: a FIFO (the old code never answered), a symlink
// to /dev/urandom (the old code read it for ever) and a 2 MiB file (over
// the cap: skipped unread).
func BenchmarkGitignoreHostile(b *testing.B) {
	for _, c := range []struct{ name, script string }{
		{"fifo", "mkfifo .gitignore"},
		{"urandom", "ln -s /dev/urandom .gitignore"},
		{"2MiB", "head -c 2097152 /dev/zero | tr '\\0' '\\n' > .gitignore"},
	} {
		b.Run(c.name, func(b *testing.B) {
			fs, root, _ := hostileFS(b)
			shellplant.Run(b, root, "for i in $(seq 100); do echo x > f$i.go; done && "+c.script)
			b.Cleanup(func() { unblockFIFOs(root, ".gitignore") })
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if l, err := fs.ListDirectory(ctx, ".", ListOptions{RespectGitignore: true}); err != nil || len(l.Entries) != 100 {
					b.Fatalf("%v, %d entries", err, len(l.Entries))
				}
			}
		})
	}
}
