package workspace

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/cespare/xxhash/v2"
)

// DefaultMaxFileSize is the read cap when Options.MaxFileSize is zero. It
// matches OHEditor's MAX_FILE_SIZE_MB.
const DefaultMaxFileSize = 10 << 20

// binarySniffLen is how much of a file is searched for NUL bytes: enough to
// catch every common binary header, small enough to cost nothing.
const binarySniffLen = 8 << 10

// tmpMarker names the temporary files of atomic writes, so that one left by
// a killed process says where it came from.
const tmpMarker = ".oh-bridge-tmp-"

// Options configures an FS.
type Options struct {
	// MaxFileSize caps reads, in bytes; 0 means DefaultMaxFileSize.
	MaxFileSize int64
	// BufferEditor, if set, receives writes to documents open in the overlay.
	// It can also be set later with SetBufferEditor, once the client's
	// capabilities are known.
	BufferEditor BufferEditor
	// Logger receives what the FS skips for itself (a .gitignore it will
	// not apply, and why); nil discards it.
	Logger *slog.Logger
}

// FS performs the agent's file operations inside the roots. It is safe for
// concurrent use; writes to one resolved path are serialized.
type FS struct {
	roots   *Roots
	maxSize int64
	overlay *Overlay
	buffers atomic.Pointer[bufferEditorBox]
	host    atomic.Pointer[hostBox]
	locks   PathLocks
	agent   agentLog
	log     *slog.Logger
}

type bufferEditorBox struct{ be BufferEditor }

// New returns an FS over roots.
func New(roots *Roots, opts Options) *FS {
	f := &FS{roots: roots, maxSize: opts.MaxFileSize, overlay: newOverlay(roots), log: opts.Logger}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	f.log = f.log.With("component", "workspace")
	if f.maxSize <= 0 {
		f.maxSize = DefaultMaxFileSize
	}
	f.agent.entries = make(map[string]agentEntry)
	f.SetBufferEditor(opts.BufferEditor)
	roots.cleanStaleTemps(f.log) // a killed predecessor's temporary files (tmpjournal.go)
	return f
}

// Roots returns the roots this FS is confined to.
func (f *FS) Roots() *Roots { return f.roots }

// Overlay returns the unsaved-buffer overlay consulted by reads and writes.
func (f *FS) Overlay() *Overlay { return f.overlay }

// MaxFileSize returns the read cap in bytes.
func (f *FS) MaxFileSize() int64 { return f.maxSize }

// SetBufferEditor sets (or, with nil, clears) where writes to open documents go.
func (f *FS) SetBufferEditor(be BufferEditor) {
	f.buffers.Store(&bufferEditorBox{be: be})
}

func (f *FS) bufferEditor() BufferEditor {
	if b := f.buffers.Load(); b != nil {
		return b.be
	}
	return nil
}

// Version returns the version token of content: the 64-bit xxHash
// (XXH64, seed 0) of its bytes as 16 hex digits. A version only tells
// whether a text changed since it was read; nothing adversarial rides on
// it (issue 13), so a fast non-cryptographic hash does: XXH64 runs at
// memory speed, where SHA-256 cost 0.7 ms a MiB and every edit hashed the
// file three times.
func Version(content []byte) string {
	return formatVersion(xxhash.Sum64(content))
}

func versionOfString(s string) string {
	return formatVersion(xxhash.Sum64String(s))
}

func formatVersion(sum uint64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], sum)
	return hex.EncodeToString(b[:])
}

// TextFile is the result of ReadTextFile.
type TextFile struct {
	Content    string // the requested lines, bytes exactly as stored
	TotalLines int    // lines in the whole file; a final line without "\n" counts
	Truncated  bool   // lines after the requested window were left out
	Encoding   string // always "utf-8"
	Version    string // version of the whole content (see Version)
}

// ReadTextFile reads path as UTF-8 text. line is 1-based (0 means 1) and
// limit is a line count (0 means to the end). While the path is open in the
// overlay, the buffer text is read instead of the disk.
func (f *FS) ReadTextFile(ctx context.Context, path string, line, limit int) (*TextFile, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := f.roots.Resolve(path)
	if err != nil {
		return nil, err
	}
	content, version, err := f.readText(ctx, p, path)
	if err != nil {
		return nil, err
	}
	res := &TextFile{Encoding: "utf-8", Version: version, TotalLines: countLines(content)}
	res.Content, res.Truncated = sliceLines(content, line, limit)
	return res, nil
}

