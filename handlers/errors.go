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
	codeTerminalState        = 1016
	codeInvalidArgument      = 1017
	codeShellUnavailable     = 1018
	codeOpenHandsConnection  = 1019
)

// codeOfKind groups the kinds that domain errors report (their Kind
// method) into codes; error.data.kind keeps the detail. A kind missing here
// answers codeOperationFailed.
var codeOfKind = map[string]int64{
	"not_found":               codeFileNotFound,
	"is_directory":            codeNotAFile,
	"not_directory":           codeNotAFile,
	"not_regular_file":        codeNotAFile,
	"path_outside_workspace":  codePathOutsideWorkspace,
	"binary":                  codeNotText,
	"too_large":               codeNotText,
	"invalid_utf8":            codeNotText,
	"unsupported_binary":      codeNotText,
	"old_str_not_found":       codeOldStrNotFound,
	"old_str_not_unique":      codeOldStrNotUnique,
	"no_edit_history":         codeNothingToUndo,
	"stale_version":           codeStaleVersion,
	"changed_outside_editor":  codeStaleVersion,
	"buffer_edit_rejected":    codeStaleVersion,
	"terminal_not_found":      codeTerminalNotFound,
	"permission_denied":       codePermissionDenied,
	"unsupported_action":      codeUnsupportedAction,
	"terminal_busy":           codeTerminalBusy,
	"terminal_limit":          codeTerminalBusy,
	"exists":                  codeAlreadyExists,
	"file_exists":             codeAlreadyExists,
	"invalid_root":            codeInvalidRoot,
	"terminal_dead":           codeTerminalState,
	"no_running_command":      codeTerminalState,
	"input_blocked":           codeTerminalState,
	"pool_closed":             codeTerminalState,
	"invalid_view_range":      codeInvalidArgument,
	"invalid_insert_line":     codeInvalidArgument,
	"new_str_equals_old_str":  codeInvalidArgument,
	"missing_parameter":       codeInvalidArgument,
	"invalid_option":          codeInvalidArgument,
	"unknown_command":         codeInvalidArgument,
	"path_not_absolute":       codeInvalidArgument,
	"invalid_path":            codeInvalidArgument,
	"shell_not_found":         codeShellUnavailable,
	"shell_start_failed":      codeShellUnavailable,
	"server_unreachable":      codeOpenHandsConnection,
	"not_openhands":           codeOpenHandsConnection,
	"connection_refused":      codeOpenHandsConnection,
	"timeout":                 codeOpenHandsConnection,
	"conversation_not_found":  codeOpenHandsConnection,
	"api_key_rejected":        codeOpenHandsConnection,
	"server_error":            codeOpenHandsConnection,
	"server_busy":             codeOpenHandsConnection,
	"protocol_retired":        codeOpenHandsConnection,
	"not_connected":           codeOpenHandsConnection,
	"server_not_found":        codeOpenHandsConnection,
	"server_start_failed":     codeOpenHandsConnection,
	"server_not_trusted":      codeOpenHandsConnection,
	"mcp_token_exposed":       codeOpenHandsConnection,
	"terminals_unsupported":   codeUnsupportedAction,
	"unsupported_api_version": codeOpenHandsConnection,
}

// kinder is implemented by typed domain errors: a stable snake_case kind
// that goes into error.data.kind.
type kinder interface{ Kind() string }

// dataer is implemented by domain errors with more to say in error.data
// (a size, the lines of a duplicate match, the running command).
type dataer interface{ Data() map[string]any }

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
	if !errors.As(err, &k) {
		return rpc.NewError(rpc.CodeInternalError, err.Error(), nil)
	}
	data := map[string]any{}
	var d dataer
	if errors.As(err, &d) {
		for key, v := range d.Data() {
			data[key] = v
		}
	}
	data["kind"] = k.Kind()
	code, ok := codeOfKind[k.Kind()]
	if !ok {
		code = codeOperationFailed
	}
	return rpc.NewError(code, err.Error(), data)
}
