package acp

import "github.com/oh-bridge/oh-bridge/updates"

// The answers and requests the bridge writes, typed as ACP v1's schema
// names them (schema/v1/schema.json of @agentclientprotocol/sdk; the
// type's comment names its definition). TestResultsMatchSchema checks
// each against that definition: a field the schema does not declare, or
// one it requires and the type leaves out, fails it.

// initializeResult is InitializeResponse.
type initializeResult struct {
	ProtocolVersion   int               `json:"protocolVersion"`
	AgentCapabilities agentCapabilities `json:"agentCapabilities"`
	AuthMethods       []authMethodAgent `json:"authMethods"`
	AgentInfo         implementation    `json:"agentInfo"`
}

// agentCapabilities is AgentCapabilities.
type agentCapabilities struct {
	LoadSession         bool                `json:"loadSession"`
	PromptCapabilities  promptCapabilities  `json:"promptCapabilities"`
	MCPCapabilities     mcpCapabilities     `json:"mcpCapabilities"`
	SessionCapabilities sessionCapabilities `json:"sessionCapabilities"`
}

// promptCapabilities is PromptCapabilities.
type promptCapabilities struct {
	Image           bool `json:"image"`
	Audio           bool `json:"audio"`
	EmbeddedContext bool `json:"embeddedContext"`
}

// mcpCapabilities is McpCapabilities.
type mcpCapabilities struct {
	HTTP bool `json:"http"`
	SSE  bool `json:"sse"`
}

// sessionCapabilities is SessionCapabilities. ACP v1 (schema 1.21): an
// empty object says the method is served, an absent one that it is not.
type sessionCapabilities struct {
	List   *served `json:"list,omitempty"`
	Resume *served `json:"resume,omitempty"`
	Close  *served `json:"close,omitempty"`
}

// served is SessionListCapabilities, SessionResumeCapabilities and
// SessionCloseCapabilities: each is {} (its only field is _meta).
type served struct{}

// authMethodAgent is AuthMethodAgent, an AuthMethod with no "type".
type authMethodAgent struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// implementation is Implementation.
type implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// empty is AuthenticateResponse, LoadSessionResponse,
// ResumeSessionResponse and CloseSessionResponse as the bridge answers
// them: {} (every field of theirs is optional).
type empty struct{}

// newSessionResult is NewSessionResponse.
type newSessionResult struct {
	SessionID string `json:"sessionId"`
}

// listSessionsResult is ListSessionsResponse.
type listSessionsResult struct {
	Sessions   []sessionInfo `json:"sessions"`
	NextCursor string        `json:"nextCursor,omitempty"`
}

// sessionInfo is SessionInfo.
type sessionInfo struct {
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd"`
	Title     string `json:"title,omitempty"`
	UpdatedAt string `json:"updatedAt,omitempty"`
}

// promptResult is PromptResponse.
type promptResult struct {
	StopReason string `json:"stopReason"`
}

// sessionNotification is SessionNotification, session/update's params.
type sessionNotification struct {
	SessionID string         `json:"sessionId"`
	Update    updates.Update `json:"update"`
}

// readTextFileRequest is ReadTextFileRequest, fs/read_text_file's params.
type readTextFileRequest struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
}

// writeTextFileRequest is WriteTextFileRequest, fs/write_text_file's
// params.
type writeTextFileRequest struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
	Content   string `json:"content"`
}
