package distcheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/dist"
)

// root is the repository.
var root = filepath.Join("..", "..")

// distDir is dist/, with every package of the extension's version in it.
// Outside CI, a missing package skips the test and says how to build it.
func distDir(t *testing.T) (dir, version string) {
	t.Helper()
	version, err := dist.ExtensionVersion(root)
	if err != nil {
		t.Fatal(err)
	}
	dir, err = filepath.Abs(filepath.Join(root, "dist"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{dist.NPMTarball(dist.NPMName, version), dist.AnyWheelFile(version),
		filepath.Join(dist.RegistryDir, dist.RegistryID, "agent.json")}
	for _, p := range dist.Platforms {
		want = append(want, dist.NPMTarball(p.NPMPackage(), version), p.WheelFile(version), filepath.Join(dist.ReleaseDir, p.Archive(version)))
	}
	want = append(want, filepath.Join(dist.ReleaseDir, dist.Windows.Archive(version)))
	for _, f := range want {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			missing(t, fmt.Sprintf("dist/%s is not built: run `go run github.com/go-task/task/v3/cmd/task@v3.53.1 dist` (the test task does)", f))
		}
	}
	return dir, version
}

// missing fails the test in CI, which must have everything, and skips it
// elsewhere.
func missing(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// need is the path of program, or the test ends saying how to install it.
func need(t *testing.T, program, install string) string {
	t.Helper()
	path, err := exec.LookPath(program)
	if err != nil {
		missing(t, fmt.Sprintf("%s is not installed: %s", program, install))
	}
	return path
}

// here is the platform this test runs on, when it has packages.
func here(t *testing.T) dist.Platform {
	t.Helper()
	for _, p := range dist.Platforms {
		if p.GOOS == runtime.GOOS && p.GOARCH == runtime.GOARCH {
			return p
		}
	}
	t.Skipf("no package has a binary for %s/%s", runtime.GOOS, runtime.GOARCH)
	return dist.Platform{}
}

// result is how a command ended.
type result struct {
	stdout, stderr string
	code           int // -1 when a signal ended it
	err            error
}

func (r result) String() string {
	return fmt.Sprintf("exit %d (%v)\nstdout:\n%s\nstderr:\n%s", r.code, r.err, r.stdout, r.stderr)
}

// run runs a command to its end within timeout, in dir with env added to
// a clean environment (PATH, HOME and TMPDIR of the test's own).
func run(t *testing.T, timeout time.Duration, dir string, env []string, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(baseEnv(t), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String(), err: err}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	default:
		r.code = -2
	}
	if ctx.Err() != nil {
		r.err = fmt.Errorf("%s did not end within %s: %w", name, timeout, ctx.Err())
	}
	return r
}

// baseEnv is what a person's shell would give a command: PATH, a home of
// the test's own (so no npm, pip or uv configuration of the machine's
// applies) and the locale.
func baseEnv(t *testing.T) []string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8", "TMPDIR=" + os.TempDir()}
}

// versionLine is what `oh-bridge --version` prints.
func versionLine(version string) string { return "oh-bridge " + version + "\n" }

// lines quotes s's lines for a failure message.
func lines(s string) string {
	return "\t" + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n\t")
}
