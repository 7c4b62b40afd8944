//go:build unix

package workspace

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest/shellplant"

	"github.com/oh-bridge/oh-bridge/internal/ohtest/logbuf"
)

// TestJournalNotRegularIsSkipped: the journals sit in the user's cache,
// where the agent's shell can reach them. A dead process's "journal" that
// is a FIFO, a socket, a link to /dev/zero or a file over the cap is
// skipped with a log line saying why, and a new FS still starts at once;
// a real journal beside them is still cleaned.
func TestJournalNotRegularIsSkipped(t *testing.T) {
	journals := useJournalDir(t)
	roots, err := NewRoots([]string{t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { roots.Close() })
	root := roots.First()
	tmp := filepath.Join(root, ".a.txt"+tmpMarker+"0123456789abcdef")
	writeFiles(t, root, map[string]string{filepath.Base(tmp): "half"})
	old := time.Now().Add(-time.Minute)
	os.Chtimes(tmp, old, old)
	// $$ is the planting bash's pid: dead once it returns, as a journal's
	// owner must be for it to be read.
	shellplant.Run(t, journals, `mkfifo "$$-1.log" &&
python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$$-2.log" &&
ln -s /dev/zero "$$-3.log" &&
yes '+"/nowhere/.b.txt.oh-bridge-tmp-0123456789abcdef"' | head -c 9000000 > "$$-4.log" &&
printf '+%s\n' '"`+tmp+`"' > "$$-5.log"`)

	log := &logbuf.Buffer{}
	done := make(chan struct{})
	go func() {
		New(roots, Options{Logger: slog.New(slog.NewTextHandler(log, nil))})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		releaseFIFOs(journals)
		<-done
		t.Fatalf("New did not return within 10 s: a journal that is a FIFO held it\nlog:\n%s", log)
	}
	for _, want := range []string{
		`-1.log reason="it is a FIFO (named pipe), not a regular file"`,
		`-2.log reason="it is a Unix domain socket, not a regular file"`,
		`-3.log reason="it is a symlink that leads out of ` + journals,
		`-4.log reason="it is larger than 8388608 bytes (9000000)"`,
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log does not say %s:\n%s", want, log)
		}
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the real journal's temporary file %s is still there: %v", tmp, err)
	}
}

// releaseFIFOs opens each FIFO in dir for writing and closes it again: a
// reader blocked in open(2) then returns and reads end-of-file.
func releaseFIFOs(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Type()&os.ModeNamedPipe != 0 {
			if f, err := os.OpenFile(filepath.Join(dir, e.Name()), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
		}
	}
}
