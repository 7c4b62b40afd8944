package distcheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/dist"
	"github.com/oh-bridge/oh-bridge/internal/pkgcheck"
	"github.com/oh-bridge/oh-bridge/internal/realserver"
)

// uvEnv is the environment `task openhands` installs uv into (from the
// hashed lock test/openhands/uv.txt), with Python 3.12: its python makes
// the fresh virtual environments, its uv and uvx install the wheels.
func uvEnv(t *testing.T) (python, uv, uvx string) {
	t.Helper()
	venv, err := realserver.Venv("uv")
	if err != nil {
		missing(t, err.Error())
	}
	bin := filepath.Join(venv, "bin")
	return realserver.Python(venv), filepath.Join(bin, "uv"), filepath.Join(bin, "uvx")
}

// pipEnv keeps pip to the given files: no index, no configuration of the
// machine's, no question.
var pipEnv = []string{"PIP_CONFIG_FILE=/dev/null", "PIP_NO_INPUT=1", "PIP_DISABLE_PIP_VERSION_CHECK=1", "PYTHONDONTWRITEBYTECODE=1"}

// uvEnvVars keep uv offline, with a cache of the test's own and the
// Python already installed.
func uvEnvVars(t *testing.T, python string) []string {
	return []string{"UV_CACHE_DIR=" + t.TempDir(), "UV_NO_CONFIG=1", "UV_PYTHON_DOWNLOADS=never", "UV_OFFLINE=1", "UV_PYTHON=" + python}
}

// newVenv makes a fresh virtual environment with pip.
func newVenv(t *testing.T, python string) string {
	t.Helper()
	venv := filepath.Join(t.TempDir(), "venv")
	if r := run(t, installTimeout, "", pipEnv, python, "-m", "venv", venv); r.err != nil {
		t.Fatalf("python -m venv: %s", r)
	}
	return venv
}

// TestPipInstall installs oh-bridge into a fresh virtual environment
// with pip, by its name from dist/ and no index: pip takes this
// platform's wheel over the one for any platform, and its oh-bridge
// script is the binary itself, which prints the version and serves MCP.
func TestPipInstall(t *testing.T) {
	dir, version := distDir(t)
	p := here(t)
	python, _, _ := uvEnv(t)
	venv := newVenv(t, python)
	r := run(t, installTimeout, "", pipEnv, filepath.Join(venv, "bin", "python"), "-m", "pip", "install", "--no-index", "--find-links", dir, dist.PyPIName+"=="+version)
	if r.err != nil {
		t.Fatalf("pip install: %s", r)
	}
	if !strings.Contains(r.stdout, p.WheelFile(version)) {
		t.Errorf("pip did not take %s:\n%s", p.WheelFile(version), lines(r.stdout))
	}
	script := filepath.Join(venv, "bin", "oh-bridge")
	data, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := pkgcheck.Inspect(script, data); b == nil || len(b.Problems(p.GOOS, p.GOARCH)) > 0 {
		t.Fatalf("bin/oh-bridge is not this platform's binary: %+v", b)
	}
	r = run(t, time.Minute, "", nil, script, "--version")
	if r.err != nil || r.stdout != versionLine(version) {
		t.Fatalf("oh-bridge --version: %s", r)
	}
	t.Logf("pip installed %s; bin/oh-bridge --version: %s", p.WheelFile(version), strings.TrimSpace(r.stdout))
	cmd := exec.Command(script, "mcp", "--workspace", t.TempDir(), "--log-level", "error")
	cmd.Env = baseEnv(t)
	checkMCP(t, cmd)
}

