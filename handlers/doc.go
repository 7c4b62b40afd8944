// Package handlers turns protocol methods into calls on the domain packages
// (workspace, editor, shellint, and later the OpenHands client).
//
// It owns the method table (table.go, the index of the protocol), the
// session's configuration (roots, client capabilities), and the one mapping
// from typed domain errors to JSON-RPC error codes (errors.go). It is
// transport-agnostic: stdio serves it through package rpc today, and other
// transports call the same handler functions.
package handlers
