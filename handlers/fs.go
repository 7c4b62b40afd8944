package handlers

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/session"
)

// The fs/* methods: plain file operations inside the workspace roots, on
// top of workspace.FS. Paths are absolute or relative to the first root.

type readTextFileParams struct {
	Path  string `json:"path"`
	Line  *int   `json:"line"`  // 1-based first line; absent means 1
	Limit *int   `json:"limit"` // line count; absent means to the end
}

type readTextFileResult struct {
	Content    string `json:"content"`
	TotalLines int    `json:"totalLines"`
	Truncated  bool   `json:"truncated"`
	Encoding   string `json:"encoding"`
	Version    string `json:"version"`
}

// AppendJSON encodes the result as encoding/json would, escaping the
// content once, straight into the response (rpc.JSONAppender).
func (r *readTextFileResult) AppendJSON(b []byte) []byte {
	b = append(b, `{"content":`...)
	b = rpc.AppendString(b, r.Content)
	b = append(b, `,"totalLines":`...)
	b = strconv.AppendInt(b, int64(r.TotalLines), 10)
	b = append(b, `,"truncated":`...)
	b = strconv.AppendBool(b, r.Truncated)
	b = append(b, `,"encoding":`...)
	b = rpc.AppendString(b, r.Encoding)
	b = append(b, `,"version":`...)
	b = rpc.AppendString(b, r.Version)
	return append(b, '}')
}

func (h *Handlers) readTextFile(ctx context.Context, p *readTextFileParams) (*readTextFileResult, error) {
	if err := requirePath("path", p.Path); err != nil {
		return nil, err
	}
	line, limit := 1, 0
	if p.Line != nil {
		if *p.Line < 1 {
			return nil, rpc.InvalidParams("line", "a line number ≥ 1")
		}
		line = *p.Line
	}
	if p.Limit != nil {
		if *p.Limit < 1 {
			return nil, rpc.InvalidParams("limit", "a line count ≥ 1")
		}
		limit = *p.Limit
	}
	s, err := h.session()
	if err != nil {
		return nil, err
	}
	f, err := s.ReadTextFile(ctx, p.Path, line, limit)
	if err != nil {
		return nil, err
	}
	return &readTextFileResult{Content: f.Content, TotalLines: f.TotalLines, Truncated: f.Truncated, Encoding: f.Encoding, Version: f.Version}, nil
}

type writeTextFileParams struct {
	Path            string  `json:"path"`
	Content         *string `json:"content"`
	ExpectedVersion string  `json:"expectedVersion"`
	CreateParents   bool    `json:"createParents"`
}

type writeTextFileResult struct {
	Version string `json:"version"`
	Created bool   `json:"created"`
}

func (h *Handlers) writeTextFile(ctx context.Context, p *writeTextFileParams) (*writeTextFileResult, error) {
	if err := requirePath("path", p.Path); err != nil {
		return nil, err
	}
	if p.Content == nil {
		return nil, rpc.InvalidParams("content", "a string (the whole new text of the file)")
	}
	s, err := h.session()
	if err != nil {
		return nil, err
	}
	res, err := s.WriteTextFile(ctx, p.Path, *p.Content, p.ExpectedVersion, p.CreateParents)
	if err != nil {
		return nil, err
	}
	return &writeTextFileResult{Version: res.Version, Created: res.Created}, nil
}

type listDirectoryParams struct {
	Path             string `json:"path"`
	Depth            *int   `json:"depth"` // levels; absent means 1
	IncludeHidden    bool   `json:"includeHidden"`
	RespectGitignore bool   `json:"respectGitignore"`
	Limit            *int   `json:"limit"` // entries; absent means 10,000, and at most 50,000
}

// A listing answers at most listDefaultLimit entries when the client gives
// no limit, and listMaxLimit whatever it asks: the walk holds about twice
// that (workspace reads directories in batches and stops at the limit),
// and the answer stays a few MB, however many files the agent made.
const (
	listDefaultLimit = 10_000
	listMaxLimit     = 50_000
)

type listEntry struct {
	Path  string `json:"path"`
	Type  string `json:"type"`
	Size  int64  `json:"size"`  // bytes; 0 for directories
	MTime int64  `json:"mtime"` // milliseconds since the Unix epoch, as VS Code's FileStat
}

type listDirectoryResult struct {
	Entries   []listEntry `json:"entries"`
	Truncated bool        `json:"truncated"`
	Limit     int         `json:"limit"` // the limit applied: the one asked for, else 10,000; at most 50,000
}

