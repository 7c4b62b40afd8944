// Package updates turns an OpenHands V1 conversation, as its
// agent-server's events and the session's own tool calls tell it, into
// what an editor shows of it: the messages, the agent's thoughts, each
// tool call with its live output or diff, and the plan.
//
// The updates have the shapes of ACP's session/update: the ACP face sends
// them as they are, and the VS Code face passes the same objects to its
// conversation view. Both read the events here, in one place.
package updates

import "encoding/json"

// Update is one ACP SessionUpdate: *Chunk, *ToolCall or *Plan.
type Update interface{ kind() string }

// Chunk is a user_message_chunk, agent_message_chunk or
// agent_thought_chunk.
type Chunk struct {
	SessionUpdate string       `json:"sessionUpdate"`
	Content       ContentBlock `json:"content"`
	Meta          *Meta        `json:"_meta,omitempty"`
}

// ContentBlock is ACP's text content block, the only kind sent here.
type ContentBlock struct {
	Type string `json:"type"` // "text"
	Text string `json:"text"`
}

// ToolCall is a tool_call, or a tool_call_update whose set fields replace
// the call's.
type ToolCall struct {
	SessionUpdate string `json:"sessionUpdate"`
	ToolCallID    string `json:"toolCallId"`
	Title         string `json:"title,omitempty"`
	// Kind is read, edit, delete, move, search, execute, think, fetch or
	// other.
	Kind string `json:"kind,omitempty"`
	// Status is pending, in_progress, completed or failed.
	Status    string            `json:"status,omitempty"`
	Content   []ToolCallContent `json:"content,omitempty"`
	Locations []Location        `json:"locations,omitempty"`
	RawInput  json.RawMessage   `json:"rawInput,omitempty"`
	RawOutput any               `json:"rawOutput,omitempty"`
	Meta      *Meta             `json:"_meta,omitempty"`
}

// ToolCallContent is {"type":"content"} with a text block, a
// {"type":"diff"}, or a {"type":"terminal"} naming the display terminal a
// client that advertises _meta.terminal_output shows a command's output in.
type ToolCallContent struct {
	Type    string        `json:"type"`
	Content *ContentBlock `json:"content,omitempty"`
	Path    string        `json:"path,omitempty"`
	// OldText is null for a file created.
	OldText *string `json:"oldText,omitempty"`
	NewText *string `json:"newText,omitempty"`
	// TerminalID is a terminal's id (the tool call's own).
	TerminalID string `json:"terminalId,omitempty"`
}

// MarshalJSON writes a diff's oldText as null when the file is new, as
// ACP asks, and leaves it out of text content.
func (c ToolCallContent) MarshalJSON() ([]byte, error) {
	if c.Type == "terminal" {
		return json.Marshal(struct {
			Type       string `json:"type"`
			TerminalID string `json:"terminalId"`
		}{c.Type, c.TerminalID})
	}
	if c.Type != "diff" {
		return json.Marshal(struct {
			Type    string        `json:"type"`
			Content *ContentBlock `json:"content"`
		}{c.Type, c.Content})
	}
	newText := ""
	if c.NewText != nil {
		newText = *c.NewText
	}
	return json.Marshal(struct {
		Type    string  `json:"type"`
		Path    string  `json:"path"`
		OldText *string `json:"oldText"`
		NewText string  `json:"newText"`
	}{c.Type, c.Path, c.OldText, newText})
}

// Location is a file a tool call works on, so an editor can follow the
// agent.
type Location struct {
	Path string `json:"path"`
	Line *int   `json:"line,omitempty"`
}

// Plan is a plan update: the whole list.
type Plan struct {
	SessionUpdate string      `json:"sessionUpdate"`
	Entries       []PlanEntry `json:"entries"`
	Meta          *Meta       `json:"_meta,omitempty"`
}

// PlanEntry is one task of the plan.
type PlanEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"` // high, medium or low
	Status   string `json:"status"`   // pending, in_progress or completed
}

// Meta is an update's _meta: the bridge's own part under ohBridge, which
// ACP clients ignore and the VS Code view reads, and for a command, when
// the client advertises clientCapabilities._meta.terminal_output, the
// convention claude-agent-acp and codex-acp speak (their
// src/acp-agent.ts, src/tools.ts and src/thread.rs): the tool_call names
// a display terminal (terminal_info), tool_call_updates append output to
// it (terminal_output), and the last one says the command ended
// (terminal_exit).
type Meta struct {
	OhBridge       MetaFields          `json:"ohBridge"`
	TerminalInfo   *TerminalInfoMeta   `json:"terminal_info,omitempty"`
	TerminalOutput *TerminalOutputMeta `json:"terminal_output,omitempty"`
	TerminalExit   *TerminalExitMeta   `json:"terminal_exit,omitempty"`
}

// TerminalInfoMeta opens a display terminal in the client; its id is the
// tool call's, as both agents do, so each command has a terminal of its
// own even though the agent's commands share one shell.
type TerminalInfoMeta struct {
	TerminalID string `json:"terminal_id"`
}

// TerminalOutputMeta is output to append to a display terminal: the
// command's text since the last one, escape sequences stripped, a lone
// "\r" kept for the terminal to redraw its line.
type TerminalOutputMeta struct {
	TerminalID string `json:"terminal_id"`
	Data       string `json:"data"`
}

// TerminalExitMeta ends a display terminal. ExitCode is null when the
// command's code is not known (it still runs after the agent's wait ended,
// or it never ran); Signal is always null: a shell-integrated terminal
// reports codes, not signals.
type TerminalExitMeta struct {
	TerminalID string  `json:"terminal_id"`
	ExitCode   *int    `json:"exit_code"`
	Signal     *string `json:"signal"`
}

// MetaFields are the bridge's extras.
type MetaFields struct {
	// MessageID groups chunks: those of one event share it.
	MessageID string `json:"messageId,omitempty"`
	// Kind is "error" for an error the conversation reports.
	Kind string `json:"kind,omitempty"`
	// Tool is the OpenHands tool a call uses; TerminalID the terminal
	// its command runs in.
	Tool       string `json:"tool,omitempty"`
	TerminalID string `json:"terminalId,omitempty"`
}

func (*Chunk) kind() string    { return "chunk" }
func (*ToolCall) kind() string { return "tool_call" }
func (*Plan) kind() string     { return "plan" }

func text(s string) ContentBlock { return ContentBlock{Type: "text", Text: s} }

func textContent(s string) []ToolCallContent {
	b := text(s)
	return []ToolCallContent{{Type: "content", Content: &b}}
}

func terminalContent(id string) ToolCallContent {
	return ToolCallContent{Type: "terminal", TerminalID: id}
}
