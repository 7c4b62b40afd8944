package handlers

import (
	"context"

	"github.com/oh-bridge/oh-bridge/rpc"
)

// Methods is the method table: every method the bridge serves, with its
// handler and concurrency class. Each area keeps its part of the table at
// the top of its file (files.go, terminals.go, openhands.go, dial.go, mcp.go); docs/protocol.md lists them
// all. Lifecycle messages that only change the session state (shutdown,
// exit, $/cancelRequest, $/setTrace) are handled by package rpc itself.
func (h *Handlers) Methods() map[string]rpc.Method {
	m := map[string]rpc.Method{
		"initialize":  {Class: rpc.Inline, Handle: handle(h.initialize)},
		"initialized": {Class: rpc.Inline, Handle: handle(h.initialized)},
		"bridge/info": {Class: rpc.Inline, Handle: handle(h.info)},
		"bridge/wait": {Class: rpc.Concurrent, Handle: handle(h.wait)},
	}
	for _, area := range []map[string]rpc.Method{h.fileMethods(), h.terminalMethods(), h.openhandsMethods(), h.dialMethods(), h.mcpMethods()} {
		for name, method := range area {
			if _, dup := m[name]; dup {
				panic("handlers: method " + name + " is registered twice")
			}
			m[name] = method
		}
	}
	return m
}

// handle adapts a typed handler (rpc.Typed: bad params → -32602 naming the
// field) and maps its domain errors to protocol errors.
func handle[P any, R any](fn func(context.Context, *P) (R, error)) rpc.Handler {
	return rpc.Typed(func(ctx context.Context, p *P) (any, error) {
		res, err := fn(ctx, p)
		if err != nil {
			return nil, toRPCError(err)
		}
		return res, nil
	})
}
