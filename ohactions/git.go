package ohactions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf16"

	"github.com/oh-bridge/oh-bridge/workspace"
)

// The OpenHands UI's hidden helper commands (openhands/runtime/utils/
// git_handler.py). They name scripts inside OpenHands' sandbox image, so
// this runtime answers them itself, printing what the scripts print.
const (
	gitChangesCommand  = "python3 /openhands/code/openhands/runtime/utils/git_changes.py"
	gitDiffCommandHead = `python3 /openhands/code/openhands/runtime/utils/git_diff.py "`
	emptyTreeSHA       = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
	maxGitDiffFileSize = 1024 * 1024
)

func (r *Runtime) gitHelper(ctx context.Context, ra *runArgs) (*Observation, bool) {
	cmd := ra.command
	isChanges := cmd == gitChangesCommand
	isDiff := strings.HasPrefix(cmd, gitDiffCommandHead) && strings.HasSuffix(cmd, `"`) && len(cmd) > len(gitDiffCommandHead)
	if !isChanges && !isDiff {
		return nil, false
	}
	dir := r.cwd()
	if ra.isStatic {
		dir = r.root
		if ra.cwd != nil && *ra.cwd != "" {
			dir = *ra.cwd
		}
	}
	var out string
	code := 0
	if isChanges {
		changes, err := gitChanges(ctx, dir)
		if err != nil {
			out = pyJSON(Object{{"error", err.Error()}})
		} else {
			list := make([]any, len(changes))
			for i, c := range changes {
				list[i] = Object{{"status", c.status}, {"path", c.path}}
			}
			out = pyJSON(list)
		}
	} else {
		file := cmd[len(gitDiffCommandHead) : len(cmd)-1]
		modified, original, err := r.gitDiff(ctx, dir, file)
		if err != nil {
			code = 1
			out = "Traceback (most recent call last):\nValueError: " + err.Error()
		} else {
			out = pyJSON(Object{{"modified", modified}, {"original", original}})
		}
	}
	id := r.ident
	md := cmdMetadata{
		ExitCode: code, Username: &id.username, Hostname: &id.hostname, WorkingDir: &dir,
		PyInterpreterPath: &id.python, Suffix: "\n[The command completed with exit code " + itoa(code) + ".]",
	}
	return cmdObservation(cmd, cut(out, ra.hidden), md, ra.hidden), true
}

// gitRun is the scripts' run(): stderr (or stdout) stripped, an error on a
// non-zero exit.
func gitRun(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"--no-pager"}, args...)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	content := stderr.String()
	if content == "" {
		content = stdout.String()
	}
	if err != nil {
		code := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		return "", fmt.Errorf("error_running_cmd:%d:%s", code, content)
	}
	return strings.TrimSpace(content), nil
}

// validRef is the scripts' get_valid_ref. The default branch comes from
// origin/HEAD instead of `git remote show origin`, which would reach the
// network.
func validRef(ctx context.Context, repo string) string {
	var refs []string
	if branch, err := gitRun(ctx, repo, "rev-parse", "--abbrev-ref", "HEAD"); err == nil {
		refs = append(refs, "origin/"+branch)
	}
	if head, err := gitRun(ctx, repo, "symbolic-ref", "--short", "refs/remotes/origin/HEAD"); err == nil {
		def := strings.TrimPrefix(head, "origin/")
		if base, err := gitRun(ctx, repo, "merge-base", "HEAD", "origin/"+def); err == nil {
			refs = append(refs, base)
		}
		refs = append(refs, "origin/"+def)
	}
	refs = append(refs, emptyTreeSHA)
	for _, ref := range refs {
		if out, err := gitRun(ctx, repo, "rev-parse", "--verify", ref); err == nil {
			return out
		}
	}
	return ""
}

type gitChange struct{ status, path string }

func changesInRepo(ctx context.Context, repo string) ([]gitChange, error) {
	ref := validRef(ctx, repo)
	if ref == "" {
		return nil, nil
	}
	out, err := gitRun(ctx, repo, "diff", "--name-status", ref)
	if err != nil {
		return nil, err
	}
	var changes []gitChange
	lines := strings.Split(out, "\n")
	if out == "" {
		lines = nil
	}
	for _, line := range lines {
		parts := strings.Fields(line)
		if len(parts) < 2 {
			return nil, fmt.Errorf("unexpected_value_in_git_diff:%q", lines)
		}
		status := parts[0]
		switch {
		case strings.HasPrefix(status, "R") && len(parts) == 3:
			changes = append(changes, gitChange{"D", parts[1]}, gitChange{"A", parts[2]})
			continue
		case strings.HasPrefix(status, "C") && len(parts) == 3:
			changes = append(changes, gitChange{"A", parts[2]})
			continue
		case len(parts) != 2:
			return nil, fmt.Errorf("unexpected_value_in_git_diff:%q", lines)
		}
		switch status {
		case "??":
			status = "A"
		case "*":
			status = "M"
		}
		switch status {
		case "M", "A", "D", "U":
			changes = append(changes, gitChange{status, parts[1]})
		default:
			return nil, fmt.Errorf("unexpected_status_in_git_diff:%q", lines)
		}
	}
	untracked, err := gitRun(ctx, repo, "ls-files", "--others", "--exclude-standard")
	if err != nil {
		return nil, err
	}
	for _, p := range strings.Split(untracked, "\n") {
		if p != "" {
			changes = append(changes, gitChange{"A", p})
		}
	}
	return changes, nil
}

