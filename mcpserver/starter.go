package mcpserver

import (
	"github.com/oh-bridge/oh-bridge/conversation"
	"github.com/oh-bridge/oh-bridge/facekit"
	"github.com/oh-bridge/oh-bridge/session"
)

// Starter is the one facekit.StartMCP, for the editor's bridge, ACP and
// their conversations alike: each endpoint is a server of its own over
// the session, made with o, on Streamable HTTP behind the guard (the
// token, Host, Origin, and the peer's user: allowUID, nil for the person
// and root), taking over the MCP sessions of an attached conversation's
// agent when at names a token.
func Starter(o Options, allowUID func(uid int) bool) facekit.StartMCP {
	return func(sess *session.Session, at conversation.Listen, allowedOrigins []string) (conversation.Endpoint, error) {
		srv := New(sess, o)
		ep, err := srv.ListenHTTP(HTTPOptions{Port: at.Port, Token: at.Token, AdoptSessions: at.Token != "", AllowedOrigins: allowedOrigins, AllowUID: allowUID})
		if err != nil {
			return conversation.Endpoint{}, err
		}
		return conversation.Endpoint{URL: ep.URL, Token: ep.Token, Sessions: srv.Sessions, Close: ep.Close}, nil
	}
}
