package handlers

import (
	"context"
	"errors"

	"github.com/oh-bridge/oh-bridge/rpc"
)

// Domain error codes, in oh-bridge's private range 1000–1099 (outside the
// ranges JSON-RPC and LSP reserve). docs/protocol.md has the table; no other
// place in the code base knows these numbers.
const (
	codeFileNotFound         = 1001
	codeNotAFile             = 1002
	codePathOutsideWorkspace = 1003
	codeNotText              = 1004
	codeOldStrNotFound       = 1005
	codeOldStrNotUnique      = 1006
	codeNothingToUndo        = 1007
	codeStaleVersion         = 1008
	codeTerminalNotFound     = 1009
	codePermissionDenied     = 1010
	codeUnsupportedAction    = 1011
	codeTerminalBusy         = 1012
	codeAlreadyExists        = 1013
	codeOperationFailed      = 1014
	codeInvalidRoot          = 1015
)

// kinder is implemented by typed domain errors: a stable snake_case kind
// that goes into error.data.kind.
type kinder interface{ Kind() string }

// toRPCError maps an error from a domain package to a JSON-RPC error. It is
// the only place where domain errors meet protocol codes.
func toRPCError(err error) error {
	var rpcErr *rpc.Error
	if errors.As(err, &rpcErr) {
		return rpcErr
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err // rpc answers -32800 for a cancelled request
	}
	var k kinder
	if errors.As(err, &k) {
		data := map[string]any{"kind": k.Kind()}
		if d, ok := err.(interface{ Data() map[string]any }); ok {
			for key, v := range d.Data() {
				data[key] = v
			}
		}
		return rpc.NewError(codeForKind(k.Kind()), err.Error(), data)
	}
	return rpc.NewError(rpc.CodeInternalError, err.Error(), nil)
}

// codeForKind groups kinds into codes; the kind says the detail.
func codeForKind(kind string) int64 {
	switch kind {
	case "not_found":
		return codeFileNotFound
	case "is_directory", "not_directory", "not_a_file":
		return codeNotAFile
	case "path_outside_workspace":
		return codePathOutsideWorkspace
	case "binary", "too_large", "invalid_utf8":
		return codeNotText
	case "old_str_not_found":
		return codeOldStrNotFound
	case "old_str_not_unique":
		return codeOldStrNotUnique
	case "nothing_to_undo":
		return codeNothingToUndo
	case "stale_version", "changed_outside_editor":
		return codeStaleVersion
	case "terminal_not_found":
		return codeTerminalNotFound
	case "permission_denied":
		return codePermissionDenied
	case "unsupported_action":
		return codeUnsupportedAction
	case "terminal_busy", "pool_exhausted":
		return codeTerminalBusy
	case "exists":
		return codeAlreadyExists
	case "invalid_root":
		return codeInvalidRoot
	}
	return codeOperationFailed
}
