package agentserver

import (
	"os"
	"sync"
	"testing"

	"github.com/oh-bridge/oh-bridge/internal/testhome"
)

// The shells these tests start get a home of their own: no user rc file,
// no history written into the developer's. What the tests share (the
// real agent-servers) is stopped after the last.
func TestMain(m *testing.M) {
	os.Exit(testhome.Run(func() int {
		code := m.Run()
		atExit.Lock()
		defer atExit.Unlock()
		for _, f := range atExit.funcs {
			f()
		}
		return code
	}))
}

var atExit struct {
	sync.Mutex
	funcs []func()
}

// AtExit runs f after the package's tests.
func AtExit(f func()) {
	atExit.Lock()
	defer atExit.Unlock()
	atExit.funcs = append(atExit.funcs, f)
}
