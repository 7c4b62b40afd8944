package engine

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// NoChangeTimeoutEnv overrides the soft timeout in whole seconds, as it
// does for OpenHands' action_execution_server and its V1 terminal.
const NoChangeTimeoutEnv = "NO_CHANGE_TIMEOUT_SECONDS"

// NoChangeTimeout is the soft timeout NO_CHANGE_TIMEOUT_SECONDS sets (an
// integer, like OpenHands' int(os.environ.get(...))), or def when it is
// unset or not a positive integer. Each dialect has its own default.
func NoChangeTimeout(def time.Duration) time.Duration {
	if v := strings.TrimSpace(os.Getenv(NoChangeTimeoutEnv)); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return time.Duration(n) * time.Second
		}
	}
	return def
}

// LookupPython is what `command -v python` would print on the agent
// shell's starting PATH (env's PATH, else the bridge's): OpenHands reports
// it as the Python interpreter after every command. "" when there is none.
func LookupPython(env map[string]string) string {
	path := os.Getenv("PATH")
	if p, ok := env["PATH"]; ok {
		path = p
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, "python")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}
