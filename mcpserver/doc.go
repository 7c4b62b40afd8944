// Package mcpserver is the bridge's MCP face: it serves OpenHands V1's own
// tools (terminal, file_editor, task_tracker, from package ohtools) to any
// agent that speaks the Model Context Protocol, over stdio (`oh-bridge
// mcp`) or over Streamable HTTP from the editor's running bridge
// (mcp/start). Either way the tools act in a session.Session, so over
// HTTP they run in the terminals, buffers, undo history and permission
// prompts the editor shows.
//
// Each MCP session is one agent: it gets its own terminal and task list,
// made on its first call and closed when the session ends. Tool failures
// are results with isError and OpenHands' text; a long command sends
// notifications/progress when the caller asked for them, and
// notifications/cancelled interrupts it.
//
// The HTTP endpoint listens on 127.0.0.1 only, and only once asked. Every
// request must carry the bearer token, a Host naming the endpoint and no
// foreign Origin, so that neither another local user nor a web page (by DNS
// rebinding, the hole of Claude Code's IDE server, CVE-2025-52882) can drive
// it.
//
// It must not know about JSON-RPC or the editor: handlers starts and stops
// an Endpoint; cmd/oh-bridge runs ServeStdio.
package mcpserver