// ReadFile reads path's bytes as stored on disk, text or not (an image,
// say), within the size cap. The overlay is not consulted: buffers hold text.
func (f *FS) ReadFile(ctx context.Context, path string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := f.roots.Resolve(path)
	if err != nil {
		return nil, err
	}
	return f.readRegular(p, path)
}

// readText returns the full text at the resolved path p and its version;
// display is the caller's spelling, used in errors.
func (f *FS) readText(ctx context.Context, p, display string) (string, string, error) {
	if text, ok, err := f.hostRead(ctx, p, display); ok {
		return text, versionOfString(text), err
	}
	if text, _, ok := f.overlay.get(p); ok {
		return text, versionOfString(text), nil
	}
	data, err := f.readRegular(p, display)
	if err != nil {
		return "", "", err
	}
	if i := bytes.IndexByte(data[:min(len(data), binarySniffLen)], 0); i >= 0 {
		return "", "", &NotTextError{Path: display, Reason: NotTextBinary}
	}
	if !utf8.Valid(data) {
		return "", "", &NotTextError{Path: display, Reason: NotTextInvalidUTF8, Offset: int64(firstInvalidUTF8(data))}
	}
	// data is this call's own buffer and is never written again, so the
	// text can share it instead of copying a 1 MiB file once more.
	return unsafe.String(unsafe.SliceData(data), len(data)), Version(data), nil
}

// readRegular reads a regular file, refusing directories, FIFOs, sockets,
// devices and files over the cap. It opens the file beneath its root first
// (openRegular: opening a FIFO does not block) and checks it through the
// open file, so what is read is what was checked.
func (f *FS) readRegular(p, display string) ([]byte, error) {
	file, fi, err := f.roots.openRegular(p)
	if err != nil {
		return nil, regularError(err, display)
	}
	defer file.Close()
	if fi.Size() > f.maxSize {
		return nil, &NotTextError{Path: display, Reason: NotTextTooLarge, Size: fi.Size(), Limit: f.maxSize}
	}
	// One allocation of the stat size (plus a byte, to see growth); the file
	// may still change meanwhile, so read until EOF or one byte past the cap.
	data := make([]byte, 0, fi.Size()+1)
	for {
		n, err := file.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", display, err)
		}
		if int64(len(data)) > f.maxSize {
			break
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
	if int64(len(data)) > f.maxSize {
		return nil, &NotTextError{Path: display, Reason: NotTextTooLarge, Size: int64(len(data)), Limit: f.maxSize}
	}
	return data, nil
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// pathError maps os errors to the typed errors callers branch on.
func pathError(err error, display string) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &NotFoundError{Path: display}
	case errors.Is(err, syscall.ENOTDIR):
		return &NotFoundError{Path: display, Hint: "a parent of it is a file, not a directory"}
	}
	return faultError("open", display, err, true)
}

func countLines(s string) int {
	n := strings.Count(s, "\n")
	if len(s) > 0 && s[len(s)-1] != '\n' {
		n++
	}
	return n
}

// sliceLines returns lines [line, line+limit) of s (1-based, "\n"-terminated
// lines kept intact) and whether lines after the window were dropped.
func sliceLines(s string, line, limit int) (string, bool) {
	if line <= 1 && limit <= 0 {
		return s, false
	}
	start := 0
	for l := 1; l < line; l++ {
		i := strings.IndexByte(s[start:], '\n')
		if i < 0 {
			return "", false
		}
		start += i + 1
	}
	if limit <= 0 {
		return s[start:], false
	}
	end := start
	for l := 0; l < limit; l++ {
		i := strings.IndexByte(s[end:], '\n')
		if i < 0 {
			return s[start:], false
		}
		end += i + 1
	}
	return s[start:end], end < len(s)
}

// WriteResult is the result of WriteTextFile.
type WriteResult struct {
	Version string // version of the content now in place
	Created bool   // the file did not exist before
}

