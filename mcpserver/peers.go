package mcpserver

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"

	"github.com/oh-bridge/oh-bridge/internal/sockowner"
)

// Who may call the endpoint. The bearer token guards it, but a token can
// leak: a conversation's agent sends it with every call, for the
// conversation's life, to whatever listens on the port it names. So the
// endpoint also takes a connection only from a process of the person's
// (or root's: an agent-server in Docker), or of a user whose agent-server
// the person confirmed; another user's program holding the token is
// refused before a byte is read. The kernel names the owner of the
// connecting socket (internal/sockowner); where the system does not tell,
// the token alone guards it.

// peerListener accepts only connections from allowed users' processes.
type peerListener struct {
	net.Listener
	allow func(uid int) bool
	log   *slog.Logger
}

func personOrRoot(uid int) bool { return uid == os.Getuid() || uid == 0 }

func (l *peerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		err = sockowner.Check(c, func(o sockowner.Owner, _ netip.AddrPort) error {
			if l.allow(o.UID) {
				return nil
			}
			return fmt.Errorf("the connecting process is run by %s, not by you", o.Describe())
		}, func(_ netip.AddrPort, err error) error {
			if errors.Is(err, sockowner.ErrUnsupported) {
				return nil
			}
			return err
		})
		if err == nil {
			return c, nil
		}
		l.log.Warn("a connection to the MCP endpoint is refused: only your processes may call your tools", "from", c.RemoteAddr().String(), "why", err.Error())
		c.Close()
	}
}