// TestWheelChoice: each platform's installers take its own wheel, and
// any other platform the wheel for any platform. pip is asked which
// wheel it would download for a platform tag (pip download --platform:
// it widens an old manylinux name and a macOS version, not a
// manylinux_2_x or musllinux one, so those are asked of uv); uv installs
// for a target (--python-platform) into a directory of its own, and the
// script it installs tells which wheel it took. From dist/, no index.
func TestWheelChoice(t *testing.T) {
	dir, version := distDir(t)
	python, uv, _ := uvEnv(t)
	venv := newVenv(t, python)
	wheel := map[string]string{}
	for _, p := range dist.Platforms {
		wheel[p.Target] = p.WheelFile(version)
	}
	anyWheel := dist.AnyWheelFile(version)
	for _, c := range []struct{ platform, want string }{
		{"manylinux2014_x86_64", wheel["linux-x64"]},
		{"manylinux2014_aarch64", wheel["linux-arm64"]},
		{"musllinux_1_1_x86_64", wheel["linux-x64"]},
		{"macosx_12_0_x86_64", wheel["darwin-x64"]},
		{"macosx_15_0_arm64", wheel["darwin-arm64"]},
		{"win_amd64", anyWheel},
		{"linux_riscv64", anyWheel},
	} {
		t.Run("pip "+c.platform, func(t *testing.T) {
			into := t.TempDir()
			r := run(t, installTimeout, "", pipEnv, filepath.Join(venv, "bin", "python"), "-m", "pip", "download", "--no-index", "--find-links", dir,
				"--only-binary=:all:", "--platform", c.platform, "--python-version", "3.12", "--dest", into, dist.PyPIName+"=="+version)
			if r.err != nil {
				t.Fatalf("pip download: %s", r)
			}
			got, _ := filepath.Glob(filepath.Join(into, "*.whl"))
			if len(got) != 1 || filepath.Base(got[0]) != c.want {
				t.Errorf("pip took %q for %s, want %s", got, c.platform, c.want)
			}
		})
	}
	for _, c := range []struct {
		target string
		want   string // the installed script's platform, or "" for the wheel for any platform
	}{
		{"x86_64-manylinux_2_40", "linux/amd64"},
		{"x86_64-unknown-linux-musl", "linux/amd64"},
		{"aarch64-manylinux_2_28", "linux/arm64"},
		{"aarch64-unknown-linux-musl", "linux/arm64"},
		{"x86_64-apple-darwin", "darwin/amd64"},
		{"aarch64-apple-darwin", "darwin/arm64"},
		{"x86_64-pc-windows-msvc", ""},
		{"riscv64-unknown-linux", ""},
	} {
		t.Run("uv "+c.target, func(t *testing.T) {
			into := t.TempDir()
			r := run(t, installTimeout, "", uvEnvVars(t, python), uv, "pip", "install", "--target", into, "--python-platform", c.target,
				"--no-index", "--find-links", dir, dist.PyPIName+"=="+version)
			if r.err != nil {
				t.Fatalf("uv pip install: %s", r)
			}
			data, err := os.ReadFile(filepath.Join(into, "bin", "oh-bridge"))
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if b, _ := pkgcheck.Inspect("bin/oh-bridge", data); b != nil {
				got = b.Platform()
			} else if _, err := os.Stat(filepath.Join(into, "oh_bridge", "__init__.py")); err != nil {
				t.Fatalf("uv installed neither a binary nor the wheel for any platform: %v", err)
			}
			if got != c.want {
				t.Errorf("for %s uv installed the binary for %q, want %q (\"\": the wheel for any platform)", c.target, got, c.want)
			}
		})
	}
}

// TestUVX runs the wheels with uvx, offline with an empty cache: from
// this platform's wheel file (`uvx --from WHEEL oh-bridge`), and by the
// name and version the registry entry gives (`uvx oh-bridge@VERSION`),
// found in dist/.
func TestUVX(t *testing.T) {
	dir, version := distDir(t)
	p := here(t)
	python, _, uvx := uvEnv(t)
	env := uvEnvVars(t, python)
	r := run(t, installTimeout, t.TempDir(), env, uvx, "--from", filepath.Join(dir, p.WheelFile(version)), "oh-bridge", "--version")
	if r.err != nil || r.stdout != versionLine(version) {
		t.Fatalf("uvx --from %s oh-bridge --version: %s", p.WheelFile(version), r)
	}
	t.Logf("uvx --from %s oh-bridge --version: %s", p.WheelFile(version), strings.TrimSpace(r.stdout))
	cmd := exec.Command(uvx, "--no-index", "--find-links", dir, dist.PyPIName+"@"+version, "mcp", "--workspace", t.TempDir(), "--log-level", "error")
	cmd.Env = append(baseEnv(t), env...)
	checkMCP(t, cmd)
}

// TestFallbackWheel: the wheel for any platform installs an oh-bridge
// that says there is no binary and how to build the bridge, and exits 1.
// Here, on a platform with a wheel of its own, it says the installer
// passed that wheel over; elsewhere (riscv64, as Python is told) that
// there is none.
func TestFallbackWheel(t *testing.T) {
	dir, version := distDir(t)
	here(t)
	python, _, _ := uvEnv(t)
	venv := newVenv(t, python)
	r := run(t, installTimeout, "", pipEnv, filepath.Join(venv, "bin", "python"), "-m", "pip", "install", "--no-index", filepath.Join(dir, dist.AnyWheelFile(version)))
	if r.err != nil {
		t.Fatalf("pip install: %s", r)
	}
	goInstall := dist.GoInstall(version)
	r = run(t, time.Minute, "", nil, filepath.Join(venv, "bin", "oh-bridge"), "--version")
	wantMessage(t, r, "this is the oh-bridge "+version+" wheel without a binary", "has a wheel with one, which the installer did not take", goInstall)
	r = run(t, time.Minute, "", nil, filepath.Join(venv, "bin", "python"), "-c",
		"import platform, sys\nplatform.machine = lambda: 'riscv64'\nfrom oh_bridge import main\nsys.exit(main())")
	wantMessage(t, r, "the PyPI package oh-bridge "+version+" has no binary for this platform (linux-riscv64)", goInstall)
}