// AppendJSON encodes the result as encoding/json would, without
// reflection over 10,000 entries (rpc.JSONAppender).
func (r *listDirectoryResult) AppendJSON(b []byte) []byte {
	b = append(b, `{"entries":`...)
	if r.Entries == nil {
		b = append(b, "null"...)
	} else {
		b = slices.Grow(b, len(r.Entries)*(len(`{"path":"","type":"file","size":0,"mtime":1700000000000},`)+64))
		b = append(b, '[')
		for i, e := range r.Entries {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"path":`...)
			b = rpc.AppendString(b, e.Path)
			b = append(b, `,"type":`...)
			b = rpc.AppendString(b, e.Type)
			b = append(b, `,"size":`...)
			b = strconv.AppendInt(b, e.Size, 10)
			b = append(b, `,"mtime":`...)
			b = strconv.AppendInt(b, e.MTime, 10)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"truncated":`...)
	b = strconv.AppendBool(b, r.Truncated)
	b = append(b, `,"limit":`...)
	b = strconv.AppendInt(b, int64(r.Limit), 10)
	return append(b, '}')
}

func (h *Handlers) listDirectory(ctx context.Context, p *listDirectoryParams) (*listDirectoryResult, error) {
	if err := requirePath("path", p.Path); err != nil {
		return nil, err
	}
	opts := session.ListOptions{IncludeHidden: p.IncludeHidden, RespectGitignore: p.RespectGitignore, Limit: listDefaultLimit}
	if p.Depth != nil {
		if *p.Depth < 1 {
			return nil, rpc.InvalidParams("depth", "a depth ≥ 1 (1 lists the direct children)")
		}
		opts.Depth = *p.Depth
	}
	if p.Limit != nil {
		if *p.Limit < 1 {
			return nil, rpc.InvalidParams("limit", "an entry count ≥ 1")
		}
		opts.Limit = min(*p.Limit, listMaxLimit)
	}
	s, err := h.session()
	if err != nil {
		return nil, err
	}
	l, err := s.ListDirectory(ctx, p.Path, opts)
	if err != nil {
		return nil, err
	}
	res := &listDirectoryResult{Entries: make([]listEntry, len(l.Entries)), Truncated: l.Truncated, Limit: opts.Limit}
	for i, e := range l.Entries {
		res.Entries[i] = listEntry{Path: e.Path, Type: e.Type, Size: fileSize(e.Type, e.Size), MTime: unixMs(e.MTime)}
	}
	return res, nil
}

// fileSize is the size of a file; a directory's size is the file system's
// business (4096 on ext4, a multiple of 20 on tmpfs) and is reported as 0.
func fileSize(typ string, size int64) int64 {
	if typ == session.TypeDirectory {
		return 0
	}
	return size
}

func unixMs(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

type statParams struct {
	Path string `json:"path"`
}

type statResult struct {
	Exists    bool   `json:"exists"`
	Type      string `json:"type,omitempty"` // of the symlink's target, for a symlink
	IsSymlink bool   `json:"isSymlink"`
	Size      int64  `json:"size"`
	MTime     int64  `json:"mtime"`          // milliseconds since the Unix epoch
	Mode      string `json:"mode,omitempty"` // permission bits in octal, "0644"
	IsBinary  bool   `json:"isBinary"`
	Version   string `json:"version,omitempty"` // text files within the size cap
}

func (h *Handlers) stat(ctx context.Context, p *statParams) (*statResult, error) {
	if err := requirePath("path", p.Path); err != nil {
		return nil, err
	}
	s, err := h.session()
	if err != nil {
		return nil, err
	}
	fi, err := s.Stat(ctx, p.Path)
	if err != nil {
		return nil, err
	}
	res := &statResult{Exists: fi.Exists, Type: fi.Type, IsSymlink: fi.IsSymlink, Size: fileSize(fi.Type, fi.Size),
		MTime: unixMs(fi.MTime), IsBinary: fi.IsBinary, Version: fi.Version}
	if fi.Exists && !fi.MTime.IsZero() {
		res.Mode = fmt.Sprintf("%04o", uint32(fi.Mode.Perm()))
	}
	return res, nil
}

type mkdirParams struct {
	Path    string `json:"path"`
	Parents bool   `json:"parents"`
}

func (h *Handlers) mkdir(ctx context.Context, p *mkdirParams) (any, error) {
	if err := requirePath("path", p.Path); err != nil {
		return nil, err
	}
	s, err := h.session()
	if err != nil {
		return nil, err
	}
	return nil, s.Mkdir(ctx, p.Path, p.Parents)
}

type deleteParams struct {
	Path      string `json:"path"`
	Recursive bool   `json:"recursive"`
}

func (h *Handlers) delete(ctx context.Context, p *deleteParams) (any, error) {
	if err := requirePath("path", p.Path); err != nil {
		return nil, err
	}
	s, err := h.session()
	if err != nil {
		return nil, err
	}
	return nil, s.Delete(ctx, p.Path, p.Recursive)
}

type moveParams struct {
	From      string `json:"from"`
	To        string `json:"to"`
	Overwrite bool   `json:"overwrite"`
}

func (h *Handlers) move(ctx context.Context, p *moveParams) (any, error) {
	if err := requirePath("from", p.From); err != nil {
		return nil, err
	}
	if err := requirePath("to", p.To); err != nil {
		return nil, err
	}
	s, err := h.session()
	if err != nil {
		return nil, err
	}
	return nil, s.Move(ctx, p.From, p.To, p.Overwrite)
}
