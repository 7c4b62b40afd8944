package ohactions

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/oh-bridge/oh-bridge/editor"
	"github.com/oh-bridge/oh-bridge/pytext"
	"github.com/oh-bridge/oh-bridge/workspace"
)

// outsideMessage explains a path outside the workspace, in OHEditor's
// "Invalid `path` parameter" style.
func outsideMessage(path string, roots []string) string {
	return "Invalid `path` parameter: " + path + ". The path " + path + " is outside the workspace (" +
		strings.Join(roots, ", ") + "). This runtime can only access files inside the workspace."
}

// editorErrorText is what OpenHands puts after "ERROR:\n" for an editor
// failure.
func (r *Runtime) editorErrorText(path string, err error) string {
	var te *editor.ToolError
	if errors.As(err, &te) {
		return te.Message
	}
	var out *workspace.OutsideRootsError
	if errors.As(err, &out) {
		return outsideMessage(path, r.fs.Roots().List())
	}
	return err.Error()
}

// resolve is action_execution_server's _resolve_path: relative paths are
// taken from the agent shell's cwd.
func (r *Runtime) resolve(path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(r.cwd(), path)
}

// isBinaryFile stands in for binaryornot's is_binary: a NUL byte in the
// first 8 KiB of a regular file. Missing files, directories, FIFOs, sockets
// and devices are not binary: the read that follows says what they are.
// The file is opened by the agent's read rule (workspace.Roots.OpenRegular:
// beneath its root, without blocking), so a FIFO cannot hold the action.
func (r *Runtime) isBinaryFile(resolved string) bool {
	f, err := r.fs.Roots().OpenRegular(resolved)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 8192)
	n, _ := io.ReadFull(f, buf)
	return bytes.IndexByte(buf[:n], 0) >= 0
}

// maxMediaFileSize caps what V0's read takes of an image, a PDF or a
// video, which it answers whole as a base64 data URL. OpenHands reads them
// with no cap; the observation is one JSON message, a third larger than
// the file, held in memory on both sides.
const maxMediaFileSize = 20 << 20

var mediaTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".bmp": "image/bmp", ".gif": "image/gif",
	".pdf": "application/pdf", ".mp4": "video/mp4", ".webm": "video/webm", ".ogg": "audio/ogg",
}

// read is action_execution_server's read.
func (r *Runtime) read(ctx context.Context, a *Action) (*Observation, error) {
	path, err := a.str("path", "")
	if err != nil {
		return nil, err
	}
	impl, err := a.str("impl_source", "default")
	if err != nil {
		return nil, err
	}
	target := r.resolve(path)
	resolved, rerr := r.fs.Roots().Resolve(target)
	if rerr == nil && r.isBinaryFile(resolved) {
		return errorObservation("ERROR_BINARY_FILE"), nil
	}
	if impl == "oh_aci" {
		vr, err := viewRange(a)
		if err != nil {
			return nil, err
		}
		res, err := r.ed.Execute(ctx, editor.Request{Command: editor.CommandView, Path: path, ViewRange: vr})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return withFault(readObservation(path, "ERROR:\n"+r.editorErrorText(path, err), "oh_aci"), err), nil
		}
		return readObservation(path, res.Output, "oh_aci"), nil
	}
	if rerr != nil {
		return errorObservation(r.editorErrorText(target, rerr)), nil
	}
	workingDir := r.cwd()
	fi, err := os.Stat(resolved)
	switch {
	case err != nil:
		return errorObservation("File not found: " + target + ". Your current working directory is " + workingDir + "."), nil
	case fi.IsDir():
		return errorObservation("Path is a directory: " + target + ". You can only read files"), nil
	}
	if mt, ok := mediaTypes[strings.ToLower(filepath.Ext(target))]; ok {
		data, err := r.fs.Roots().ReadRegular(resolved, maxMediaFileSize)
		var nt *workspace.NotTextError
		var nf *workspace.NotFoundError
		switch {
		case errors.As(err, &nt) && nt.Reason == workspace.NotTextTooLarge:
			return errorObservation(fmt.Sprintf("%s is too large to read (%d bytes; images, PDFs and videos are read up to %d bytes); make a smaller copy with a shell command and read that",
				target, nt.Size, nt.Limit)), nil
		case errors.As(err, &nf):
			return errorObservation("File not found: " + target + ". Your current working directory is " + workingDir + "."), nil
		case err != nil:
			return withFault(errorObservation(err.Error()), err), nil
		}
		return readObservation(target, "data:"+mt+";base64,"+base64.StdEncoding.EncodeToString(data), "default"), nil
	}
	text, err := r.readText(ctx, resolved)
	if err != nil {
		var nt *workspace.NotTextError
		if errors.As(err, &nt) && nt.Reason == workspace.NotTextInvalidUTF8 {
			return errorObservation("File could not be decoded as utf-8: " + target + "."), nil
		}
		return withFault(errorObservation(err.Error()), err), nil
	}
	start, err := a.integer("start", 0)
	if err != nil {
		return nil, err
	}
	end, err := a.integer("end", -1)
	if err != nil {
		return nil, err
	}
	return readObservation(target, strings.Join(readLines(splitLinesKeepEnds(text), start, end), ""), "default"), nil
}

