package session

import "github.com/oh-bridge/oh-bridge/workspace"

// RootCandidate is a directory offered as a workspace root, and where the
// offer came from ("--workspace", "initialize", "session/new cwd"), so an
// error can say which setting to fix.
type RootCandidate struct {
	Dir, Origin string
}

// Candidates offers each of dirs as a root from origin.
func Candidates(origin string, dirs ...string) []RootCandidate {
	out := make([]RootCandidate, len(dirs))
	for i, d := range dirs {
		out[i] = RootCandidate{Dir: d, Origin: origin}
	}
	return out
}

// ChooseRoots is the choice New makes, without opening a session, for a
// command that must fail before it serves anything (a bad --workspace): each
// candidate made absolute and checked to be an existing directory, repeats
// dropped, the first root first; with no candidate, the current directory.
// A bad candidate answers an error of kind "invalid_root" naming its origin.
func ChooseRoots(cands ...RootCandidate) ([]string, error) {
	ws := make([]workspace.RootCandidate, len(cands))
	for i, c := range cands {
		ws[i] = workspace.RootCandidate(c)
	}
	return workspace.ChooseRoots(ws...)
}
