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
func (t *Terminal) mirrorTextLocked(b []byte) {
	if len(t.subs) > 0 {
		t.mirror = append(t.mirror, b...)
	}
}

// mirrorMarkLocked adds the subscribers' form of one of our markers.
func (t *Terminal) mirrorMarkLocked(m mark) {
	if len(t.subs) == 0 {
		return
	}
	switch m.code {
	case "A":
		t.mirror = append(t.mirror, mirrorA...)
	case "D":
		t.mirror = append(t.mirror, mirrorDPref...)
		t.mirror = append(t.mirror, m.args[0]...)
		t.mirror = append(t.mirror, oscEnd...)
	case "P":
		t.mirror = append(t.mirror, mirrorPPref...)
		t.mirror = append(t.mirror, strings.Join(m.args[:len(m.args)-1], ";")...)
		t.mirror = append(t.mirror, oscEnd...)
	}
}

// mirrorCommandLocked adds what typing c would have shown after the
// prompt: OSC 633;E with the command line, the text, then C (output
// starts). It runs as c is submitted, before the shell can print anything
// of it.
func (t *Terminal) mirrorCommandLocked(c *command) {
	if len(t.subs) == 0 {
		return
	}
	t.mirror = append(t.mirror, mirrorEPref...)
	t.mirror = appendCommandLine(t.mirror, c.text)
	t.mirror = append(t.mirror, oscEnd...)
	t.mirror = appendTypedText(t.mirror, c.text)
	t.mirror = append(t.mirror, mirrorC...)
}

// flushMirrorLocked hands the mirrored bytes gathered so far to the
// subscribers. It runs before any state event is queued, so a state change
// follows the output that caused it.
func (t *Terminal) flushMirrorLocked() {
	defer t.flushTextLocked()
	if len(t.mirror) == 0 {
		return
	}
	data := t.mirror
	t.mirror = nil // subscribers keep data; the next chunk gets a new buffer
	off := t.offset
	t.offset += int64(len(data))
	for _, sub := range t.subs {
		sub.push(Event{TerminalID: t.id, Output: &OutputEvent{Offset: off, Data: data}})
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
func (t *Terminal) flushTextLocked() {
	if len(t.text) == 0 {
		return
	}
	text := string(t.text)
	t.text = t.text[:0]
	for _, sub := range t.subs {
		sub.push(Event{TerminalID: t.id, Text: &TextEvent{Seq: t.textSeq, Text: text}})
	}
}