// readText reads a whole file as Python's text mode does: UTF-8 with
// universal newlines ("\r\n" and "\r" become "\n").
func (r *Runtime) readText(ctx context.Context, resolved string) (string, error) {
	tf, err := r.fs.ReadTextFile(ctx, resolved, 0, 0)
	if err != nil {
		return "", err
	}
	s := strings.ReplaceAll(tf.Content, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n"), nil
}

func splitLinesKeepEnds(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// readLines is openhands.runtime.utils.files.read_lines.
func readLines(all []string, start, end int) []string {
	start = max(start, 0)
	start = min(start, len(all))
	if end != -1 {
		end = max(end, 0)
	}
	end = min(end, len(all))
	if end == -1 {
		return all[start:]
	}
	n := len(all)
	begin := max(0, min(start, n-2))
	if end > n {
		return pySlice(all, begin, -1)
	}
	return pySlice(all, begin, max(begin+1, end))
}

// pySlice is Python's all[begin:end] for the non-negative begin and an end
// that may be -1.
func pySlice(all []string, begin, end int) []string {
	if end < 0 {
		end = len(all) + end
	}
	end = min(end, len(all))
	if begin >= end {
		return nil
	}
	return all[begin:end]
}

// viewRange decodes view_range; anything but a list of integers is passed
// on so that the editor answers its "should be a list of two integers"
// error.
func viewRange(a *Action) ([]int, error) {
	raw, ok := a.Args["view_range"]
	if !ok || isNull(raw) {
		return nil, nil
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return []int{0, 0, 0}, nil
	}
	out := make([]int, 0, len(list))
	for _, v := range list {
		f, ok := jsonNumber(v)
		if !ok || f != math.Trunc(f) {
			return []int{0, 0, 0}, nil
		}
		out = append(out, int(f))
	}
	if len(out) == 0 {
		return []int{0, 0, 0}, nil
	}
	return out, nil
}

// write is action_execution_server's write. OpenHands' quirks are kept: a
// new file gets "\n" after every "\n"-separated piece of content (so
// "a\n" is written as "a\n\n"), and an existing file is rewritten with
// universal newlines translated to "\n".
func (r *Runtime) write(ctx context.Context, a *Action) (*Observation, error) {
	path, err := a.str("path", "")
	if err != nil {
		return nil, err
	}
	content, err := a.str("content", "")
	if err != nil {
		return nil, err
	}
	start, err := a.integer("start", 0)
	if err != nil {
		return nil, err
	}
	end, err := a.integer("end", -1)
	if err != nil {
		return nil, err
	}
	target := r.resolve(path)
	resolved, err := r.fs.Roots().Resolve(target)
	if err != nil {
		return errorObservation(r.editorErrorText(target, err)), nil
	}
	insert := strings.Split(content, "\n")
	fi, statErr := os.Stat(resolved)
	exists := statErr == nil
	if exists && fi.IsDir() {
		return errorObservation("Path is a directory: " + target + ". You can only write to files"), nil
	}
	var b strings.Builder
	if !exists {
		for _, l := range insert {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	} else {
		text, err := r.readText(ctx, resolved)
		if err != nil {
			var nt *workspace.NotTextError
			if errors.As(err, &nt) && nt.Reason == workspace.NotTextInvalidUTF8 {
				return errorObservation("File could not be decoded as utf-8: " + target), nil
			}
			return withFault(errorObservation(err.Error()), err), nil
		}
		for _, l := range insertLines(insert, splitLinesKeepEnds(text), start, end) {
			b.WriteString(l)
		}
	}
	if _, err := r.fs.WriteTextFile(ctx, resolved, b.String(), "", true); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// OpenHands' runtime answered HTTP 500 here; the bridge's words
		// name the cause and the fix.
		return withFault(errorObservation(err.Error()), err), nil
	}
	if !exists {
		if err := os.Chmod(resolved, 0o664); err != nil {
			return errorObservation("File " + target + " written, but failed to change ownership and permissions: " + err.Error()), nil
		}
	}
	return writeObservation(target), nil
}

// insertLines is openhands.runtime.utils.files.insert_lines.
func insertLines(insert, original []string, start, end int) []string {
	var out []string
	if start != 0 {
		out = append(out, pySlice(original, 0, start)...)
	}
	for _, l := range insert {
		out = append(out, l+"\n")
	}
	if end != -1 {
		out = append(out, pySlice(original, end, len(original))...)
	}
	return out
}

// edit is action_execution_server's edit (OHEditor, impl_source oh_aci).
func (r *Runtime) edit(ctx context.Context, a *Action) (*Observation, error) {
	impl, err := a.str("impl_source", "oh_aci")
	if err != nil {
		return nil, err
	}
	path, err := a.str("path", "")
	if err != nil {
		return nil, err
	}
	if impl != "oh_aci" {
		return errorObservation("FileEditAction with impl_source '" + impl + "' is not executed by this runtime: " +
			"the OpenHands client applies LLM-based edits itself with read and write actions. " +
			"Use impl_source 'oh_aci' (str_replace_editor) edits instead."), nil
	}
	command, err := a.str("command", "")
	if err != nil {
		return nil, err
	}
	req := editor.Request{Command: command, Path: path}
	if req.FileText, err = a.optStr("file_text"); err != nil {
		return nil, err
	}
	if req.OldStr, err = a.optStr("old_str"); err != nil {
		return nil, err
	}
	if req.NewStr, err = a.optStr("new_str"); err != nil {
		return nil, err
	}
	if raw, ok := a.Args["insert_line"]; ok && !isNull(raw) {
		var n int
		var s string
		switch {
		case json.Unmarshal(raw, &n) == nil:
			req.InsertLine = &n
		case json.Unmarshal(raw, &s) == nil:
			v, err := pyInt(s)
			if err != nil {
				return editObservation(path, "ERROR:\nInvalid insert_line value: '"+s+"'. Expected an integer.",
					req.OldStr, req.NewStr, ""), nil
			}
			req.InsertLine = &v
		default:
			return nil, &argError{a.Type, "insert_line", "an integer or null"}
		}
	}
	res, err := r.ed.Execute(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return withFault(editObservation(path, "ERROR:\n"+r.editorErrorText(path, err), req.OldStr, req.NewStr, ""), err), nil
	}
	if res.Output == "" {
		return editObservation(path, "", req.OldStr, req.NewStr, ""), nil
	}
	return editObservation(path, res.Output, req.OldStr, req.NewStr, res.Diff), nil
}

// pyInt is Python's int() of a string: surrounding whitespace, a sign and
// underscores between digits are allowed.
func pyInt(s string) (int, error) {
	t := pytext.Strip(s)
	if strings.Contains(t, "__") || strings.HasPrefix(strings.TrimLeft(t, "+-"), "_") || strings.HasSuffix(t, "_") {
		return 0, strconv.ErrSyntax
	}
	return strconv.Atoi(strings.ReplaceAll(t, "_", ""))
}

// FaultExtra is the extras key an observation of a disk fault, or of a
// FIFO, socket or device where a file was read or written, adds to
// OpenHands' own: {kind, path, op, unchanged} for a disk fault, the kind
// and data the editor's face gives in error.data ("no_space",
// "read_only_file_system", ...), and {kind: "not_regular_file", path,
// type} for the rest. Other failures keep extras exactly OpenHands'.
const FaultExtra = "oh_bridge_error"

// withFault adds FaultExtra to o when err is a disk fault or a file that
// is not regular.
func withFault(o *Observation, err error) *Observation {
	var fault *workspace.IOError
	var special *workspace.SpecialFileError
	var d Object
	switch {
	case errors.As(err, &fault):
		d = Object{{"kind", fault.Kind()}, {"path", fault.Path}, {"op", fault.Op}, {"unchanged", fault.Unchanged}}
	case errors.As(err, &special):
		d = Object{{"kind", special.Kind()}, {"path", special.Path}, {"type", special.Type}}
	default:
		return o
	}
	var te *editor.ToolError
	if errors.As(err, &te) && te.Path != "" {
		d[1].Value = te.Path // the path as the agent gave it
	}
	o.Extras = append(o.Extras, Field{FaultExtra, d})
	return o
}
