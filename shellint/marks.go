package shellint

import (
	"bytes"
	"strconv"
	"strings"
)

// markPrefix starts every OSC 633 sequence. Other OSC sequences are left in
// the text: they belong to the programs being run, not to us.
const markPrefix = "\x1b]633;"

// maxMarkLen bounds a pending marker. Ours are short (the longest carries a
// cwd); anything longer is somebody else's OSC 633 and is released as text so
// a stray unterminated sequence cannot swallow output.
const maxMarkLen = 64 << 10

// mark is one complete OSC 633 sequence: the code (A, C, D, P, ...), its
// ';'-separated arguments and the raw bytes, which are handed back as text
// when the nonce or sequence number does not check out.
type mark struct {
	code string
	args []string
	raw  []byte
}

// markScanner splits the PTY byte stream into text and OSC 633 marks. It is
// stateful so that a marker split across reads, at any byte, is still seen
// whole; text is released as soon as it cannot start a marker.
type markScanner struct {
	pending   []byte // a possible marker, starting with ESC
	escInBody bool   // last pending byte is an ESC inside the body (maybe ST)
}

// feed scans p. emitText's argument is only valid during the call.
func (s *markScanner) feed(p []byte, emitText func([]byte), emitMark func(mark)) {
	for len(p) > 0 {
		if len(s.pending) == 0 {
			i := bytes.IndexByte(p, 0x1b)
			if i < 0 {
				emitText(p)
				return
			}
			if i > 0 {
				emitText(p[:i])
			}
			s.pending = append(s.pending, 0x1b)
			p = p[i+1:]
			continue
		}
		b := p[0]
		n := len(s.pending)
		switch {
		case n < len(markPrefix):
			if b != markPrefix[n] {
				// Not ours. Release the bytes but keep b: it may be
				// an ESC that starts a real marker.
				s.release(emitText)
				continue
			}
			s.pending = append(s.pending, b)
			p = p[1:]
		case s.escInBody:
			s.escInBody = false
			if b == '\\' {
				s.pending = append(s.pending, b)
				p = p[1:]
				s.finish(len(s.pending)-2, emitMark)
				continue
			}
			// ESC not followed by '\' aborts the sequence; that ESC may
			// begin the next one.
			emitText(s.pending[:n-1])
			s.pending = append(s.pending[:0], 0x1b)
		case b == 0x07:
			s.pending = append(s.pending, b)
			p = p[1:]
			s.finish(len(s.pending)-1, emitMark)
		case b == 0x1b:
			s.pending = append(s.pending, b)
			s.escInBody = true
			p = p[1:]
		case n >= maxMarkLen:
			s.release(emitText)
		default:
			// Copy the run up to the next terminator candidate at once.
			j := bytes.IndexAny(p, "\x07\x1b")
			if j < 0 {
				j = len(p)
			}
			if room := maxMarkLen - n; j > room {
				j = room
			}
			s.pending = append(s.pending, p[:j]...)
			p = p[j:]
		}
	}
}

func (s *markScanner) release(emitText func([]byte)) {
	emitText(s.pending)
	s.pending = s.pending[:0]
	s.escInBody = false
}

// finish turns pending[:bodyEnd] (prefix + body) into a mark.
func (s *markScanner) finish(bodyEnd int, emitMark func(mark)) {
	body := string(s.pending[len(markPrefix):bodyEnd])
	raw := append([]byte(nil), s.pending...)
	s.pending = s.pending[:0]
	parts := strings.Split(body, ";")
	emitMark(mark{code: parts[0], args: parts[1:], raw: raw})
}

// decodeMarkValue undoes the escaping of OSC 633 property values: `\\` and
// `\xAB`, as VS Code's deserializeMessage does.
func decodeMarkValue(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\\' && i+1 < len(v) {
			if v[i+1] == '\\' {
				b.WriteByte('\\')
				i++
				continue
			}
			if v[i+1] == 'x' && i+3 < len(v) {
				if n, err := strconv.ParseUint(v[i+2:i+4], 16, 8); err == nil {
					b.WriteByte(byte(n))
					i += 3
					continue
				}
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}
