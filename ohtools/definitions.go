package ohtools

import (
	"encoding/json"
)

// The input schemas, declared with each tool: field names, types, enums,
// required fields and field descriptions are openhands-tools'
// (TerminalAction, FileEditorAction, TaskTrackerAction and TaskItem);
// fixtures/openhands-v1/tools.json holds the snapshot they are tested
// against. The descriptions are ours, with the same content as OpenHands'
// own: the rules the agent must follow and what each tool shows it.

// Definition is a tool as an agent sees it: OpenHands' ToolDefinition.to_mcp_tool
// without the output schema.
type Definition struct {
	Name        string
	Description string
	// InputSchema is the action's JSON schema as Schema.to_mcp_schema
	// renders it (titles, defaults and bounds dropped, optional fields
	// without null), key order kept.
	InputSchema json.RawMessage
	Annotations Annotations
}

// Annotations are MCP's tool hints; OpenHands sets all four on its tools.
type Annotations struct {
	Title           string
	ReadOnlyHint    bool
	DestructiveHint bool
	IdempotentHint  bool
	OpenWorldHint   bool
}

// Definitions returns OpenHands' own tools (Default) for an agent working
// in workingDir (file_editor's description names it, as OpenHands' does).
func Definitions(workingDir string) []Definition {
	var defs []Definition
	for _, t := range Default() {
		defs = append(defs, t.Definition(workingDir))
	}
	return defs
}
