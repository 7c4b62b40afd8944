package rpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Record is one line of a session recording: a message in either direction.
// Msg holds the JSON-RPC message; Raw holds the body instead when the client
// sent something that is not JSON, so replay can send the same bytes.
type Record struct {
	T   int64           `json:"t"`   // milliseconds since the recording started
	Dir string          `json:"dir"` // "in" (client → bridge) or "out" (bridge → client)
	Msg json.RawMessage `json:"msg,omitempty"`
	Raw *string         `json:"raw,omitempty"`
}

// Recorder appends every message in both directions to a JSONL file.
// A nil *Recorder records nothing.
type Recorder struct {
	mu    sync.Mutex
	w     *bufio.Writer
	c     io.Closer
	start time.Time
}

// NewRecorder writes records to w.
func NewRecorder(w io.Writer) *Recorder {
	r := &Recorder{w: bufio.NewWriter(w), start: time.Now()}
	if c, ok := w.(io.Closer); ok {
		r.c = c
	}
	return r
}

// CreateRecorder records into a new file at path.
func CreateRecorder(path string) (*Recorder, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cannot create the recording file: %w", err)
	}
	return NewRecorder(f), nil
}

func (r *Recorder) record(dir string, body []byte) {
	if r == nil {
		return
	}
	t := time.Since(r.start).Milliseconds()
	if !json.Valid(body) {
		raw := string(body)
		line, _ := json.Marshal(Record{T: t, Dir: dir, Raw: &raw})
		r.write(line)
		return
	}
	// A message is written as it came: JSON without a line break is one
	// line already (a break inside a string is escaped). Encoding a
	// Record would compact it twice more and copy it thrice, three times
	// a 60 MiB frame; only a message with line breaks is compacted.
	msg := body
	if bytes.ContainsAny(body, "\r\n") {
		var buf bytes.Buffer
		json.Compact(&buf, body)
		msg = buf.Bytes()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.w, `{"t":%d,"dir":%q,"msg":`, t, dir)
	r.w.Write(msg)
	r.w.WriteString("}\n")
	// Flushed per message: a recording is most wanted after a crash.
	r.w.Flush()
}

func (r *Recorder) write(line []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.w.Write(line)
	r.w.WriteByte('\n')
	r.w.Flush()
}

// Close flushes and closes the recording.
func (r *Recorder) Close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.w.Flush()
	if r.c != nil {
		if cerr := r.c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// ReadRecords parses a JSONL recording.
func ReadRecords(r io.Reader) ([]Record, error) {
	var out []Record
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), MaxMessageSize*2)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var rec Record
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, fmt.Errorf("recording line %d: %v", n, err)
		}
		if rec.Dir != "in" && rec.Dir != "out" {
			return nil, fmt.Errorf("recording line %d: dir must be \"in\" or \"out\", got %q", n, rec.Dir)
		}
		if rec.Msg == nil && rec.Raw == nil {
			return nil, fmt.Errorf("recording line %d: has neither msg nor raw", n)
		}
		out = append(out, rec)
	}
	return out, sc.Err()
}
