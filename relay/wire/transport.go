package wire

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transport gives a stream to the MCP SDK, as a client's or a server's
// connection: the SDK's session never sees the link drop.
type Transport struct{ Stream *Stream }

// Connect returns the stream.
func (t Transport) Connect(context.Context) (mcp.Connection, error) { return t.Stream, nil }
