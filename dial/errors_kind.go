package dial

// Kinds, for the bridge's error mapping (error.data.kind).

// Kind is "server_unreachable".
func (e *UnreachableError) Kind() string { return "server_unreachable" }

// Kind is "not_openhands".
func (e *HandshakeError) Kind() string { return "not_openhands" }

// Kind is "connection_refused".
func (e *ConnectError) Kind() string { return "connection_refused" }

// Kind is "timeout".
func (e *TimeoutError) Kind() string { return "timeout" }

// Kind is "conversation_not_found".
func (e *NotFoundError) Kind() string { return "conversation_not_found" }

// Kind is "api_key_rejected".
func (e *APIKeyError) Kind() string { return "api_key_rejected" }

// Kind is "server_error".
func (e *ServerError) Kind() string { return "server_error" }

// Data adds the server's refusal details.
func (e *ConnectError) Data() map[string]any {
	d := map[string]any{"serverMessage": e.Message}
	if len(e.Details) > 0 {
		d["serverData"] = e.Details
	}
	return d
}
