package shellint

import (
	"strconv"
	"strings"
)

// maxInlineLine bounds a submitted line. The tty's canonical mode keeps at
// most 4095 bytes of a line and silently drops the rest; a longer command
// goes through a file the shell reads instead.
const maxInlineLine = 3500

// submitLine is the one line that runs command seq (see scripts.go). With
// file set, the text is read from it. It starts with a space so zsh's
// HIST_IGNORE_SPACE keeps it out of the history (bash's is off while the
// machinery runs, and __br_go adds the command text itself).
func submitLine(shellKind string, seq int, text, file string) string {
	last := bashLastArg
	if shellKind == "zsh" {
		last = zshLastArg
	}
	var b strings.Builder
	b.Grow(len(text) + 128)
	b.WriteString(" __br_go ")
	b.WriteString(strconv.Itoa(seq))
	b.WriteByte(' ')
	if file != "" {
		b.WriteString("'' ")
		b.WriteString(last)
		b.WriteByte(' ')
		b.WriteString(shellQuote(file))
	} else {
		ansiCQuote(&b, text)
		b.WriteByte(' ')
		b.WriteString(last)
	}
	b.WriteString(`;builtin eval -- "$__br_c";__br_fin "${__br_st:-$?}" "$__br_la"` + "\r")
	return b.String()
}

// ansiCQuote writes s as a $'...' word. Control characters become \xNN so
// the tty's line discipline sees none of its special keys (^C, ^U, ^W, ^V,
// DEL); '!' too, so no history expansion applies. Bytes >= 0x80 (UTF-8)
// pass as they are.
func ansiCQuote(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteString("$'")
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' || c == '\'':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c < 0x20 || c == 0x7f || c == '!':
			b.WriteString(`\x`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
}

// cdPrefixed makes text run in dir, failing with cd's error (status 1)
// when dir cannot be entered. The text stays a top-level list so its
// assignments and definitions persist.
func cdPrefixed(dir, text string) string {
	return "builtin cd -- " + shellQuote(dir) + " || __br_rs 1 && {\n" + text + "\n}"
}
