package facekit

import (
	"github.com/oh-bridge/oh-bridge/session"
	"github.com/oh-bridge/oh-bridge/workspace"
)

// Dirs are directories a face was given for its session's roots, and
// where they came from ("--workspace", "initialize", "session/new cwd"),
// which an error about one names.
type Dirs struct {
	Origin string
	Paths  []string
}

// StartSession opens a face's session with o, over the roots chosen from
// dirs, first given first (workspace.ChooseRoots: with none, the current
// directory). roots are as chosen: absolute, as given (the session's
// Roots spell them with links resolved). A directory that cannot be a
// root answers an error whose Kind is "invalid_root".
func StartSession(o session.Options, dirs ...Dirs) (sess *session.Session, roots []string, err error) {
	var cands []workspace.RootCandidate
	for _, d := range dirs {
		cands = append(cands, workspace.Candidates(d.Origin, d.Paths...)...)
	}
	if roots, err = workspace.ChooseRoots(cands...); err != nil {
		return nil, nil, err
	}
	o.Roots = roots
	if sess, err = session.New(o); err != nil {
		return nil, nil, err
	}
	return sess, roots, nil
}
