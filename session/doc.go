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
// and a face cannot bypass the permission the person gave or refused. The
// contract is the session's own: its Options (root candidates, the
// editor's file functions, the shell mode) are its types, from which New
// chooses the roots and builds the domain's objects; what it returns
// (TextFile, EditResult, TerminalInfo, CommandResult, TerminalEvent) is
// converted from the domain's types here; Capabilities says the bounds a
// face advertises. Errors keep their domain type and their Kind, which a
// face maps. So no face imports shellint, workspace or editor
// (internal/layers checks it).
//
// The session decides; each face renders. It knows no wire format: what
// only the person's editor can do (land an edit in a buffer, mirror a
// terminal, ask the person) reaches it as the functions in Options, and
// what it reports carries no JSON tags.
package session