// gitChanges is git_changes.py's get_git_changes.
func gitChanges(ctx context.Context, cwd string) ([]gitChange, error) {
	matches, _ := filepath.Glob(filepath.Join(cwd, "*", ".git"))
	var subs []string
	for _, m := range matches {
		subs = append(subs, filepath.Base(filepath.Dir(m)))
	}
	all, err := changesInRepo(ctx, cwd)
	if err != nil {
		return nil, err
	}
	var changes []gitChange
	for _, c := range all {
		inSub := false
		for _, s := range subs {
			if strings.HasPrefix(c.path, s) {
				inSub = true
				break
			}
		}
		if !inSub {
			changes = append(changes, c)
		}
	}
	for _, s := range subs {
		sc, err := changesInRepo(ctx, filepath.Join(cwd, s))
		if err != nil {
			return nil, err
		}
		for _, c := range sc {
			changes = append(changes, gitChange{c.status, s + "/" + c.path})
		}
	}
	sort.SliceStable(changes, func(i, j int) bool { return changes[i].path < changes[j].path })
	return changes, nil
}

// gitDiff is git_diff.py's get_git_diff. The file is read as the agent's
// reads are: inside the workspace roots, beneath its root, regular only
// (a FIFO would hold the script's open for ever) and capped at the
// script's own limit; a path outside the roots is refused in the words of
// V0's other file actions.
func (r *Runtime) gitDiff(ctx context.Context, cwd, file string) (modified, original string, err error) {
	path := file
	if !filepath.IsAbs(path) {
		path = filepath.Join(cwd, file)
	}
	roots := r.fs.Roots()
	if p, err := roots.Resolve(path); err == nil {
		path = p
	} else if errors.As(err, new(*workspace.OutsideRootsError)) {
		return "", "", errors.New(outsideMessage(path, roots.List()))
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", "", fmt.Errorf("[Errno 2] No such file or directory: '%s'", path)
	}
	if fi.Size() > maxGitDiffFileSize {
		return "", "", errors.New("file_to_large")
	}
	repo := ""
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if st, err := os.Stat(filepath.Join(dir, ".git")); err == nil && st.IsDir() {
			repo = dir
			break
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	if repo == "" {
		return "", "", errors.New("no_repository")
	}
	ref := validRef(ctx, repo)
	rel, _ := filepath.Rel(repo, path)
	if out, err := gitRun(ctx, repo, "show", ref+":"+rel); err == nil {
		original = out
	}
	data, err := roots.ReadRegular(path, maxGitDiffFileSize)
	var special *workspace.SpecialFileError
	var nt *workspace.NotTextError
	switch {
	case errors.As(err, &special):
		return "", "", err
	case errors.As(err, &nt) && nt.Reason == workspace.NotTextTooLarge:
		return "", "", errors.New("file_to_large") // it grew since the size was checked
	case err == nil:
		modified = strings.Join(pySplitLines(string(data)), "\n")
	}
	return modified, original, nil
}

// pySplitLines is Python's str.splitlines() for the common line breaks.
func pySplitLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}

// pyJSON is Python's json.dumps with its defaults: ", " and ": "
// separators and non-ASCII escaped as \uXXXX.
func pyJSON(v any) string {
	var b strings.Builder
	writePyJSON(&b, v)
	return b.String()
}

func writePyJSON(b *strings.Builder, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		writePyString(b, v)
	case bool:
		if v {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case int:
		b.WriteString(itoa(v))
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			writePyJSON(b, e)
		}
		b.WriteByte(']')
	case Object:
		b.WriteByte('{')
		for i, f := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			writePyString(b, f.Key)
			b.WriteString(": ")
			writePyJSON(b, f.Value)
		}
		b.WriteByte('}')
	default:
		fmt.Fprintf(b, "%v", v)
	}
}

func writePyString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r < 0x20 || (r > 0x7f && r < 0x10000):
				fmt.Fprintf(b, `\u%04x`, r)
			case r >= 0x10000:
				r1, r2 := utf16.EncodeRune(r)
				fmt.Fprintf(b, `\u%04x\u%04x`, r1, r2)
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}
