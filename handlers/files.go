package handlers

import (
	"context"

	"github.com/oh-bridge/oh-bridge/rpc"
)

// fileMethods are the fs/*, edit/* and textDocument/* methods.
func (h *Handlers) fileMethods() map[string]rpc.Method { return nil }

// startFiles opens the session's workspace once the roots are known.
func (h *Handlers) startFiles(roots []string) error { return nil }

// stopFiles stops watching.
func (h *Handlers) stopFiles(ctx context.Context) {}

// fileCapabilities are merged into initialize's result capabilities.
func (h *Handlers) fileCapabilities() map[string]any { return nil }
