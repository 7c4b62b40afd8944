package shellint

import (
	"strings"
)

// The mirror is the byte stream subscribers get: what the terminal would
// show a person who had typed the agent's commands. The raw PTY stream
// differs in two ways, both corrected here as markers are scanned:
//
//   - Our OSC 633 markers carry the nonce (and C/D the sequence number). The
//     bridge has checked them; the mirror gets them in VS Code's own form
//     (A, D;<exit>, P;Cwd=<dir>) so the nonce never leaves the bridge.
//   - The submitted line is not echoed (ECHO is off while the shell takes
//     it), so as the command is submitted the mirror gets what typing it
//     would have shown: an OSC 633;E with the command line, for VS Code's
//     command detection, the command text itself, and OSC 633;C.
//
// Anything else, a foreign 633 sequence included, passes through as it was.

const (
	oscEnd       = "\x07"
	mirrorA      = markPrefix + "A" + oscEnd
	mirrorC      = markPrefix + "C" + oscEnd
	mirrorDPref  = markPrefix + "D;"
	mirrorPPref  = markPrefix + "P;"
	mirrorEPref  = markPrefix + "E;"
	hexDigits    = "0123456789abcdef"
	caretDisplay = '@' // control byte c shows as ^(c+'@'), as the tty's ECHOCTL does
)

// mirrorTextLocked adds bytes that pass unchanged.
func (s *Terminal) mirrorTextLocked(b []byte) {
	if len(s.subs) > 0 {
		s.mirror = append(s.mirror, b...)
	}
}

// mirrorMarkLocked adds the subscribers' form of one of our markers.
func (s *Terminal) mirrorMarkLocked(m mark) {
	if len(s.subs) == 0 {
		return
	}
	switch m.code {
	case "A":
		s.mirror = append(s.mirror, mirrorA...)
	case "D":
		s.mirror = append(s.mirror, mirrorDPref...)
		s.mirror = append(s.mirror, m.args[0]...)
		s.mirror = append(s.mirror, oscEnd...)
	case "P":
		s.mirror = append(s.mirror, mirrorPPref...)
		s.mirror = append(s.mirror, strings.Join(m.args[:len(m.args)-1], ";")...)
		s.mirror = append(s.mirror, oscEnd...)
	}
}

// mirrorCommandLocked adds what typing c would have shown after the
// prompt: OSC 633;E with the command line, the text, then C (output
// starts). It runs as c is submitted, before the shell can print anything
// of it.
func (s *Terminal) mirrorCommandLocked(c *command) {
	if len(s.subs) == 0 {
		return
	}
	s.mirror = append(s.mirror, mirrorEPref...)
	s.mirror = appendCommandLine(s.mirror, c.text)
	s.mirror = append(s.mirror, oscEnd...)
	s.mirror = appendTypedText(s.mirror, c.text)
	s.mirror = append(s.mirror, mirrorC...)
}

// flushMirrorLocked hands the mirrored bytes gathered so far to the
// subscribers. It runs before any state event is queued, so a state change
// follows the output that caused it.
func (s *Terminal) flushMirrorLocked() {
	defer s.flushTextLocked()
	if len(s.mirror) == 0 {
		return
	}
	data := s.mirror
	s.mirror = nil // subscribers keep data; the next chunk gets a new buffer
	off := s.offset
	s.offset += int64(len(data))
	for _, sub := range s.subs {
		sub.push(Event{TerminalID: s.id, Output: &OutputEvent{Offset: off, Data: data}})
	}
}

// appendCommandLine escapes a command line for OSC 633;E as VS Code's
// deserializeMessage expects: `\` as `\\`, `;` and control characters as
// \xNN; everything else, UTF-8 included, as it is.
func appendCommandLine(dst []byte, text string) []byte {
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\\':
			dst = append(dst, '\\', '\\')
		case c == ';' || c < 0x20 || c == 0x7f:
			dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// appendTypedText is the command text as the terminal would have echoed it
// had it been typed: lines end in CR LF, other control characters show in
// caret notation, and the Enter that submits it moves to the next line.
func appendTypedText(dst []byte, text string) []byte {
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\n':
			dst = append(dst, '\r', '\n')
		case c == '\t':
			dst = append(dst, c)
		case c < 0x20:
			dst = append(dst, '^', c+caretDisplay)
		case c == 0x7f:
			dst = append(dst, '^', '?')
		default:
			dst = append(dst, c)
		}
	}
	if !strings.HasSuffix(text, "\n") {
		dst = append(dst, '\r', '\n')
	}
	return dst
}

// flushTextLocked hands the command text gathered so far to the
// subscribers, after the raw bytes that carried it.
func (s *Terminal) flushTextLocked() {
	if len(s.text) == 0 {
		return
	}
	text := string(s.text)
	s.text = s.text[:0]
	for _, sub := range s.subs {
		sub.push(Event{TerminalID: s.id, Text: &TextEvent{Seq: s.textSeq, Text: text}})
	}
}
