package mcpserver

import (
	"net/http"

	"github.com/oh-bridge/oh-bridge/internal/mcpadopt"
)

// Taking over the sessions of an earlier endpoint (HTTPOptions.AdoptSessions):
// a bridge started again on the same port and token serves the sessions
// the agent-server's agent holds (internal/mcpadopt says why).

// adoptSession makes a session with the id a client names (mcpadopt).
func (s *Server) adoptSession(r *http.Request, h http.Handler, id string) error {
	if err := s.adopter.Adopt(r, h, s.mcp, Path, id, ProtocolVersions); err != nil {
		return err
	}
	s.log.Info("took over an MCP session an earlier endpoint on this port had given its client", "session", id)
	return nil
}

// knows reports whether a session with this id is live.
func (s *Server) knows(id string) bool { return mcpadopt.Knows(s.mcp, id) }
