package ohtools

import (
	"errors"
	"fmt"
	"strings"

	"github.com/oh-bridge/oh-bridge/editor"
	"github.com/oh-bridge/oh-bridge/pytext"
)

// Observation is a tool's result as the agent sees it: the content blocks
// of OpenHands' Observation.to_llm_content, and whether it is an error.
// OpenHands itself puts "[An error occurred during execution.]" before an
// error's content; through MCP the agent's SDK adds that from isError, so
// it is not among the blocks.
type Observation struct {
	Content []Content
	IsError bool

	// What a face may show beside the text (a command card, a diff); the
	// agent does not see these.
	Command  *CommandInfo
	Edit     *EditInfo
	Tasks    []Task // task_tracker: the list after the call
	Rejected bool   // the user refused the call
	// Error says what kind of error an error observation reports, when
	// the failure has a kind; the agent reads only the text.
	Error *ErrorInfo
}

// ErrorInfo is an error's kind, the word error.data.kind has on the
// editor's face ("no_space", "read_only_file_system", "old_str_not_found",
// ...), and what else the error says: for a disk fault its path, op and
// whether the old content is unchanged.
type ErrorInfo struct {
	Kind string
	Data map[string]any
}

// Fields are the kind and the data in one object, as the faces carry it:
// {"kind": "no_space", "path": ..., "op": "write", "unchanged": true}.
func (e *ErrorInfo) Fields() map[string]any {
	m := make(map[string]any, len(e.Data)+1)
	for k, v := range e.Data {
		m[k] = v
	}
	m["kind"] = e.Kind
	return m
}

// errorInfo is what err says of its kind and data, or nil when it has no
// kind: an *editor.ToolError, or a domain error with Kind and Data methods.
func errorInfo(err error) *ErrorInfo {
	var te *editor.ToolError
	if errors.As(err, &te) {
		return &ErrorInfo{Kind: te.Kind, Data: te.Data()}
	}
	var k interface{ Kind() string }
	if !errors.As(err, &k) {
		return nil
	}
	info := &ErrorInfo{Kind: k.Kind()}
	var d interface{ Data() map[string]any }
	if errors.As(err, &d) {
		info.Data = d.Data()
	}
	return info
}

// Content is one block: text, or an image.
type Content struct {
	Text     string
	MIMEType string // set for an image
	Data     []byte // the image's bytes
}

// Text returns the concatenated text blocks.
func (o *Observation) Text() string {
	var b strings.Builder
	for _, c := range o.Content {
		if c.MIMEType == "" {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// CommandInfo is what a terminal call ran and printed, the record every
// face renders: the agent gets this package's words for it, and a
// command's card shows its Output (as the agent received it) once the
// call is over. It is this package's own type, not the engine's record:
// the faces see the tools' words, never the engine.
type CommandInfo struct {
	// TerminalID is the terminal the command ran in ("" when none ran).
	TerminalID string
	// Command is the command reported: the call's, or "" when an input or
	// poll found the command already finished.
	Command string
	// Output is what the command printed since the last call, as a
	// terminal pane shows it, cut as the agent's text is; Truncated says
	// it was cut.
	Output    string
	Truncated bool
	// ExitCode is the command's when it completed; -1 otherwise. Cwd is
	// set when it completed.
	ExitCode int
	Cwd      string
	// Running: the command had not ended when the call returned.
	Running bool
}

// EditInfo describes a file_editor call that changed a file.
type EditInfo struct {
	Path string
	Diff string
	Text string // the file's whole text after the edit
}

func textObservation(text string) *Observation {
	return &Observation{Content: []Content{{Text: text}}}
}

func errorObservation(text string) *Observation {
	return &Observation{Content: []Content{{Text: text}}, IsError: true}
}

// RejectedText is what OpenHands tells the agent when the user rejects an
// action (UserRejectObservation with its default reason).
const RejectedText = "Action rejected: User rejected the action"

// Rejected is the observation for a call the user refused.
func Rejected() *Observation {
	o := errorObservation(RejectedText)
	o.Rejected = true
	return o
}

// ArgumentError is a call whose arguments do not make the tool's action.
// Its text is the agent's own for a tool call it cannot validate: "Error
// validating tool 'NAME': REASON. Parameters provided: [...]", the reason
// pydantic's ValidationError or normalize_tool_call's ValueError (args.go).
type ArgumentError struct {
	Tool   string
	Reason string
	Keys   []string // the argument names as validated, in order; nil if the JSON did not parse
}

func (e *ArgumentError) Error() string {
	params := "Arguments: unparseable JSON"
	if e.Keys != nil {
		q := make([]string, len(e.Keys))
		for i, k := range e.Keys {
			q[i] = pytext.Repr(k)
		}
		params = "Parameters provided: [" + strings.Join(q, ", ") + "]"
	}
	return fmt.Sprintf("Error validating tool '%s': %s. %s", e.Tool, e.Reason, params)
}

// Kind returns "invalid_arguments".
func (e *ArgumentError) Kind() string { return "invalid_arguments" }

// UnknownToolError names a tool this package does not have.
type UnknownToolError struct{ Name string }

func (e *UnknownToolError) Error() string {
	names := Names(Default())
	for i, n := range names {
		names[i] = "'" + n + "'"
	}
	return fmt.Sprintf("Tool '%s' not found. Available: [%s]", e.Name, strings.Join(names, ", "))
}

// Kind returns "unknown_tool".
func (e *UnknownToolError) Kind() string { return "unknown_tool" }

// Failure is an error observation with the bridge's own words, for what
// went wrong around a tool rather than in it.
func Failure(text string) *Observation { return errorObservation(text) }
