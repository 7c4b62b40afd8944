// Package handlers is the editor's face: it turns the methods of the
// bridge's LSP-style JSON-RPC into calls on a session.Session, the
// workspace's state that every face shares (files, editor and undo,
// terminals, the OpenHands runtimes, permissions).
//
// It owns the method table (table.go, the index of the protocol), what the
// client declared at initialize, the client's open documents (the URIs and
// versions workspace/applyEdit must name), the streaming of terminals to
// the client, and the one mapping from typed domain errors to JSON-RPC
// error codes (errors.go). It starts the other faces the client asks for:
// the OpenHands connection (dial) and the MCP endpoint (through
// Config.StartMCP, so it imports no other face). It is transport-agnostic:
// package rpc serves it over stdio, and tests serve it over pipes.
package handlers
