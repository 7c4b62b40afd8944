//go:build linux

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The document-sync benchmark: a person typing into a 5 MB file open in
// the editor, one textDocument/didChange per character, sent whole (what
// the extension did) and incrementally (what it does now), through the
// compiled binary. The bridge's CPU time is read from /proc, so only the
// bridge's own work counts, not this process building the frames.

const (
	docSyncSize = 5 << 20 // bytes in the open document
	// The characters typed per op, incrementally and whole. The whole text
	// costs the bridge about 0.35 s of CPU per keystroke (decoding 5 MB of
	// JSON), so the baseline types fewer to stay within a minute: its cost
	// per keystroke does not depend on how many were typed before.
	docSyncKeystrokes      = 1000
	docSyncWholeKeystrokes = 50
	// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat:
	// 100 on every Linux architecture Go supports.
	clockTicks = 100
)

// docSyncText is about 5 MB of source-like lines. The person types at the
// end of line `line`, the middle one, after text with two-byte UTF-8
// characters and an emoji (two UTF-16 code units), so positions must be
// counted in UTF-16 to land where the editor means.
func docSyncText() (text string, line int, lineText string) {
	var sb strings.Builder
	lines := 0
	for sb.Len() < docSyncSize {
		fmt.Fprintf(&sb, "    line_%06d = compute(%d)  # some ordinary text\n", lines, lines)
		lines++
	}
	line = lines / 2
	lineText = "    // naïve café 🙂 typed here: "
	all := strings.SplitAfter(sb.String(), "\n")
	all[line] = lineText + "\n"
	return strings.Join(all, ""), line, lineText
}

// bridgeCPU is the bridge's user plus system CPU time so far, in seconds.
func bridgeCPU(b *testing.B, pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The command name (field 2) may hold spaces: count from after it.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	utime, err1 := strconv.ParseUint(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseUint(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		b.Fatalf("unreadable /proc/%d/stat: %q", pid, data)
	}
	return float64(utime+stime) / clockTicks
}

// jsonString is s as a JSON string literal without its quotes.
func jsonString(s string) string {
	q, _ := json.Marshal(s)
	return string(q[1 : len(q)-1])
}

// docSyncRun is one bridge with the document open, and what has been
// typed into it.
type docSyncRun struct {
	p        *proc
	path     string
	uri      string
	text     string // the document as opened
	line     int
	lineText string
	cut      int // byte offset of the end of the typed line, before its "\n"
	// The text before and after cut, escaped once as JSON string content.
	before, after string
	version       int
	typed         []byte
	frame         []byte // reused between keystrokes
	sent          int64  // bytes of the didChange frames, headers included
}

func startDocSync(b *testing.B) *docSyncRun {
	root := b.TempDir()
	path := filepath.Join(root, "big.txt")
	text, line, lineText := docSyncText()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		b.Fatal(err)
	}
	r := &docSyncRun{p: startBridgeIn(b, root), path: path, uri: "file://" + path, text: text,
		line: line, lineText: lineText, version: 1}
	r.cut = strings.Index(text, lineText) + len(lineText)
	r.before, r.after = jsonString(text[:r.cut]), jsonString(text[r.cut:])
	err := r.p.client.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": r.uri, "languageId": "plaintext", "version": r.version, "text": text}})
	if err != nil {
		b.Fatal(err)
	}
	r.sync(b)
	return r
}

// sync returns once the bridge has handled everything sent before: the
// text/* notifications are inline, and so is bridge/info.
func (r *docSyncRun) sync(b *testing.B) {
	if err := r.p.client.Call(context.Background(), "bridge/info", nil, nil); err != nil {
		b.Fatal(err)
	}
}

// utf16Len is the length of s in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, c := range s {
		n++
		if c >= 0x10000 {
			n++
		}
	}
	return n
}

// keystroke types c at the end of the typed line, sending the whole text
// or just the change.
func (r *docSyncRun) keystroke(b *testing.B, c byte, whole bool) {
	r.version++
	body := r.frame[:0]
	body = append(body, `{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":`...)
	body = strconv.AppendQuote(body, r.uri)
	body = append(body, `,"version":`...)
	body = strconv.AppendInt(body, int64(r.version), 10)
	body = append(body, `},"contentChanges":[`...)
	if whole {
		body = append(body, `{"text":"`...)
		body = append(body, r.before...)
		body = append(body, r.typed...)
		body = append(body, c)
		body = append(body, r.after...)
		body = append(body, `"}`...)
	} else {
		ch := utf16Len(r.lineText) + len(r.typed)
		pos := fmt.Sprintf(`{"line":%d,"character":%d}`, r.line, ch)
		body = append(body, `{"range":{"start":`+pos+`,"end":`+pos+`},"text":"`...)
		body = append(body, c)
		body = append(body, `"}`...)
	}
	body = append(body, `]}}`...)
	r.frame = body
	msg := append([]byte(fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body))), body...)
	if err := r.p.client.SendBytes(msg); err != nil {
		b.Fatal(err)
	}
	r.sent += int64(len(msg))
	r.typed = append(r.typed, c)
}

// check reads the document back through the bridge: it must hold every
// character typed, where it was typed.
func (r *docSyncRun) check(b *testing.B) {
	var res struct{ Content string }
	if err := r.p.client.Call(context.Background(), "fs/read_text_file", map[string]any{"path": r.path}, &res); err != nil {
		b.Fatal(err)
	}
	if want := r.text[:r.cut] + string(r.typed) + r.text[r.cut:]; res.Content != want {
		i := 0
		for i < len(want) && i < len(res.Content) && want[i] == res.Content[i] {
			i++
		}
		b.Fatalf("the bridge holds a different text: %d bytes, want %d; first difference at byte %d: got %q, want %q",
			len(res.Content), len(want), i, res.Content[i:min(i+40, len(res.Content))], want[i:min(i+40, len(want))])
	}
}

// typeInto types keys characters b.N times into a new bridge and returns
// its CPU seconds and the bytes sent, per keystroke.
func typeInto(b *testing.B, whole bool, keys int) (cpu, bytes float64) {
	r := startDocSync(b)
	pid := r.p.cmd.Process.Pid
	before := bridgeCPU(b, pid)
	for range b.N {
		for i := range keys {
			r.keystroke(b, byte('a'+i%26), whole)
		}
	}
	r.sync(b)
	after := bridgeCPU(b, pid)
	r.check(b)
	n := float64(b.N * keys)
	return (after - before) / n, float64(r.sent) / n
}

// BenchmarkDocSync: typing into an open 5 MB file, one
// textDocument/didChange per character: 1,000 characters with only the
// change, and 50 with the whole text per keystroke (the baseline, what
// the extension sent before). It reports the bridge's CPU time and the
// bytes on the pipe per keystroke for both, and the ratios
// whole/incremental. CPU time is counted in clock ticks (10 ms): each
// figure is a mean over all the keystrokes of its run.
func BenchmarkDocSync(b *testing.B) {
	wholeCPU, wholeBytes := typeInto(b, true, docSyncWholeKeystrokes)
	incCPU, incBytes := typeInto(b, false, docSyncKeystrokes)
	b.ReportMetric(wholeCPU*1e6, "whole-cpu-µs/key")
	b.ReportMetric(incCPU*1e6, "incremental-cpu-µs/key")
	b.ReportMetric(wholeBytes, "whole-B/key")
	b.ReportMetric(incBytes, "incremental-B/key")
	if incCPU > 0 {
		b.ReportMetric(wholeCPU/incCPU, "cpu-ratio")
	}
	b.ReportMetric(wholeBytes/incBytes, "bytes-ratio")
}
