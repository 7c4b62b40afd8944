package rpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// The framings a recording can have been made with: replay must speak the
// same one to the fresh bridge.
const (
	// FramingContentLength is LSP's base protocol, the editor face's
	// framing, and what a recording without a header was made with.
	FramingContentLength = "content-length"
	// FramingLines is one message a line (ACP's stdio transport).
	FramingLines = "lines"
)

// Header is the optional first line of a recording, written as
// {"recording": {...}}: what made the recording and how to replay it.
// Recordings made before headers existed have none; they are the editor
// face's, with Content-Length framing, and stay valid.
type Header struct {
	Framing string `json:"framing"`
	// Command is the subcommand that recorded, e.g. "oh-bridge acp";
	// replay runs the same one.
	Command string `json:"command,omitempty"`
	Version string `json:"version,omitempty"`
	// Meta is what the command needs to know to replay the session; its
	// shape is the command's business.
	Meta json.RawMessage `json:"meta,omitempty"`
}

// headerLine is how a header sits in the file; the "recording" key sets
// it apart from a Record, which never has one.
type headerLine struct {
	Recording *Header `json:"recording"`
}

// Line is the header as a recording's first line, newline included.
func (h Header) Line() []byte {
	b, _ := json.Marshal(headerLine{&h})
	return append(b, '\n')
}

// WriteHeader starts the recording with h. Call it before the recorder
// records its first message.
func (r *Recorder) WriteHeader(h Header) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.w.Write(h.Line())
	return r.w.Flush()
}

// ReadRecording parses a JSONL recording and its header, nil when it has
// none (it is then the editor face's, in FramingContentLength).
func ReadRecording(r io.Reader) (*Header, []Record, error) {
	br := bufio.NewReader(r)
	first, err := br.ReadBytes('\n')
	if err != nil && err != io.EOF {
		return nil, nil, err
	}
	var hl headerLine
	if json.Unmarshal(bytes.TrimSpace(first), &hl) == nil && hl.Recording != nil {
		h := hl.Recording
		if h.Framing != FramingContentLength && h.Framing != FramingLines {
			return nil, nil, fmt.Errorf("recording line 1: framing %q is not %q or %q (was the recording made by a newer oh-bridge?)", h.Framing, FramingContentLength, FramingLines)
		}
		// A blank line in the header's place keeps ReadRecords' line
		// numbers those of the file.
		first = []byte("\n")
	}
	records, err := ReadRecords(io.MultiReader(bytes.NewReader(first), br))
	return hl.Recording, records, err
}
