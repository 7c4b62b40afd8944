package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"unicode/utf8"

	"github.com/oh-bridge/oh-bridge/rpc"
)

// How `oh-bridge acp` logs. Editors show an agent's stderr to the person,
// and Emacs agent-shell shows every line of it as an error, so:
//
//   - stderr gets errors only (level ERROR), unless --log-file - asks for
//     the whole log there;
//   - the whole log, at --log-level (default info), goes to a file:
//     --log-file PATH, else acpLogName in the user's cache directory;
//   - when that default file cannot be opened, errors alone go to stderr
//     and nothing says so: saying so would be one more "error" in the
//     editor, about a log nobody asked for.
//
// At debug level the log also carries every ACP message, both ways.
const (
	acpStderrLevel = slog.LevelError
	// acpLogName is the default log file under os.UserCacheDir().
	acpLogName = "oh-bridge/acp.log"
	// acpLogLimit bounds a log file: past it, the file becomes PATH.1
	// (replacing the previous one) and a new one starts, so the log
	// takes at most about twice this.
	acpLogLimit = 10 << 20
	// wireLogClip bounds the JSON of one logged message, so a 1 MB file
	// write is one line of 2 KiB, not 1 MB, in the log.
	wireLogClip = 2 << 10
)

// defaultACPLogPath is where `oh-bridge acp` logs without --log-file.
func defaultACPLogPath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, filepath.FromSlash(acpLogName)), nil
}

// openACPLog opens the acp subcommand's logger by the rules above. Only
// an explicit --log-file that cannot be opened and a bad --log-level are
// errors (exit 2).
func openACPLog(path, level string) (*slog.Logger, func(), error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	// Several agents may share one log file (an editor starts one per
	// session or per window): the pid tells their lines apart.
	pid := slog.Int("pid", os.Getpid())
	if path == "-" {
		h := slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lv})
		return slog.New(h).With(pid), func() {}, nil
	}
	errorsOnly := slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: max(lv, acpStderrLevel)})
	var f *rotatingFile
	if path == "" {
		def, err := defaultACPLogPath()
		if err == nil {
			err = os.MkdirAll(filepath.Dir(def), 0o700)
		}
		if err == nil {
			f, err = openRotating(def)
		}
		if err != nil {
			return slog.New(errorsOnly).With(pid), func() {}, nil
		}
	} else {
		var err error
		if f, err = openRotating(path); err != nil {
			return nil, nil, fmt.Errorf("cannot open the log file: %w; give --log-file a writable path, or --log-file - for stderr", err)
		}
	}
	toFile := slog.NewTextHandler(f, &slog.HandlerOptions{Level: lv})
	return slog.New(slog.NewMultiHandler(toFile, errorsOnly)).With(pid), func() { f.Close() }, nil
}

// rotatingFile is an append-only log file kept under acpLogLimit. Other
// oh-bridge acp processes may append to and rotate the same file, so the
// size is the file's own, not what this process wrote.
type rotatingFile struct {
	path string

	mu sync.Mutex
	f  *os.File
}

func openRotating(path string) (*rotatingFile, error) {
	// The log can hold the person's prompts and, at debug, file contents.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	return &rotatingFile{path: path, f: f}, nil
}

func (r *rotatingFile) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// Only a regular file grows; --log-file /dev/stderr or a pipe does not.
	if fi, err := r.f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size()+int64(len(p)) > acpLogLimit {
		r.rotate()
	}
	return r.f.Write(p)
}

// rotate moves a full log to PATH.1 and starts a new one. If another
// process rotated first, PATH is already a new file: this one reopens it.
// Two rotating in the same instant can lose the older PATH.1; a lock file
// would prevent it, for a log not worth the machinery. On failure it
// keeps writing where it was; a log is not worth an error either.
func (r *rotatingFile) rotate() {
	mine, err1 := r.f.Stat()
	named, err2 := os.Stat(r.path)
	if err1 == nil && err2 == nil && os.SameFile(mine, named) {
		if os.Rename(r.path, r.path+".1") != nil {
			return
		}
	}
	f, err := os.OpenFile(r.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	r.f.Close()
	r.f = f
}

func (r *rotatingFile) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.f.Close()
}

// wireLog logs every message of the connection at debug level. It sits
// under an rpc.Recorder, which hands it each message, both ways, as one
// JSONL record: the log and a --record file see the same messages.
type wireLog struct {
	log  *slog.Logger
	next io.Writer // the --record file, or nil
	line []byte    // a record not yet ended by its newline
	// pending names the method a response answers: "in 3" is the
	// client's request 3, "out 3" the bridge's.
	pending map[string]string
}

func newWireLog(logger *slog.Logger, next io.Writer) *wireLog {
	return &wireLog{log: logger.With("component", "wire"), next: next, pending: map[string]string{}}
}

// Write is called with the Recorder's lock held, so never concurrently.
func (w *wireLog) Write(p []byte) (int, error) {
	if w.next != nil {
		if n, err := w.next.Write(p); err != nil {
			return n, err
		}
	}
	w.line = append(w.line, p...)
	for {
		i := bytes.IndexByte(w.line, '\n')
		if i < 0 {
			break
		}
		w.logRecord(w.line[:i])
		w.line = w.line[i+1:]
	}
	if len(w.line) == 0 {
		w.line = nil // do not pin a 1 MB message's buffer
	}
	return len(p), nil
}

func (w *wireLog) Close() error {
	if c, ok := w.next.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

func (w *wireLog) logRecord(line []byte) {
	var rec rpc.Record
	if json.Unmarshal(line, &rec) != nil || rec.Dir == "" {
		return // the recording's header
	}
	if rec.Raw != nil {
		w.log.Debug("ACP message", "dir", rec.Dir, "kind", "not JSON", "bytes", len(*rec.Raw), "json", clipUTF8(*rec.Raw, wireLogClip))
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Error  json.RawMessage `json:"error"`
	}
	json.Unmarshal(rec.Msg, &m)
	id := string(m.ID)
	kind, method := "", m.Method
	switch {
	case m.Method != "" && (id == "" || id == "null"):
		kind, id = "notification", ""
	case m.Method != "":
		kind = "request"
		w.pending[rec.Dir+" "+id] = m.Method
	default:
		kind = "result"
		if m.Error != nil {
			kind = "error"
		}
		asker := "out"
		if rec.Dir == "out" {
			asker = "in"
		}
		method = w.pending[asker+" "+id]
		delete(w.pending, asker+" "+id)
	}
	attrs := []any{"dir", rec.Dir, "kind", kind}
	if method != "" {
		attrs = append(attrs, "method", method)
	}
	if id != "" {
		attrs = append(attrs, "id", id)
	}
	attrs = append(attrs, "bytes", len(rec.Msg), "json", clipUTF8(string(rec.Msg), wireLogClip))
	w.log.Debug("ACP message", attrs...)
}

// clipUTF8 cuts s to at most n bytes on a character boundary, saying how
// much was cut.
func clipUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d more bytes)", s[:cut], len(s)-cut)
}

// acpLogHint names the default log file for --help.
func acpLogHint() string {
	if p, err := defaultACPLogPath(); err == nil {
		return p
	}
	return "$XDG_CACHE_HOME/" + acpLogName
}
