// Package rpc serves oh-bridge's JSON-RPC 2.0 protocol with LSP base-protocol
// framing (Content-Length headers) over any byte stream.
//
// It owns framing and message validation, the connection's LSP lifecycle
// (initialize → initialized → shutdown → exit), dispatch by concurrency class,
// $/cancelRequest in both directions, work-done progress and trace helpers,
// and the JSONL recording and replay of connections.
//
// It knows nothing of files, editors or shells: methods arrive as a table of
// [Method] values built by package handlers, and domain errors arrive already
// mapped to [*Error] values.
package rpc
