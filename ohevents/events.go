package ohevents

import "encoding/json"

// Event is one decoded event of a conversation: a pointer to one of the
// kinds' types below, or an *Other.
type Event interface {
	// Header is the fields every event has.
	Header() *Base
	// Raw is the event as the server sent it.
	Raw() json.RawMessage
}

// Base is the fields of the SDK's Event, which every event has.
type Base struct {
	// Kind is the event's class name: "ActionEvent", "MessageEvent", ...
	Kind      string `json:"kind"`
	ID        string `json:"id"`
	Timestamp string `json:"timestamp"`
	// Source is "agent", "user", "environment" or "hook".
	Source string `json:"source"`
	// ParentID is the event's parent in the conversation's tree (null for
	// the root and for events from before the tree).
	ParentID *string `json:"parent_id"`

	raw json.RawMessage
}

// Header returns b.
func (b *Base) Header() *Base { return b }

// Raw is the event's JSON as the server sent it.
func (b *Base) Raw() json.RawMessage { return b.raw }

// OrEmpty reads a field the server may send as null (a Python None) as
// "" then.
func OrEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TextContent is a text block of a message or an observation. Content of
// another type (an image) has an empty Text.
type TextContent struct {
	Type string `json:"type"` // "text", "image"
	Text string `json:"text"`
}

// Texts is a list of content blocks. The SDK sends a list; a plain
// string, as some messages of other producers carry, reads as one text
// block.
type Texts []TextContent

// UnmarshalJSON reads a list of blocks or a string.
func (t *Texts) UnmarshalJSON(data []byte) error {
	var s string
	if json.Unmarshal(data, &s) == nil {
		*t = Texts{{Type: "text", Text: s}}
		return nil
	}
	var items []TextContent
	if err := json.Unmarshal(data, &items); err != nil {
		return err
	}
	*t = items
	return nil
}

// ActionEvent is the agent calling a tool.
type ActionEvent struct {
	Base
	// Thought is the text the model wrote with the call.
	Thought                []TextContent   `json:"thought"`
	ReasoningContent       *string         `json:"reasoning_content"`
	ThinkingBlocks         json.RawMessage `json:"thinking_blocks"`
	ResponsesReasoningItem json.RawMessage `json:"responses_reasoning_item"`
	// Action is the call's arguments as the tool's action (null when the
	// model's call could not be made one).
	Action     *Action `json:"action"`
	ToolName   string  `json:"tool_name"`
	ToolCallID string  `json:"tool_call_id"`
	// ToolCall is the model's tool call as it made it.
	ToolCall      json.RawMessage `json:"tool_call"`
	LLMResponseID string          `json:"llm_response_id"`
	SecurityRisk  string          `json:"security_risk"` // "UNKNOWN", "LOW", "MEDIUM", "HIGH"
	CriticResult  json.RawMessage `json:"critic_result"`
	// Summary is the model's few words on what the call does.
	Summary *string `json:"summary"`
}

// Action is an ActionEvent's action: MCPToolAction for a tool of an MCP
// server (the bridge's), whose Data is the call's arguments, or one of
// the agent's own tools' (FinishAction, ThinkAction, ...), whose fields
// are the arguments.
type Action struct {
	Kind string `json:"kind"`
	// Data is an MCPToolAction's arguments.
	Data json.RawMessage `json:"data,omitempty"`
	// Message is a FinishAction's.
	Message string `json:"message,omitempty"`
	// Thought is a ThinkAction's.
	Thought string `json:"thought,omitempty"`

	raw json.RawMessage
}

// UnmarshalJSON reads the action and keeps its bytes (Arguments).
func (a *Action) UnmarshalJSON(data []byte) error {
	type plain Action
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*a = Action(p)
	a.raw = data
	return nil
}

// Raw is the action as the server sent it.
func (a *Action) Raw() json.RawMessage { return a.raw }

