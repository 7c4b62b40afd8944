package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
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
	depth int // segments in dir
	rules []ignoreRule
	cost  int // what it holds, in ignoreBudget's units
}

type ignoreRule struct {
	segments []string // the pattern split at "/"; "**" segments match any depth
	negate   bool
	dirOnly  bool
	anchored bool // relative to dir; otherwise it matches a name at any depth
	literals int  // segments other than "**": a path with fewer cannot match
}

// What a .gitignore may cost. The bridge reads these files for itself, and
// the agent can write anything into them, so each is bounded: a file over
// maxIgnoreFileSize is skipped (and logged), not an error that ends the
// listing; the listing goes on as if the file were not there. The rules
// held at once, for the directory being walked and its ancestors, are
// bounded by ignoreBudget (a tree 1,000 levels deep with a 1 MiB
// .gitignore in each would otherwise hold 1 GB, and every entry is
// matched against every rule held); a file that would pass it
// is skipped the same way. Real .gitignore files are a few KiB.
const (
	maxIgnoreFileSize = 1 << 20
	// ignoreBudget bounds the rules held at once, in bytes of pattern plus
	// ignoreRuleCost a rule: 4 MiB of patterns, or 50,000 one-letter rules.
	ignoreBudget   = 4 << 20
	ignoreRuleCost = 80
)

// errIgnoreBudget is a .gitignore skipped because the ones in effect
// already hold the budget.
var errIgnoreBudget = errors.New("the .gitignore files in effect above it already hold as many rules as a listing keeps")

// loadIgnoreFile reads the .gitignore at the resolved path file, for the
// directory dir (relative to the listing's base), with at most budget left
// to hold. It is read as the agent's files are (openRegular): beneath its
// root, a symlink followed only while it stays inside, and only if it is a
// regular file of at most maxIgnoreFileSize bytes. A missing file is
// fs.ErrNotExist.
func loadIgnoreFile(r *Roots, file, dir string, budget int) (*ignoreFile, error) {
	data, err := r.readFile(file, maxIgnoreFileSize)
	if err != nil {
		return nil, err
	}
	ig := &ignoreFile{dir: dir}
	if dir != "" {
		ig.depth = strings.Count(dir, "/") + 1
	}
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		r, ok := parseIgnoreLine(string(line))
		if !ok {
			continue
		}
		if ig.cost += len(line) + ignoreRuleCost; ig.cost > budget {
			return nil, errIgnoreBudget
		}
		ig.rules = append(ig.rules, r)
	}
	return ig, nil
}

// ignoreSkipReason says why a .gitignore that exists was not applied, for
// the log; "" for one that is simply not there.
func ignoreSkipReason(err error) string {
	var over *errOverCap
	var nr *SpecialFileError
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.As(err, new(*NotFoundError)):
		return ""
	case errors.As(err, &over):
		return fmt.Sprintf("it is larger than %d bytes (%d)", over.limit, over.size)
	case errors.As(err, &nr):
		return "it is " + typeWords[nr.Type] + ", not a regular file"
	case errors.As(err, new(*OutsideRootsError)):
		return "it is a symlink that leads out of the workspace roots"
	}
	return err.Error()
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
	r.count()
	return r, true
}

// count sets r.literals from r.segments.
func (r *ignoreRule) count() {
	r.literals = 0
	for _, s := range r.segments {
		if s != "**" {
			r.literals++
		}
	}
}

// match reports whether rel (slash-separated, relative to the rule's
// directory) matches.
func (r *ignoreRule) match(rel string, isDir bool) bool {
	return r.matchSegments(strings.Split(rel, "/"), isDir)
}

func (r *ignoreRule) matchSegments(name []string, isDir bool) bool {
	if r.dirOnly && !isDir {
		return false
	}
	if r.literals > len(name) {
		return false
	}
	ok, steps := matchSegments(r.segments, name)
	if testHookMatchSteps != nil {
		testHookMatchSteps(steps)
	}
	return ok
}

// testHookMatchSteps, when set by a test, is told the steps each match took.
var testHookMatchSteps func(steps int)