// WriteTextFile replaces the content of path with content, byte for byte.
// If expectedVersion is not empty it must equal the current version (the
// overlay's, when the document is open), else *StaleVersionError is returned
// and nothing is written. Documents open in the overlay are edited through
// the BufferEditor when one is set; otherwise, and for closed files, the
// disk is written atomically, keeping the existing file's mode.
func (f *FS) WriteTextFile(ctx context.Context, path, content, expectedVersion string, createParents bool) (*WriteResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := f.roots.Resolve(path)
	if err != nil {
		return nil, err
	}
	unlock := f.locks.Lock(p)
	defer unlock()
	if testHookWrite != nil {
		testHookWrite(p)
	}

	if res, ok, err := f.hostWrite(ctx, p, path, content, expectedVersion); ok {
		return res, err
	}
	old, _, open := f.overlay.get(p)
	if open {
		if expectedVersion != "" {
			if actual := versionOfString(old); actual != expectedVersion {
				return nil, &StaleVersionError{Path: path, Expected: expectedVersion, Actual: actual}
			}
		}
		if be := f.bufferEditor(); be != nil {
			applied, err := be.ApplyFullText(ctx, p, old, content)
			if err != nil {
				return nil, fmt.Errorf("apply edit to open document %s: %w", path, err)
			}
			if !applied {
				return nil, &BufferEditRejectedError{Path: path}
			}
			f.overlay.setText(p, content)
			f.agent.record(p)
			return &WriteResult{Version: versionOfString(content)}, nil
		}
	}

	fi, statErr := f.roots.stat(p)
	exists := statErr == nil
	if statErr != nil && !errors.Is(statErr, fs.ErrNotExist) {
		return nil, pathError(statErr, path)
	}
	if exists && fi.IsDir() {
		return nil, &IsDirectoryError{Path: path}
	}
	if exists && !fi.Mode().IsRegular() {
		return nil, &SpecialFileError{Path: path, Type: typeOf(fi.Mode())}
	}
	if expectedVersion != "" && !open && !exists {
		return nil, &StaleVersionError{Path: path, Expected: expectedVersion, Actual: ""}
	}

	dir := filepath.Dir(p)
	if _, err := f.roots.stat(dir); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, pathError(err, filepath.Dir(path))
		}
		if !createParents {
			return nil, &NotFoundError{Path: filepath.Dir(p), Hint: "pass createParents to create the missing directories"}
		}
		f.agent.record(firstMissing(dir))
		if err := f.roots.mkdirAll(dir, 0o755); err != nil {
			return nil, faultError("create the parent directories of", path, err, false)
		}
	}

	var mode fs.FileMode
	if exists {
		mode = fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	}
	// The stale check (the file must still be the version the caller read:
	// a person's save in between must not vanish) and the new version's
	// hash are CPU work on two texts; they run while the new text is
	// written and fsynced, and the rename waits for them. Checked just
	// before the rename, the window for a save to slip in is also smaller.
	var newVersion string
	var checkErr error
	verify := func() error {
		if expectedVersion != "" && !open {
			actual, err := f.roots.versionOfFile(p)
			switch {
			case err != nil:
				checkErr = pathError(err, path)
			case actual != expectedVersion:
				checkErr = &StaleVersionError{Path: path, Expected: expectedVersion, Actual: actual}
			}
			if checkErr != nil {
				return checkErr
			}
		}
		if exists {
			f.agent.recordReplace(p)
		} else {
			f.agent.record(p)
		}
		newVersion = versionOfString(content)
		return nil
	}
	// The write only reads the bytes: no copy of the text is made for it.
	if err := f.roots.writeFileAtomic(p, unsafe.Slice(unsafe.StringData(content), len(content)), mode, exists, verify); err != nil {
		if checkErr != nil {
			return nil, checkErr
		}
		return nil, writeFault(path, err)
	}
	if open {
		// No way to reach the buffer: the disk was written, and reads stay
		// consistent with what the agent just wrote until the editor
		// reports its buffer again.
		f.overlay.setText(p, content)
	}
	return &WriteResult{Version: newVersion, Created: !exists}, nil
}

// firstMissing returns the outermost ancestor of dir (or dir) that does not
// exist, the directory whose creation the watcher will report.
func firstMissing(dir string) string {
	for {
		parent := filepath.Dir(dir)
		if parent == dir {
			return dir
		}
		if _, err := os.Stat(parent); err == nil {
			return dir
		}
		dir = parent
	}
}

// Entry types, as reported by Stat and ListDirectory.
const (
	TypeFile        = "file"
	TypeDirectory   = "directory"
	TypeSymlink     = "symlink"
	TypeFIFO        = "fifo"
	TypeSocket      = "socket"
	TypeCharDevice  = "char_device"
	TypeBlockDevice = "block_device"
	TypeOther       = "other" // none of the above (Go's fs.ModeIrregular)
)

