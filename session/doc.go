// Package session is one workspace's state, shared by every face that acts
// on it, and the only door to it: the workspace confined to its roots, the
// person's open buffers, the editor and its undo history, the terminal
// pool, the agents that use OpenHands' V1 tools (each with its own
// terminal), OpenHands' V0 actions, file watching, and the person's answers
// to permission questions.
//
// Faces (the editor's JSON-RPC in package handlers, ACP, MCP) call the
// session and never a domain package: a tool call that arrives over MCP
// runs in the very terminals, buffers and undo history the editor shows,
// and a face cannot bypass the permission the person gave or refused. A
// face may use the domain packages' types and errors to render them
// (workspace.TextFile, editor.Result, their Kind methods); terminal types
// are named here (TerminalInfo, CommandResult, TerminalEvent), so no face
// imports package shellint.
//
// The session decides; each face renders. It knows no wire format: what
// only the person's editor can do (land an edit in a buffer, mirror a
// terminal, ask the person) reaches it as the functions in Options, and
// what it reports carries no JSON tags.
package session
