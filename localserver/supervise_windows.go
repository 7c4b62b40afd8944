package localserver

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// supervisorWorksHere: Windows has no supervisor yet. A Job Object with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, its handle held by the bridge alone,
// is the mechanism that would end the server's tree with the bridge;
// until it is written, the server is the bridge's direct child, killed
// alone on Stop, and outlives a bridge that is killed (docs/platforms.md).
const supervisorWorksHere = false

func superviseMain([]string) int {
	fmt.Fprintf(os.Stderr, "oh-bridge: %s is set, and Windows has no agent-server supervisor; unset it to run oh-bridge\n", superviseEnv)
	return 2
}

func startSupervised(*exec.Cmd) (serverProcess, error) {
	return nil, errors.New("no supervisor on Windows")
}
