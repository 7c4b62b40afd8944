package acp

import (
	"encoding/json"
	"path/filepath"

	"github.com/oh-bridge/oh-bridge/session"
)

// realTarget names the file a file action will really read or change when
// the path the agent named resolves to another one (a symlink on the way,
// or the name itself a link): the question then says both, so the person
// is not asked about one file while another changes. real is "" when the
// path is the file, names none, or resolves outside the roots (the action
// is refused when it runs).
func (s *acpSession) realTarget(req session.PermissionRequest) (named, real string) {
	if req.Kind != "edit" && req.Kind != "read" {
		return "", ""
	}
	var args struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(req.RawInput, &args) != nil || args.Path == "" {
		return "", ""
	}
	real, err := s.sess.Resolve(args.Path)
	if err != nil {
		return "", ""
	}
	abs := args.Path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(s.sess.Roots()[0], abs)
	}
	if filepath.Clean(abs) == real {
		return "", ""
	}
	return args.Path, real
}

// titleWithTarget adds to an action's title the file it really touches.
func titleWithTarget(title, kind, named, real string) string {
	verb := "changes"
	if kind == "read" {
		verb = "reads"
	}
	return title + " (" + named + " leads to " + real + ": that is the file this " + verb + ")"
}
