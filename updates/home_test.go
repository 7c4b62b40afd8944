package updates_test

import (
	"os"
	"testing"

	"github.com/oh-bridge/oh-bridge/internal/testhome"
)

// The shells these tests start get a home of their own: no user rc file,
// no history written into the developer's.
func TestMain(m *testing.M) { os.Exit(testhome.Run(m.Run)) }