// matchSegments reports whether the pattern segments pat match the path
// segments name, and the steps it took. A "**" segment matches zero or
// more segments, except at the end, where it matches one or more ("a/**"
// is what is inside a, not a itself); any other segment is a path.Match
// glob for exactly one segment.
//
// It runs in time linear in the pattern and in the path: it simulates the
// pattern as an automaton over segments, keeping the set of pattern
// positions reached after each path segment (at most len(pat)+1 of them),
// instead of trying each way a "**" could split the path, which is
// exponential in the number of "**" (twelve "**/" before "zzz" on a path
// 20 segments deep tried C(32,12) ≈ 2.3e8 splits). Each of the
// len(name) steps visits each position once, so there are at most
// (len(pat)+1) × len(name) steps, each one path.Match of a pattern
// segment against a path segment; path.Match itself matches greedily,
// without backtracking, in time linear in each. The whole is
// O(len(pattern) × len(path)) in bytes, whatever the pattern.
func matchSegments(pat, name []string) (bool, int) {
	m := len(pat)
	if m == 0 {
		return len(name) == 0, 0
	}
	// Fast path, most rules: one leading "**" (an unanchored pattern) and
	// no other, so the rest must match the path's last segments.
	if pat[0] == "**" && m > 1 && !hasDoubleStar(pat[1:]) {
		rest := pat[1:]
		if len(rest) > len(name) {
			return false, 0
		}
		ok, steps := matchLiteral(rest, name[len(name)-len(rest):])
		return ok, steps
	}
	if !hasDoubleStar(pat) {
		if len(pat) != len(name) {
			return false, 0
		}
		return matchLiteral(pat, name)
	}
	var small [2][16]bool
	cur, next := small[0][:m+1], small[1][:m+1]
	if m+1 > len(small[0]) {
		cur, next = make([]bool, m+1), make([]bool, m+1)
	}
	cur[0] = true
	closeOver(pat, cur)
	steps := 0
	for _, seg := range name {
		clear(next)
		alive := false
		for j := range m {
			if !cur[j] {
				continue
			}
			steps++
			switch {
			case pat[j] == "**":
				next[j] = true // it takes this segment and may take more
				if j == m-1 {
					next[m] = true
				}
				alive = true
			case globMatch(pat[j], seg):
				next[j+1] = true
				alive = true
			}
		}
		if !alive {
			return false, steps
		}
		closeOver(pat, next)
		cur, next = next, cur
	}
	return cur[m], steps
}

// closeOver adds to set the positions reached from it without taking a
// segment: past each "**" but a trailing one. One pass in order covers
// runs of "**".
func closeOver(pat []string, set []bool) {
	for j := 0; j < len(pat)-1; j++ {
		if set[j] && pat[j] == "**" {
			set[j+1] = true
		}
	}
}

// matchLiteral matches pattern segments without "**" one for one.
func matchLiteral(pat, name []string) (bool, int) {
	for i := range pat {
		if !globMatch(pat[i], name[i]) {
			return false, i + 1
		}
	}
	return true, len(pat)
}

func hasDoubleStar(pat []string) bool {
	for _, s := range pat {
		if s == "**" {
			return true
		}
	}
	return false
}

// globMatch is path.Match for one segment; a malformed pattern matches
// nothing.
func globMatch(pat, seg string) bool {
	ok, err := path.Match(pat, seg)
	return err == nil && ok
}

// ignoreStack is the .gitignore files in effect for one directory, outermost
// first. Deeper files and later lines take precedence, as in git.
type ignoreStack []*ignoreFile

// ignored reports whether rel (relative to the listing base) is ignored.
func (s ignoreStack) ignored(rel string, isDir bool) bool {
	if len(s) == 0 {
		return false
	}
	segs := strings.Split(rel, "/")
	for i := len(s) - 1; i >= 0; i-- {
		f := s[i]
		if f.dir != "" && !strings.HasPrefix(rel, f.dir+"/") {
			continue
		}
		sub := segs[f.depth:]
		for j := len(f.rules) - 1; j >= 0; j-- {
			if f.rules[j].matchSegments(sub, isDir) {
				return !f.rules[j].negate
			}
		}
	}
	return false
}

// cost is what the stack holds, in ignoreBudget's units.
func (s ignoreStack) cost() int {
	n := 0
	for _, f := range s {
		n += f.cost
	}
	return n
}
