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

// ToolCallContent is {"type":"content"} with a text block, or a
// {"type":"diff"}.
type ToolCallContent struct {
	Type    string        `json:"type"`
	Content *ContentBlock `json:"content,omitempty"`
	Path    string        `json:"path,omitempty"`
	// OldText is null for a file created.
	OldText *string `json:"oldText,omitempty"`
	NewText *string `json:"newText,omitempty"`
}

// MarshalJSON writes a diff's oldText as null when the file is new, as
// ACP asks, and leaves it out of text content.
func (c ToolCallContent) MarshalJSON() ([]byte, error) {
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

// Meta is the bridge's own part of an update, under _meta.ohBridge. ACP
// clients ignore it; the VS Code view reads it.
type Meta struct {
	OhBridge MetaFields `json:"ohBridge"`
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
