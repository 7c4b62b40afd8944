package process

import (
	"os"
	"os/exec"
	"testing"
)

func TestAlive(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Errorf("Alive(own pid %d) = false, want true", os.Getpid())
	}
	// A child that has exited and been waited for is gone.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatalf("run the test binary as a child: %v", err)
	}
	if pid := cmd.Process.Pid; Alive(pid) {
		t.Errorf("Alive(pid %d of an exited, reaped child) = true, want false", pid)
	}
	for _, pid := range []int{0, -1} {
		if !Alive(pid) {
			t.Errorf("Alive(%d) = false, want true (no single process to judge)", pid)
		}
	}
}
