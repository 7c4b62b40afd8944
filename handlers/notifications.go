package handlers

import (
	"encoding/json"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/updates"
)

// notifications is the other half of the protocol's index: every
// notification the bridge sends the editor, with a value of its params
// type. internal/protogen writes the extension's TypeScript for them from
// here, and TestNotificationsTable fails when handlers sends a
// notification that is not here, or one here is never sent.
var notifications = map[string]any{
	"fs/did_change":             didChangeFilesParams{},
	"editor/show_file":          showFileParams{},
	"terminal/did_output":       didOutputParams{},
	"terminal/did_change_state": didChangeStateParams{},

	"openhands/did_change_status":       agentserver.Status{},
	"openhands/did_receive_event":       didReceiveEventParams{},
	"openhands/did_update_conversation": didUpdateConversationParams{},
	"openhands/server_output":           serverOutputParams{},
}

// editorRequests is the third part of the index: the requests the bridge
// sends the editor, each with the params it sends and the result it reads.
// internal/protogen writes them as EditorRequests. The keys are the
// constants the calls use, so a call and its entry cannot drift apart.
var editorRequests = map[string][2]any{
	applyEdit:                 {applyEditParams{}, applyEditResult{}},
	updates.RequestPermission: {updates.PermissionRequestParams{}, updates.PermissionResponse{}},
}

// didReceiveEventParams passes one event of the agent-server's
// conversation to the editor, as the server sent it.
type didReceiveEventParams struct {
	Event json.RawMessage `json:"event"`
}

// didUpdateConversationParams is one update of the conversation view:
// what the agent says and does, as ACP's session/update shapes it.
type didUpdateConversationParams struct {
	// ConversationID is the agent-server's conversation the update
	// belongs to; a new one starts the view over.
	ConversationID string         `json:"conversationId"`
	Update         updates.Update `json:"update"`
}

// showFileParams asks the editor to show the person a file of the
// workspace in a tab (a tool of the agent's, open_file, shows it).
type showFileParams struct {
	// Path is absolute, inside the workspace.
	Path string `json:"path"`
	// Line is the line to reveal, from 1; absent shows the file's top.
	Line int `json:"line,omitempty"`
}