// IsMCP says whether the action is a call of an MCP tool (the bridge's,
// or the client's own servers'), not one of the agent's own tools.
func (a *Action) IsMCP() bool { return a != nil && a.Kind == "MCPToolAction" }

// Arguments are the tool's arguments as JSON: an MCPToolAction's data,
// or the whole action of one of the agent's own tools.
func (a *Action) Arguments() json.RawMessage {
	if a == nil {
		return nil
	}
	if a.IsMCP() {
		return a.Data
	}
	return a.raw
}

// ObservationEvent is a tool's answer to an ActionEvent.
type ObservationEvent struct {
	Base
	ToolName    string       `json:"tool_name"`
	ToolCallID  string       `json:"tool_call_id"`
	Observation *Observation `json:"observation"`
	// ActionID is the id of the ActionEvent answered.
	ActionID string `json:"action_id"`
	// ExtendedContent is text the agent's context adds after the result.
	ExtendedContent []TextContent `json:"extended_content"`
}

// Observation is what a tool answered: MCPToolObservation for an MCP
// tool's (the bridge's), whose first block is the SDK's "[Tool 'x'
// executed.]".
type Observation struct {
	Kind    string        `json:"kind"`
	Content []TextContent `json:"content"`
	IsError bool          `json:"is_error"`
}

// UserRejectObservation answers an action the user (or a hook) rejected.
type UserRejectObservation struct {
	Base
	ToolName        string `json:"tool_name"`
	ToolCallID      string `json:"tool_call_id"`
	RejectionReason string `json:"rejection_reason"`
	RejectionSource string `json:"rejection_source"` // "user", "hook"
	ActionID        string `json:"action_id"`
}

// AgentErrorEvent is an error of the agent's scaffold about a tool call
// (a tool that failed to run, a call interrupted): it has no action_id,
// and its ToolCallID ties it to its ActionEvent.
type AgentErrorEvent struct {
	Base
	ToolName       string          `json:"tool_name"`
	ToolCallID     string          `json:"tool_call_id"`
	Error          string          `json:"error"`
	Classification json.RawMessage `json:"classification"`
}

// MessageEvent is a message of the user or the agent.
type MessageEvent struct {
	Base
	LLMMessage      *Message        `json:"llm_message"`
	LLMResponseID   *string         `json:"llm_response_id"`
	ActivatedSkills []string        `json:"activated_skills"`
	ExtendedContent []TextContent   `json:"extended_content"`
	Sender          *string         `json:"sender"`
	CriticResult    json.RawMessage `json:"critic_result"`
}

// Message is a MessageEvent's message as the model sees it.
type Message struct {
	Role             string  `json:"role"` // "user", "system", "assistant", "tool"
	Content          Texts   `json:"content"`
	ReasoningContent *string `json:"reasoning_content"`
}

// SystemPromptEvent opens a conversation: the agent's system prompt and
// its tools.
type SystemPromptEvent struct {
	Base
	SystemPrompt   TextContent      `json:"system_prompt"`
	Tools          []ToolDefinition `json:"tools"`
	DynamicContext *TextContent     `json:"dynamic_context"`
}

// ToolDefinition is one of the agent's tools.
type ToolDefinition struct {
	Kind  string `json:"kind"`
	Title string `json:"title"`
}

// ConversationStateUpdateEvent reports the conversation's state: one key
// and its value, or the whole state (key "full_state").
type ConversationStateUpdateEvent struct {
	Base
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
}

// ExecutionStatus is the agent's status the update reports ("idle",
// "running", "waiting_for_confirmation", "finished", ...), or "" when it
// reports another key.
func (e *ConversationStateUpdateEvent) ExecutionStatus() string {
	var status string
	switch e.Key {
	case "execution_status":
		json.Unmarshal(e.Value, &status)
	case "full_state":
		var full struct {
			ExecutionStatus string `json:"execution_status"`
		}
		json.Unmarshal(e.Value, &full)
		status = full.ExecutionStatus
	}
	return status
}

