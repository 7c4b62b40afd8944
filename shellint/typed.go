package shellint

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// In typed mode (bash 5.1+ without a line editor, scripts.go) most
// commands are typed into the shell as they are, as a person would type
// them: bash itself then keeps $?, $_, PIPESTATUS and the history entry,
// and the machinery costs the shell one prompt hook instead of ~30 simple
// commands (docs/terminal-speed.md). typable picks those commands. The rest
// go through the eval line (submitLine), which is correct for any text but
// costs more. A text is typed only if bash is sure to read it as one whole
// command and run it to its next prompt:
//
//   - one line, at most maxInlineLine bytes, with no control character the
//     tty would act on (tabs pass);
//   - no leading '^' and no '!' that history expansion would rewrite;
//   - complete: bash's grammar (mvdan.cc/sh) parses it with nothing left
//     open, so bash never waits for a continuation line, and a line it
//     cannot parse gets bash's own error through eval;
//   - nothing that may remove our prompt hook: PROMPT_COMMAND named, our
//     own __br_ names, or source, ., eval or exec (which run text we
//     cannot see), also behind builtin or command;
//   - PIPESTATUS read right after an eval'd command, whose statuses the
//     shell no longer holds.
func typable(text string, prevEval bool) bool {
	if len(text) > maxInlineLine || strings.TrimSpace(text) == "" || text[0] == '^' || strings.HasSuffix(text, `\`) {
		return false
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		if (c < 0x20 && c != '\t') || c == 0x7f || (c == '!' && expandsHistory(text, i)) {
			return false
		}
	}
	if strings.Contains(text, "PROMPT_COMMAND") || strings.Contains(text, "__br_") {
		return false
	}
	if prevEval && strings.Contains(text, "PIPESTATUS") {
		return false
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), "")
	if err != nil {
		return false
	}
	ok := true
	syntax.Walk(f, func(n syntax.Node) bool {
		call, isCall := n.(*syntax.CallExpr)
		if !ok || !isCall {
			return ok
		}
		name := ""
		for _, w := range call.Args {
			// builtin and command run the word after them
			if name = w.Lit(); name != "builtin" && name != "command" {
				break
			}
		}
		switch name {
		case "source", ".", "eval", "exec":
			ok = false
		}
		return ok
	})
	return ok
}

// expandsHistory reports whether the '!' at text[i] may start a history
// expansion in an interactive bash. It may not when a blank, '=' or the
// end of the line follows it ("[ ! -f x ]", "!="), or when it is a
// parameter: "$!", "${!name}". Anything else, a '!' in quotes included,
// counts as one: the eval line is right for those too.
func expandsHistory(text string, i int) bool {
	if i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\t' || text[i+1] == '=' {
		return false
	}
	if i > 0 && text[i-1] == '$' {
		return false
	}
	return !(i > 1 && text[i-1] == '{' && text[i-2] == '$')
}
