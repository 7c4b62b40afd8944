// Package session holds one workspace's state, shared by every face that
// acts on it: the workspace confined to its roots, the editor and its undo
// history, the terminal pool, OpenHands' V0 action runtime, the agents
// that use OpenHands' V1 tools, file watching, and the person's answers to
// permission prompts.
//
// A face is a thin adapter over a Session: the editor's JSON-RPC
// (handlers), MCP for agents (mcpserver), the outbound OpenHands
// connection (dial). A tool call that arrives over MCP therefore runs in
// the very terminals, buffers and undo history the editor shows.
//
// It must not know any wire format. What only the person's editor can do
// (land an edit in a buffer, mirror a terminal, ask the person) reaches it
// as the functions in Options.
package session
