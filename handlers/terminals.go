package handlers

import (
	"context"

	"github.com/oh-bridge/oh-bridge/rpc"
)

// terminalMethods are the terminal/* methods.
func (h *Handlers) terminalMethods() map[string]rpc.Method { return nil }

// startTerminals creates the session's terminal pool.
func (h *Handlers) startTerminals(roots []string) error { return nil }

// stopTerminals closes every terminal and kills its process groups.
func (h *Handlers) stopTerminals(ctx context.Context) {}

// terminalCapabilities are merged into initialize's result capabilities.
func (h *Handlers) terminalCapabilities() map[string]any { return nil }
