package mcpserver

import (
	"fmt"
	"strings"

	"github.com/oh-bridge/oh-bridge/ohtools"
)

// A tool prefix renames the tools for an agent that has its own of the
// same names: the OpenHands CLI always adds its local terminal,
// file_editor and task_tracker, and OpenHands' SDK refuses an MCP tool
// named like one of them ("Duplicate tool names found"). Only the names
// change; descriptions, schemas and results stay OpenHands' own.

// maxToolName is the longest function name the model APIs take (OpenAI's
// and Anthropic's ^[a-zA-Z0-9_-]{1,64}$).
const maxToolName = 64

// ToolPrefixError says why a tool prefix cannot be used.
type ToolPrefixError struct {
	Prefix string
	Reason string
}

func (e *ToolPrefixError) Error() string {
	return fmt.Sprintf("tool prefix %q %s", e.Prefix, e.Reason)
}

// Kind is the error's kind.
func (e *ToolPrefixError) Kind() string { return "invalid_tool_prefix" }

// CheckToolPrefix accepts "" and prefixes of letters, digits, _ and -
// that keep every tool's name within the 64 characters model APIs take.
func CheckToolPrefix(prefix string) error {
	for _, r := range prefix {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return &ToolPrefixError{Prefix: prefix, Reason: fmt.Sprintf("has %q: use letters, digits, _ and - only, as model APIs take in a tool's name", r)}
		}
	}
	longest := 0
	for _, t := range ohtools.Tools() {
		longest = max(longest, len(t.Name))
	}
	if len(prefix)+longest > maxToolName {
		return &ToolPrefixError{Prefix: prefix, Reason: fmt.Sprintf("is too long: with it a tool's name has %d characters, and model APIs take %d at most (use %d characters or fewer)", len(prefix)+longest, maxToolName, maxToolName-longest)}
	}
	return nil
}

// toolNames are the names served, prefixed, for the instructions.
func toolNames(prefix string, tools []*ohtools.Tool) string {
	var names []string
	for _, t := range tools {
		names = append(names, prefix+t.Name)
	}
	return strings.Join(names, ", ")
}

// CheckExtraTools accepts names of tools the bridge serves only when asked
// for (ohtools.ExtraTools); its error is an *ohtools.UnknownExtraToolError.
func CheckExtraTools(names []string) error {
	_, err := ohtools.Select(names)
	return err
}
