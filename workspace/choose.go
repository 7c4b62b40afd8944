package workspace

import (
	"fmt"
	"os"
	"path/filepath"
)

// RootCandidate is a directory offered as a workspace root, and where the
// offer came from ("--workspace", "initialize", "session/new cwd"), so an
// error can say which setting to fix.
type RootCandidate struct {
	Dir, Origin string
}

// ChooseRoots is the one place roots are checked, for every face (through
// session.New, which takes the faces' candidates): it makes
// each candidate absolute, checks that it is an existing directory, and
// drops repeats, keeping the first root first. With no candidate the
// current directory is the root. A bad candidate answers
// *InvalidRootError.
func ChooseRoots(cands ...RootCandidate) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, c := range cands {
		abs, err := filepath.Abs(c.Dir)
		if err != nil {
			return nil, &InvalidRootError{Dir: c.Dir, Origin: c.Origin, Reason: "cannot be made absolute: " + err.Error()}
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return nil, &InvalidRootError{Dir: abs, Origin: c.Origin, Reason: "does not exist"}
		}
		if !fi.IsDir() {
			return nil, &InvalidRootError{Dir: abs, Origin: c.Origin, Reason: "is not a directory"}
		}
		if !seen[abs] {
			seen[abs] = true
			out = append(out, abs)
		}
	}
	if len(out) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("no workspace root given and the current directory is unreadable: %w", err)
		}
		out = append(out, wd)
	}
	return out, nil
}

// InvalidRootError reports a workspace root that cannot be used.
type InvalidRootError struct {
	Dir, Origin, Reason string
}

func (e *InvalidRootError) Error() string {
	return fmt.Sprintf("workspace root %s (from %s) %s; open an existing folder", e.Dir, e.Origin, e.Reason)
}

// Kind returns "invalid_root".
func (e *InvalidRootError) Kind() string { return "invalid_root" }
