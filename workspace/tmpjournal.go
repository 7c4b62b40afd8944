package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/process"
)

// Leftover temporary files.
//
// A process killed between creating an atomic write's temporary file and
// renaming it leaves ".<name>.oh-bridge-tmp-<random>" behind. Scanning the
// roots for them at start would be unbounded (a monorepo, node_modules), and
// scanning each directory when first written would miss the ones never
// written again. So each process journals the temporary files it has in
// flight, outside the workspace: one file per process, <pid>.log in
// pendingWritesDir, a "+" line when a name is taken and a "-" line when it is
// renamed or removed, emptied whenever no write is in flight. Nothing is
// fsynced: a killed process loses no write(2) it made, and after a power cut
// the temporary file is as likely gone as its journal line.
//
// When an FS starts, it reads the journals of processes that no longer run,
// and removes the temporary files still named there that lie in its roots,
// are regular files, carry the marker, and are older than staleTempAge
// (another host sharing the directory may be writing one). It unlinks them
// in their directory opened beneath the root, like every other delete. The
// cost is one directory read of the journals per start.
//
// The journals sit in the user's cache, which the agent's shell can reach
// as well as the workspace, so they are read by the rule of regular.go:
// beneath their directory, without blocking, regular files only, at most
// maxJournalSize. One that fails it (a FIFO, which would hold the start
// for ever; a link to /dev/zero; a file over the cap) is skipped, left as
// it is, and logged with the reason.

// staleTempAge is how old a temporary file of a dead process must be to be
// removed. A live writer touches its file continually until it fsyncs.
const staleTempAge = 5 * time.Second

// journalMaxAge bounds how long a journal naming files outside every root
// that started since is kept: the files themselves stay, named for us.
const journalMaxAge = 7 * 24 * time.Hour

// maxJournalSize caps what is read of one journal. A journal holds two
// lines per write (a name taken, then let go) since the last moment no
// write was in flight, when it was emptied: a few lines as a rule. 8 MiB
// holds some 40,000 writes of typical paths without one idle moment, and
// 256 lines of the longest a path can be (4 KiB, quoted at worst four
// bytes a byte); read once per journal at start, it costs nothing.
const maxJournalSize = 8 << 20

// pendingWritesDir is where the journals live; "" disables them. Tests
// point it at a temporary directory.
var pendingWritesDir = defaultPendingWritesDir()

func defaultPendingWritesDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "oh-bridge", "pending-writes")
}

// journalID names this process's journal: its pid, and its start time so
// that a later process given the same pid does not take the journal over.
var journalID = fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())

// pendingWrites is this process's journal.
var pendingWrites writeJournal

type writeJournal struct {
	mu       sync.Mutex
	f        *os.File
	dir      string // where f is
	inFlight int
}

// begin journals the temporary file tmp before it is created; the returned
// function journals its end (renamed or removed).
func (j *writeJournal) begin(tmp string) (done func()) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.ready() {
		return func() {}
	}
	j.inFlight++
	j.f.WriteString("+" + strconv.Quote(tmp) + "\n")
	return func() {
		j.mu.Lock()
		defer j.mu.Unlock()
		if j.inFlight--; j.inFlight == 0 {
			j.f.Truncate(0) // O_APPEND: the next line goes at offset 0
		} else {
			j.f.WriteString("-" + strconv.Quote(tmp) + "\n")
		}
	}
}

