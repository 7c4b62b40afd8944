// Package shellplant makes file system state the way an agent would, from
// its terminal: a bash command run in a directory. The hostile-input tests
// plant their FIFOs, links and huge directories with it. It imports
// nothing of the bridge, so any package's tests can use it, workspace's
// own included.
package shellplant

import (
	"os/exec"
	"testing"
)

// Run runs script with bash in dir, failing the test with its output if
// it fails.
func Run(t testing.TB, dir, script string) {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bash -c %q: %v\n%s", script, err, out)
	}
}
