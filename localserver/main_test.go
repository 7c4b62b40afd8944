//go:build unix

package localserver

import (
	"os"
	"testing"
)

// TestMain lets this test binary be what the bridge's binary is to a
// server it starts: its supervisor (RunSupervisorIfAsked), as os/exec's
// tests make theirs a helper process. holdTreeEnv makes it a bridge that
// starts a server and waits to be killed (supervisor_unix_test.go); Windows has no supervisor.
func TestMain(m *testing.M) {
	RunSupervisorIfAsked()
	if os.Getenv(holdTreeEnv) != "" {
		os.Exit(holdTree())
	}
	os.Exit(m.Run())
}
