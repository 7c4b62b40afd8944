package soak

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/oh-bridge/oh-bridge/workspace"
)

// filesPerDir and dirsPerTop shape the git tree: many directories, so a
// checkout also creates and removes watched directories, not only files.
const filesPerDir, dirsPerTop = 100, 10

// makeTree creates a git repository at dir with branches a and b of n
// files each; b changes nine files in ten and swaps a tenth of the
// directories for new ones. The history is written with git fast-import,
// which is quick even for 20,000 files, and branch a is checked out.
func makeTree(dir string, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if out, err := git(dir, nil, "init", "-q", "-b", "a"); err != nil {
		return fmt.Errorf("git init: %v\n%s", err, out)
	}
	dirs := max(n/filesPerDir, 1)
	swapped := max(dirs/10, 1) // the last directories exist on a only
	var s bytes.Buffer
	w := bufio.NewWriter(&s)
	blob := func(path, text string) {
		fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n%s\n", path, len(text), text)
	}
	commit := func(branch, from string) {
		fmt.Fprintf(w, "commit refs/heads/%s\ncommitter soak <soak@example.invalid> 1700000000 +0000\ndata %d\n%s\n", branch, len(branch), branch)
		if from != "" {
			fmt.Fprintf(w, "from refs/heads/%s\n", from)
		}
	}
	commit("a", "")
	for d := range dirs {
		for f := range filesPerDir {
			blob(treePath("top", d, f), treeText("a", d, f))
		}
	}
	commit("b", "a")
	for d := range dirs {
		if d >= dirs-swapped {
			fmt.Fprintf(w, "D %s\n", filepath.Dir(treePath("top", d, 0)))
			for f := range filesPerDir {
				blob(treePath("new", d, f), treeText("b", d, f))
			}
			continue
		}
		for f := range filesPerDir {
			if f%10 != 0 {
				blob(treePath("top", d, f), treeText("b", d, f))
			}
		}
	}
	w.WriteString("done\n")
	w.Flush()
	if out, err := git(dir, &s, "fast-import", "--quiet", "--done"); err != nil {
		return fmt.Errorf("git fast-import: %v\n%s", err, out)
	}
	if out, err := git(dir, nil, "reset", "-q", "--hard", "a"); err != nil {
		return fmt.Errorf("git reset: %v\n%s", err, out)
	}
	return nil
}

func treePath(top string, d, f int) string {
	return fmt.Sprintf("%s%02d/dir%03d/file%03d.txt", top, d/dirsPerTop, d, f)
}

func treeText(branch string, d, f int) string {
	return fmt.Sprintf("branch %s, directory %d, file %d\n%s", branch, d, f, strings.Repeat("some text of the tree\n", 4))
}

// git runs git in dir with a fixed identity and no user configuration,
// so the machine's settings cannot change what the soak does.
func git(dir string, stdin *bytes.Buffer, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0")
	if stdin != nil {
		cmd.Stdin = stdin
	}
	return cmd.CombinedOutput()
}

// editFile is the text of edited file f after n bridge edits and k
// external ones: the bridge bumps the counter line, the outside world the
// external line, so every state of the file is known to the test.
func editFile(f, n, k int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "file %d\ncounter: %d\nexternal: %d\n", f, n, k)
	for i := range 20 {
		fmt.Fprintf(&b, "line %d of file %d, unchanged by every edit\n", i, f)
	}
	return b.String()
}

func editPath(root string, f int) string {
	return filepath.Join(root, "edits", fmt.Sprintf("d%d", f%10), fmt.Sprintf("f%03d.txt", f))
}

// version is the bridge's version of a text.
func version(text string) string { return workspace.Version([]byte(text)) }

// makeWorkspace lays out the workspace: the files to edit under edits/
// and the git tree under tree/.
func makeWorkspace(root string, sc scale) error {
	for f := range sc.files {
		p := editPath(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(editFile(f, 0, 0)), 0o644); err != nil {
			return err
		}
	}
	return makeTree(filepath.Join(root, "tree"), sc.treeFiles)
}