// typeOf names what mode says a path is.
func typeOf(mode fs.FileMode) string {
	switch {
	case mode.IsRegular():
		return TypeFile
	case mode.IsDir():
		return TypeDirectory
	case mode&fs.ModeSymlink != 0:
		return TypeSymlink
	case mode&fs.ModeNamedPipe != 0:
		return TypeFIFO
	case mode&fs.ModeSocket != 0:
		return TypeSocket
	case mode&fs.ModeCharDevice != 0:
		return TypeCharDevice
	case mode&fs.ModeDevice != 0:
		return TypeBlockDevice
	}
	return TypeOther
}

// FileInfo is the result of Stat.
type FileInfo struct {
	Exists bool
	// Type is what the path is, its symlink's target if it is one: TypeFile,
	// TypeDirectory, TypeFIFO, TypeSocket, TypeCharDevice, TypeBlockDevice
	// or TypeOther.
	Type string
	// IsSymlink reports that the path itself is a symlink.
	IsSymlink bool
	Size      int64
	MTime     time.Time
	Mode      fs.FileMode // permission bits
	IsBinary  bool
	// Version is set for text files within the size cap.
	Version string
}

// Stat describes path. A missing path is not an error: Exists is false.
// While the path is open in the overlay, Size, IsBinary and Version describe
// the buffer text.
func (f *FS) Stat(ctx context.Context, path string) (*FileInfo, error) {
	return f.stat(ctx, path, true)
}

// Probe is Stat without reading the whole file: Version stays empty and
// IsBinary comes from the first 8 KiB. It is for callers that only need to
// know what a path is (the editor checks it before every command).
func (f *FS) Probe(ctx context.Context, path string) (*FileInfo, error) {
	return f.stat(ctx, path, false)
}

func (f *FS) stat(ctx context.Context, path string, withVersion bool) (*FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	name, err := f.roots.resolveNoFollow(path)
	if err != nil {
		return nil, err
	}
	p, err := f.roots.Resolve(path)
	if err != nil {
		return nil, err
	}
	info := &FileInfo{}
	if lfi, err := f.roots.lstat(name); err == nil && lfi.Mode()&fs.ModeSymlink != 0 {
		info.IsSymlink = true
	}
	fi, err := f.roots.stat(p)
	text, _, open := f.overlay.get(p)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		if open {
			info.Exists, info.Type, info.Size, info.Version = true, TypeFile, int64(len(text)), versionOfString(text)
		}
		return info, nil
	default:
		return nil, err
	}
	info.Exists, info.Size, info.MTime, info.Mode = true, fi.Size(), fi.ModTime(), fi.Mode().Perm()
	if fi.IsDir() {
		info.Type = TypeDirectory
		return info, nil
	}
	info.Type = typeOf(fi.Mode())
	if info.Type != TypeFile {
		return info, nil // a FIFO, socket or device: nothing is read from it
	}
	if open {
		info.Size, info.Version = int64(len(text)), versionOfString(text)
		return info, nil
	}
	if withVersion && fi.Size() <= f.maxSize {
		if data, err := f.roots.readFile(p, f.maxSize); err == nil {
			info.IsBinary = bytes.IndexByte(data[:min(len(data), binarySniffLen)], 0) >= 0
			if !info.IsBinary {
				info.Version = Version(data)
			}
		}
	} else if sniff, err := readPrefix(f.roots, p, binarySniffLen); err == nil {
		info.IsBinary = bytes.IndexByte(sniff, 0) >= 0
	}
	return info, nil
}

func readPrefix(r *Roots, p string, n int) ([]byte, error) {
	file, _, err := r.openRegular(p)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	return io.ReadAll(io.LimitReader(file, int64(n)))
}

// Mkdir creates the directory path. With parents, missing parents are
// created and an existing directory is not an error (mkdir -p).
func (f *FS) Mkdir(ctx context.Context, path string, parents bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := f.roots.Resolve(path)
	if err != nil {
		return err
	}
	if fi, err := f.roots.stat(p); err == nil {
		if !fi.IsDir() {
			return &ExistsError{Path: path}
		}
		if parents {
			return nil
		}
		return &ExistsError{Path: path}
	}
	if parents {
		f.agent.record(firstMissing(p))
		if err := f.roots.mkdirAll(p, 0o755); err != nil {
			return faultError("create directory", path, err, false)
		}
		return nil
	}
	f.agent.record(p)
	if err := f.roots.mkdir(p, 0o755); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return &NotFoundError{Path: filepath.Dir(p), Hint: "pass parents to create the missing directories"}
		}
		return faultError("create directory", path, err, false)
	}
	return nil
}

