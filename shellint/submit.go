package shellint

import (
	"strconv"
	"strings"
)

// maxInlineLine bounds a submitted line. The tty's canonical mode keeps at
// most 4095 bytes of a line and silently drops the rest; a longer command
// goes through a file the shell reads instead.
const maxInlineLine = 3500

// lineOpts says how submitLine wraps a command.
type lineOpts struct {
	shell string // "bash" or "zsh"
	seq   int
	text  string // the command, inline
	file  string // or the file it is read from
	// typed: the bash runs the typed-mode integration (scripts.go), whose
	// PS1 prints the markers and PS0 the C; prevEval: the previous command
	// went through this line too, so its PIPESTATUS is in __br_eps, not the
	// shell's.
	typed, prevEval bool
}

// submitLine is the one line that runs a command through eval (see
// scripts.go). It starts with a space so zsh's HIST_IGNORE_SPACE keeps it
// out of the history (classic bash's history is off; typed bash's
// `history -s` replaces the line it was recorded as); the line adds the
// command text itself.
func submitLine(o lineOpts) string {
	var b strings.Builder
	b.Grow(len(o.text) + 256)
	if o.typed {
		// $?, PIPESTATUS and $_ are still the previous command's here:
		// a simple command of assignments sets them only once it ends.
		b.WriteString(` __br_ec=$? __br_ps=("${PIPESTATUS[@]}") __br_la="$_" __br_st=`)
	} else {
		b.WriteString(` PS1="$__br_user_ps1" __br_seq=`)
		b.WriteString(strconv.Itoa(o.seq))
		b.WriteString(` __br_st=`)
		if o.shell == "bash" {
			// bash keeps $_ across PROMPT_COMMAND: the user's own is here.
			b.WriteString(` __br_la="$_"`)
		}
	}
	if o.file != "" {
		b.WriteString(`;__br_rd `)
		b.WriteString(shellQuote(o.file))
	} else {
		b.WriteString(` __br_c=`)
		ansiCQuote(&b, o.text)
	}
	if o.shell == "bash" {
		b.WriteString(`;builtin history -s -- "$__br_c"`)
	} else {
		b.WriteString(`;builtin print -s -r -- "$__br_c"`)
	}
	// C: the shell has read the whole line (scripts.go). In typed mode PS0
	// has said so already, unless a command removed it and our hook, which
	// puts it back, did not run.
	b.WriteString(`;builtin printf '\033]633;C;%s;%s\007' "$__br_nonce" `)
	b.WriteString(strconv.Itoa(o.seq))
	pipes := "PIPESTATUS"
	if o.shell == "zsh" {
		pipes = "pipestatus"
	}
	switch {
	case !strings.Contains(o.text, pipes) && o.file == "":
		b.WriteString(`;builtin eval -- "$__br_pre$__br_c$__br_post"`)
	case o.typed && o.prevEval:
		b.WriteString(`;__br_mkpp "${__br_eps[@]}";builtin eval -- "$__br_pre$__br_pp$__br_c$__br_post"`)
	case o.typed:
		b.WriteString(`;__br_mkpp "${__br_ps[@]}";builtin eval -- "$__br_pre$__br_pp$__br_c$__br_post"`)
	default:
		b.WriteString(`;builtin eval -- "$__br_pre$__br_pp$__br_c$__br_post"`)
	}
	if o.typed {
		b.WriteString(`;__br_fin "${__br_st:-$?}" `)
		b.WriteString(strconv.Itoa(o.seq))
		b.WriteString(` "$__br_la"` + "\r")
	} else {
		b.WriteString(`;__br_fin "${__br_st:-$?}" "$__br_la"` + "\r")
	}
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
