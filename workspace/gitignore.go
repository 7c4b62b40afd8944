package workspace

import (
	"bufio"
	"os"
	"path"
	"strings"
)

// ignoreFile holds the rules of one .gitignore, for the directory dir
// (slash-separated, relative to the listing's base; "" for the base).
//
// Supported: blank lines and # comments, \# and \! escapes, trailing-space
// trimming (unless escaped), ! negation, a trailing / for directories only,
// anchoring by a leading or inner /, and * ? [...] [!...] ** globs.
// Not supported: .git/info/exclude, core.excludesFile, and case folding.
type ignoreFile struct {
	dir   string
	rules []ignoreRule
}

type ignoreRule struct {
	segments []string // the pattern split at "/"; "**" segments match any depth
	negate   bool
	dirOnly  bool
	anchored bool // relative to dir; otherwise it matches a name at any depth
}

func loadIgnoreFile(file, dir string) (*ignoreFile, error) {
	fh, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	ig := &ignoreFile{dir: dir}
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if r, ok := parseIgnoreLine(sc.Text()); ok {
			ig.rules = append(ig.rules, r)
		}
	}
	return ig, sc.Err()
}

func parseIgnoreLine(line string) (ignoreRule, bool) {
	line = strings.TrimSuffix(line, "\r")
	// Trailing spaces are dropped unless the last one is escaped.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, "\\ ") {
		line = line[:len(line)-1]
	}
	if line == "" || line[0] == '#' {
		return ignoreRule{}, false
	}
	var r ignoreRule
	switch {
	case line[0] == '!':
		r.negate = true
		line = line[1:]
	case strings.HasPrefix(line, `\!`), strings.HasPrefix(line, `\#`):
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return ignoreRule{}, false
	}
	if strings.Contains(line, "/") {
		r.anchored = true
		line = strings.TrimLeft(line, "/")
	}
	for _, seg := range strings.Split(line, "/") {
		if seg == "" {
			continue
		}
		// path.Match spells a negated class [^...]; gitignore also allows [!...].
		r.segments = append(r.segments, strings.ReplaceAll(seg, "[!", "[^"))
	}
	if len(r.segments) == 0 {
		return ignoreRule{}, false
	}
	if !r.anchored && r.segments[0] != "**" {
		r.segments = append([]string{"**"}, r.segments...)
	}
	return r, true
}

// match reports whether rel (slash-separated, relative to the rule's
// directory) matches.
func (r *ignoreRule) match(rel string, isDir bool) bool {
	if r.dirOnly && !isDir {
		return false
	}
	return matchSegments(r.segments, strings.Split(rel, "/"))
}

func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			if len(rest) == 0 {
				// A trailing "/**" matches everything inside, not the directory itself.
				return len(name) > 0
			}
			for i := 0; i <= len(name); i++ {
				if matchSegments(rest, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], name[0]); err != nil || !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// ignoreStack is the .gitignore files in effect for one directory, outermost
// first. Deeper files and later lines take precedence, as in git.
type ignoreStack []*ignoreFile

// ignored reports whether rel (relative to the listing base) is ignored.
func (s ignoreStack) ignored(rel string, isDir bool) bool {
	for i := len(s) - 1; i >= 0; i-- {
		f := s[i]
		sub := rel
		if f.dir != "" {
			if !strings.HasPrefix(rel, f.dir+"/") {
				continue
			}
			sub = rel[len(f.dir)+1:]
		}
		for j := len(f.rules) - 1; j >= 0; j-- {
			if f.rules[j].match(sub, isDir) {
				return !f.rules[j].negate
			}
		}
	}
	return false
}