// Delete removes path; a symlink is removed, not its target. A non-empty
// directory needs recursive. The roots themselves (and directories holding
// a root) cannot be deleted.
func (f *FS) Delete(ctx context.Context, path string, recursive bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := f.roots.resolveNoFollow(path)
	if err != nil {
		return err
	}
	if f.holdsRoot(p) {
		return &RootOperationError{Path: path, Op: "delete"}
	}
	unlock := f.locks.Lock(p)
	defer unlock()
	fi, err := f.roots.lstat(p)
	if err != nil {
		return pathError(err, path)
	}
	f.agent.record(p)
	if fi.IsDir() && recursive {
		if err := f.roots.removeAll(p); err != nil {
			return faultError("delete", path, err, false)
		}
		return nil
	}
	if err := f.roots.remove(p); err != nil {
		if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
			return &DirectoryNotEmptyError{Path: path}
		}
		return faultError("delete", path, err, false)
	}
	return nil
}

// holdsRoot reports whether removing or renaming p would take a root with it.
func (f *FS) holdsRoot(p string) bool {
	for _, d := range f.roots.dirs {
		if within(d, p) {
			return true
		}
	}
	return false
}

// Move renames from to to; a symlink is moved, not its target. If to exists
// and overwrite is false, *ExistsError is returned.
func (f *FS) Move(ctx context.Context, from, to string, overwrite bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	src, err := f.roots.resolveNoFollow(from)
	if err != nil {
		return err
	}
	dst, err := f.roots.resolveNoFollow(to)
	if err != nil {
		return err
	}
	if f.holdsRoot(src) {
		return &RootOperationError{Path: from, Op: "move"}
	}
	if f.roots.isRoot(dst) {
		return &RootOperationError{Path: to, Op: "move onto"}
	}
	if _, err := f.roots.lstat(src); err != nil {
		return pathError(err, from)
	}
	if _, err := f.roots.lstat(dst); err == nil && !overwrite {
		return &ExistsError{Path: to}
	}
	if _, err := f.roots.stat(filepath.Dir(dst)); err != nil {
		return &NotFoundError{Path: filepath.Dir(dst), Hint: "create the destination directory first"}
	}
	f.agent.record(src, dst)
	if err := f.roots.rename(src, dst); err != nil {
		return faultError("move "+from+" to", to, err, false)
	}
	return nil
}

// agentTagWindow is how long after an FS operation the watcher attributes
// events on that path to the agent. Events arrive within milliseconds; the
// margin covers a loaded machine. An external edit inside the window is
// mis-tagged "agent", which only skips a notification the editor's own
// watcher will deliver anyway.
const agentTagWindow = 2 * time.Second

// agentLog remembers paths the FS itself changed recently.
type agentLog struct {
	mu      sync.Mutex
	entries map[string]agentEntry
}

type agentEntry struct {
	until    time.Time
	replaced bool // an existing file was rewritten (renamed over)
}

func (a *agentLog) record(paths ...string) { a.put(false, paths...) }

// recordReplace notes an atomic rewrite of an existing file, which inotify
// reports as a creation; the watcher turns it back into a change.
func (a *agentLog) recordReplace(p string) { a.put(true, p) }

func (a *agentLog) put(replaced bool, paths ...string) {
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.entries) > 1024 {
		for p, e := range a.entries {
			if now.After(e.until) {
				delete(a.entries, p)
			}
		}
	}
	for _, p := range paths {
		a.entries[p] = agentEntry{until: now.Add(agentTagWindow), replaced: replaced}
	}
}

// byAgent reports whether p, or a directory above it (a recursive delete or
// a moved directory), was changed by the FS within the tag window.
func (a *agentLog) byAgent(p string) bool {
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.entries) == 0 {
		return false
	}
	for {
		if e, ok := a.entries[p]; ok && now.Before(e.until) {
			return true
		}
		parent := filepath.Dir(p)
		if parent == p {
			return false
		}
		p = parent
	}
}

// replaced reports whether p was recently rewritten in place by the FS.
func (a *agentLog) replaced(p string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.entries[p]
	return ok && e.replaced && time.Now().Before(e.until)
}
