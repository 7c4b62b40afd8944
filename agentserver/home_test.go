package agentserver

import (
	"os"
	"testing"

	"github.com/oh-bridge/oh-bridge/internal/realserver"
	"github.com/oh-bridge/oh-bridge/internal/testhome"
)

// The shells these tests start get a home of their own: no user rc file,
// no history written into the developer's. The real agent-servers the
// tests share (realserver.Shared) end with the tests.
func TestMain(m *testing.M) {
	os.Exit(testhome.Run(func() int {
		defer realserver.StopShared()
		return m.Run()
	}))
}
