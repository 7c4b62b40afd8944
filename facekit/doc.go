// Package facekit is the plumbing every face needs around its session,
// written once, so that a face is its method table, its handlers and the
// few functions that speak its wire:
//   - MCP holds a face's MCP endpoints, started by the one StartMCP
//     (mcpserver.Starter, handed in by cmd/oh-bridge): the editor's
//     shared endpoint (mcp/start) and the endpoints a conversation's agent
//     reaches its tools at (conversation.Options.MCP);
//   - Asker puts actions to the person: the face writes only Ask, its
//     request to its client; naming the call as the conversation shows
//     it, and what a withdrawn question means, are here, and "Allow
//     always" is remembered by the session (session.Permit).
//
// The agent-server a connection found or started is localserver.Local;
// a face opens its session with session.New, the one call for that.
//
// It sits between the faces and the conversation link (internal/layers):
// it knows no face's wire format and imports no face.
package facekit
