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
// HIST_IGNORE_SPACE keeps it out of the history (bash's history is off;
// the line adds the command text itself). editing adds the C marker a line
// editor's echo needs.
func submitLine(shellKind string, seq int, text, file string, editing bool) string {
	var b strings.Builder
	b.Grow(len(text) + 256)
	b.WriteString(` PS1="$__br_user_ps1" __br_seq=`)
	b.WriteString(strconv.Itoa(seq))
	b.WriteString(` __br_st=`)
	if shellKind == "bash" {
		// bash keeps $_ across PROMPT_COMMAND: the user's own is here.
		b.WriteString(` __br_la="$_"`)
	}
	if file != "" {
		b.WriteString(`;__br_rd `)
		b.WriteString(shellQuote(file))
	} else {
		b.WriteString(` __br_c=`)
		ansiCQuote(&b, text)
	}
	if shellKind == "bash" {
		b.WriteString(`;builtin history -s -- "$__br_c"`)
	} else {
		b.WriteString(`;builtin print -s -r -- "$__br_c"`)
	}
	if editing {
		b.WriteString(`;builtin printf '\033]633;C;%s;%s\007' "$__br_nonce" `)
		b.WriteString(strconv.Itoa(seq))
	}
	pipes := "PIPESTATUS"
	if shellKind == "zsh" {
		pipes = "pipestatus"
	}
	if strings.Contains(text, pipes) || file != "" {
		b.WriteString(`;builtin eval -- "$__br_pre$__br_pp$__br_c$__br_post"`)
	} else {
		b.WriteString(`;builtin eval -- "$__br_pre$__br_c$__br_post"`)
	}
	b.WriteString(`;__br_fin "${__br_st:-$?}" "$__br_la"` + "\r")
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