// ConversationErrorEvent is a failure of the conversation as a whole (its
// run stopped).
type ConversationErrorEvent struct {
	Base
	Code           string          `json:"code"`
	Detail         string          `json:"detail"`
	Classification json.RawMessage `json:"classification"`
}

// ServerErrorEvent is the agent-server's own error (an MCP server it
// could not reach, a socket's failure).
type ServerErrorEvent struct {
	Base
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// PauseEvent: the user paused the agent; it stops after its step.
type PauseEvent struct{ Base }

// InterruptEvent: the user interrupted the agent's LLM call.
type InterruptEvent struct{ Base }

// Condensation is the conversation's history condensed: the events the
// model no longer sees, and their summary.
type Condensation struct {
	Base
	ForgottenEventIDs []string `json:"forgotten_event_ids"`
	Summary           *string  `json:"summary"`
	SummaryOffset     *int     `json:"summary_offset"`
	LLMResponseID     string   `json:"llm_response_id"`
}

// CondensationRequest asks for the history to be condensed.
type CondensationRequest struct{ Base }

// CondensationSummaryEvent is a condensation's summary as the model sees it.
type CondensationSummaryEvent struct {
	Base
	Summary string `json:"summary"`
}

// TokenEvent is the token ids of a model call.
type TokenEvent struct {
	Base
	PromptTokenIDs   []int `json:"prompt_token_ids"`
	ResponseTokenIDs []int `json:"response_token_ids"`
}

// LLMCompletionLogEvent carries a model call's log.
type LLMCompletionLogEvent struct {
	Base
	Filename  string `json:"filename"`
	LogData   string `json:"log_data"`
	ModelName string `json:"model_name"`
	UsageID   string `json:"usage_id"`
}

// HookExecutionEvent is a hook the agent ran.
type HookExecutionEvent struct {
	Base
	HookEventType     string          `json:"hook_event_type"`
	HookCommand       string          `json:"hook_command"`
	ToolName          *string         `json:"tool_name"`
	Success           bool            `json:"success"`
	Blocked           bool            `json:"blocked"`
	ExitCode          int             `json:"exit_code"`
	Stdout            string          `json:"stdout"`
	Stderr            string          `json:"stderr"`
	Reason            *string         `json:"reason"`
	AdditionalContext *string         `json:"additional_context"`
	Error             *string         `json:"error"`
	ActionID          *string         `json:"action_id"`
	MessageID         *string         `json:"message_id"`
	HookInput         json.RawMessage `json:"hook_input"`
}

// SecurityAnalysisEvent is a security analyzer's verdict on actions (1.58
// on).
type SecurityAnalysisEvent struct {
	Base
	Analyzer string            `json:"analyzer"`
	Policy   string            `json:"policy"`
	Risks    map[string]string `json:"risks"`
	Details  json.RawMessage   `json:"details"`
}

// StreamingDeltaEvent is a piece of a message the model streams.
type StreamingDeltaEvent struct {
	Base
	Content          *string `json:"content"`
	ReasoningContent *string `json:"reasoning_content"`
}

// ACPToolCallEvent is a tool call of an ACP agent the SDK drives.
type ACPToolCallEvent struct {
	Base
	ToolCallID string          `json:"tool_call_id"`
	Title      string          `json:"title"`
	Status     *string         `json:"status"`
	ToolKind   *string         `json:"tool_kind"`
	RawInput   json.RawMessage `json:"raw_input"`
	RawOutput  json.RawMessage `json:"raw_output"`
	Content    json.RawMessage `json:"content"`
	IsError    bool            `json:"is_error"`
}

// Other is an event of a kind this package does not know (a later
// server's), or a known kind whose fields are not the types' (Mismatch
// says how): its header and bytes, passed on unchanged.
type Other struct {
	Base
	Mismatch error `json:"-"`
}
