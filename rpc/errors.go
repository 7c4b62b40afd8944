package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/sourcegraph/jsonrpc2"
)

// Error is a JSON-RPC error object; handlers return it to choose the code.
type Error = jsonrpc2.Error

// Protocol error codes (JSON-RPC 2.0 and the LSP base protocol). Domain codes
// live in package handlers, in the private range 1000–1099.
const (
	CodeParseError           = jsonrpc2.CodeParseError     // -32700
	CodeInvalidRequest       = jsonrpc2.CodeInvalidRequest // -32600
	CodeMethodNotFound       = jsonrpc2.CodeMethodNotFound // -32601
	CodeInvalidParams        = jsonrpc2.CodeInvalidParams  // -32602
	CodeInternalError        = jsonrpc2.CodeInternalError  // -32603
	CodeServerNotInitialized = -32002
	CodeRequestCancelled     = -32800
)

// NewError builds an error object; data, when not nil, becomes error.data.
func NewError(code int64, message string, data any) *Error {
	e := &Error{Code: code, Message: message}
	if data != nil {
		e.SetError(data)
	}
	return e
}

// InvalidParams reports a bad parameter by name and says what was expected,
// e.g. InvalidParams("path", "a non-empty string").
func InvalidParams(field, expected string) *Error {
	return NewError(CodeInvalidParams,
		fmt.Sprintf("invalid params: %q must be %s", field, expected),
		map[string]any{"kind": "invalid_params", "field": field, "expected": expected})
}

// Typed adapts a handler of decoded params to a Handler: params that do
// not decode into P answer -32602 naming the field (see DecodeParams).
func Typed[P, R any](fn func(context.Context, *P) (R, error)) Handler {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		var p P
		if err := DecodeParams(raw, &p); err != nil {
			return nil, err
		}
		return fn(ctx, &p)
	}
}

// DecodeParams unmarshals params into v. Unknown fields are tolerated, as in
// LSP. A type mismatch becomes an InvalidParams error naming the field and
// the expected JSON type; absent params decode as an empty object.
//
// An empty array where an object is expected is read as an empty object:
// Lua clients (Neovim's vim.json) encode an empty table {} as [].
func DecodeParams(params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" || isEmptyArray(params) {
		params = json.RawMessage("{}")
	}
	err := json.Unmarshal(params, v)
	for range 64 { // each pass mends one empty array
		if err == nil {
			return nil
		}
		mended, ok := emptyArrayAsObject(params, err)
		if !ok {
			break
		}
		params = mended
		err = json.Unmarshal(params, v)
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		field := typeErr.Field
		if field == "" {
			return NewError(CodeInvalidParams,
				fmt.Sprintf("invalid params: expected %s, got a JSON %s", jsonKind(typeErr.Type.Kind().String()), typeErr.Value),
				map[string]any{"kind": "invalid_params"})
		}
		return InvalidParams(field, "a JSON "+jsonKind(typeErr.Type.Kind().String())+", not a JSON "+typeErr.Value)
	}
	return NewError(CodeInvalidParams, "invalid params: "+err.Error(), map[string]any{"kind": "invalid_params"})
}

// jsonKind names a Go kind the way a JSON client thinks of it.
func jsonKind(goKind string) string {
	switch {
	case goKind == "string":
		return "string"
	case goKind == "bool":
		return "boolean"
	case strings.HasPrefix(goKind, "int"), strings.HasPrefix(goKind, "uint"):
		return "integer"
	case strings.HasPrefix(goKind, "float"):
		return "number"
	case goKind == "slice", goKind == "array":
		return "array"
	case goKind == "map", goKind == "struct":
		return "object"
	}
	return "value"
}

// emptyArrayAsObject rewrites the empty array a decoding error points at
// as an empty object, when an object (a struct or map) was expected there.
func emptyArrayAsObject(params json.RawMessage, err error) (json.RawMessage, bool) {
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) || typeErr.Value != "array" || typeErr.Field == "" {
		return nil, false
	}
	if k := typeErr.Type.Kind(); k != reflect.Struct && k != reflect.Map {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.UseNumber()
	var root any
	if dec.Decode(&root) != nil {
		return nil, false
	}
	path := strings.Split(typeErr.Field, ".")
	node, ok := root.(map[string]any)
	for i, key := range path {
		if !ok {
			return nil, false
		}
		child, found := node[key]
		if !found {
			return nil, false
		}
		if i == len(path)-1 {
			if arr, isArr := child.([]any); !isArr || len(arr) != 0 {
				return nil, false
			}
			node[key] = map[string]any{}
			break
		}
		node, ok = child.(map[string]any)
	}
	out, mErr := json.Marshal(root)
	return out, mErr == nil
}

func isEmptyArray(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) >= 2 && b[0] == '[' && string(bytes.TrimSpace(b[1:])) == "]"
}
