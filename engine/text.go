package engine

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/oh-bridge/oh-bridge/pytext"
)

// paneText turns a command's cooked terminal text into what tmux's
// capture-pane shows of it: a carriage return moves back to the start of
// the line so later characters overwrite earlier ones (progress bars),
// tabs advance to the next multiple of 8 columns, and every line loses its
// trailing whitespace, as bash.py's rstrip per line does.
func paneText(s string) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		if strings.ContainsAny(line, "\r\t") {
			line = renderLine(line)
		}
		lines[i] = pytext.RStrip(line)
	}
	return strings.Join(lines, "\n")
}

func renderLine(line string) string {
	var cells []rune
	col := 0
	put := func(r rune) {
		if col < len(cells) {
			cells[col] = r
		} else {
			cells = append(cells, r)
		}
		col++
	}
	for _, r := range line {
		switch r {
		case '\r':
			col = 0
		case '\t':
			next := (col/8 + 1) * 8
			for col < next {
				if col < len(cells) {
					col++ // a tab moves the cursor; it does not erase
				} else {
					put(' ')
				}
			}
		default:
			put(r)
		}
	}
	return string(cells)
}

// commandOutput is bash.py's _get_command_output after the previous output
// was removed: the echo of the sent text (command) is dropped from the
// front — our shell never echoes a command, but the terminal echoes text
// sent with is_input — and surrounding whitespace is stripped.
func commandOutput(text, command string) string {
	text = pytext.LStrip(text)
	text = strings.TrimPrefix(text, pytext.LStrip(command))
	return pytext.RStrip(pytext.LStrip(text))
}

// SplitCommands splits text into top-level commands the way bash.py's
// split_bash_commands (bashlex) does: statements on separate lines are
// separate commands, while "a; b", "a && b", pipelines, heredocs and
// multi-line compound commands are one. Text that does not parse is one
// command.
func SplitCommands(text string) []string {
	if pytext.Strip(text) == "" {
		return []string{""}
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), "")
	if err != nil || len(f.Stmts) == 0 {
		return []string{text}
	}
	// Statements that start on the line where the previous one ended
	// (separated by ";" or "&") belong to the same bashlex node.
	var starts []int
	lastEndLine := uint(0)
	for i, st := range f.Stmts {
		if i == 0 || st.Pos().Line() > lastEndLine {
			starts = append(starts, int(st.Pos().Offset()))
		}
		end := st.End().Line()
		for _, r := range st.Redirs { // a heredoc body ends below its statement
			if r.Hdoc != nil && r.Hdoc.End().Line() > end {
				end = r.Hdoc.End().Line()
			}
		}
		if end > lastEndLine {
			lastEndLine = end
		}
	}
	var out []string
	if lead := text[:starts[0]]; pytext.Strip(lead) != "" {
		// bashlex keeps text before the first command (a comment line)
		// as a command of its own.
		out = append(out, pytext.RStrip(lead))
	}
	for i, s := range starts {
		end := len(text)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		out = append(out, pytext.RStrip(text[s:end]))
	}
	return out
}