// ready opens the journal on first use, or again when the directory changed.
func (j *writeJournal) ready() bool {
	dir := pendingWritesDir
	if j.f != nil && j.dir == dir {
		return true
	}
	if dir == "" || j.inFlight > 0 {
		return false
	}
	if j.f != nil {
		j.f.Close()
		j.f = nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false
	}
	f, err := os.OpenFile(filepath.Join(dir, journalID+".log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND|os.O_TRUNC, 0o600)
	if err != nil {
		return false
	}
	j.f, j.dir = f, dir
	return true
}

// cleanStaleTemps removes the temporary files that dead processes left in
// the roots, as their journals name them, and returns the paths removed;
// log hears of the journals skipped.
func (r *Roots) cleanStaleTemps(log *slog.Logger) []string {
	dir := pendingWritesDir
	if dir == "" {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) == 0 {
		return nil
	}
	journals, err := NewRoots([]string{dir}) // each journal is read beneath it
	if err != nil {
		return nil
	}
	defer journals.Close()
	var removed []string
	me := strconv.Itoa(os.Getpid())
	for _, e := range ents {
		name := e.Name()
		owner, claimer, _ := strings.Cut(strings.TrimSuffix(name, ".log"), ".claimed-")
		ownerPid, _, _ := strings.Cut(owner, "-")
		// Our pid in another journal is an earlier process that had it.
		if owner == journalID || (ownerPid != me && processAlive(ownerPid)) || (claimer != "" && processAlive(claimer)) {
			continue
		}
		// Claim the journal by renaming it, so that two starting bridges do
		// not process it at once.
		claimed := filepath.Join(dir, owner+".claimed-"+me)
		if os.Rename(filepath.Join(dir, name), claimed) != nil {
			continue
		}
		left, gone, err := r.cleanJournal(journals, claimed)
		if err != nil && !errors.As(err, new(*NotFoundError)) {
			log.Warn("a write journal is skipped", "journal", filepath.Join(dir, name), "reason", journalSkipReason(err, dir))
		}
		if err != nil {
			continue
		}
		removed = append(removed, gone...)
		fi, err := os.Stat(claimed)
		if len(left) == 0 || (err == nil && time.Since(fi.ModTime()) > journalMaxAge) {
			os.Remove(claimed)
			continue
		}
		// Files outside these roots wait for a bridge that has them.
		var b strings.Builder
		for _, p := range left {
			b.WriteString("+" + strconv.Quote(p) + "\n")
		}
		if os.WriteFile(claimed, []byte(b.String()), 0o600) == nil {
			os.Rename(claimed, filepath.Join(dir, owner+".log"))
		}
	}
	return removed
}

// cleanJournal removes the still-pending temporary files a journal names
// inside the roots; left are those it could not judge (outside the roots,
// or too young). The journal is read beneath journals (its directory); err
// says why it could not be.
func (r *Roots) cleanJournal(journals *Roots, journal string) (left, removed []string, err error) {
	data, err := journals.ReadRegular(journal, maxJournalSize)
	if err != nil {
		return nil, nil, err
	}
	pending := map[string]bool{}
	var order []string
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSuffix(line, "\n")
		if len(line) < 2 {
			continue
		}
		p, err := strconv.Unquote(line[1:])
		if err != nil {
			continue
		}
		if line[0] == '+' {
			if !pending[p] {
				order = append(order, p)
			}
			pending[p] = true
		} else {
			delete(pending, p)
		}
	}
	for _, p := range order {
		if !pending[p] {
			continue
		}
		switch err := r.removeStaleTemp(p); {
		case err == nil:
			removed = append(removed, p)
		case errors.Is(err, fs.ErrNotExist):
		default:
			left = append(left, p)
		}
	}
	return left, removed, nil
}

// journalSkipReason says why a journal was not read, for the log.
func journalSkipReason(err error, dir string) string {
	var nt *NotTextError
	var nr *SpecialFileError
	switch {
	case errors.As(err, &nt) && nt.Reason == NotTextTooLarge:
		return fmt.Sprintf("it is larger than %d bytes (%d)", nt.Limit, nt.Size)
	case errors.As(err, &nr):
		return "it is " + typeWords[nr.Type] + ", not a regular file"
	case errors.As(err, new(*OutsideRootsError)):
		return "it is a symlink that leads out of " + dir
	}
	return err.Error()
}

// errNotOurs keeps a journaled path that cannot be judged here.
var errNotOurs = errors.New("not a stale temporary file of ours in these roots")

// removeStaleTemp unlinks p if it is a temporary file of ours, in the roots,
// regular and old enough.
func (r *Roots) removeStaleTemp(p string) error {
	if !filepath.IsAbs(p) || !strings.Contains(filepath.Base(p), tmpMarker) {
		return fs.ErrNotExist // not a name we make: forget it
	}
	if _, _, err := r.locate(p); err != nil {
		return errNotOurs
	}
	fi, err := r.lstat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return fs.ErrNotExist
		}
		return err
	}
	if !fi.Mode().IsRegular() {
		return fs.ErrNotExist
	}
	if time.Since(fi.ModTime()) < staleTempAge {
		return errNotOurs
	}
	return r.remove(p)
}

// processAlive reports whether pid (decimal) names a running process;
// anything that is not a pid counts as alive, so it is left alone.
func processAlive(pid string) bool {
	n, err := strconv.Atoi(pid)
	if err != nil || n <= 0 {
		return true
	}
	return process.Alive(n)
}
