package distcheck

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/oh-bridge/oh-bridge/internal/dist"
)

const installTimeout = 3 * time.Minute

// npmInstall installs tarballs by their paths into a fresh project, with
// an empty cache and offline, as a person installs packages they were
// handed; npm reads no configuration of the machine's. It returns the
// project and the environment the installs ran with.
func npmInstall(t *testing.T, extra []string, tarballs ...string) (string, []string) {
	t.Helper()
	npm := need(t, "npm", "install Node.js 18 or newer, with npm")
	project := t.TempDir()
	env := []string{"npm_config_cache=" + t.TempDir(), "npm_config_update_notifier=false", "npm_config_audit=false", "npm_config_fund=false"}
	args := append([]string{"install", "--offline", "--no-package-lock"}, extra...)
	r := run(t, installTimeout, project, env, npm, append(args, tarballs...)...)
	if r.err != nil {
		t.Fatalf("npm %s: %s", strings.Join(append(args, tarballs...), " "), r)
	}
	return project, env
}

// TestNPMInstall installs this platform's tarball and the main one by
// their paths into a fresh project, offline with an empty cache, then
// runs `npx oh-bridge --version` and speaks MCP to `npx oh-bridge mcp`
// over stdio: tools/list, and a command run through the terminal tool.
func TestNPMInstall(t *testing.T) {
	dir, version := distDir(t)
	p := here(t)
	project, env := npmInstall(t, nil, filepath.Join(dir, dist.NPMTarball(p.NPMPackage(), version)), filepath.Join(dir, dist.NPMTarball(dist.NPMName, version)))
	npx := need(t, "npx", "install Node.js 18 or newer, with npm")
	env = append(env, "npm_config_offline=true")
	r := run(t, time.Minute, project, env, npx, "oh-bridge", "--version")
	if r.err != nil || r.stdout != versionLine(version) {
		t.Fatalf("npx oh-bridge --version: %s\nwant %q", r, versionLine(version))
	}
	t.Logf("npx oh-bridge --version: %s", strings.TrimSpace(r.stdout))
	// Nothing of the other platforms came along.
	for _, q := range dist.Platforms {
		_, err := os.Stat(filepath.Join(project, "node_modules", q.NPMPackage()))
		if q.Target == p.Target && err != nil || q.Target != p.Target && err == nil {
			t.Errorf("node_modules/%s: %v (installed only on %s)", q.NPMPackage(), err, q.Target)
		}
	}
	cmd := exec.Command(npx, "oh-bridge", "mcp", "--workspace", t.TempDir(), "--log-level", "error")
	cmd.Dir = project
	cmd.Env = append(baseEnv(t), env...)
	checkMCP(t, cmd)
}

// checkMCP speaks MCP over the command's stdio: the tools are
// OpenHands', and the terminal runs a command.
func checkMCP(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := mcp.NewClient(&mcp.Implementation{Name: "distcheck", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("%s: %v", strings.Join(cmd.Args, " "), err)
	}
	defer c.Close()
	list, err := c.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if want := []string{"file_editor", "task_tracker", "terminal"}; !slices.Equal(names, want) {
		t.Errorf("tools/list: %q, want %q", names, want)
	}
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "terminal", Arguments: map[string]any{"command": "echo from-$((6*7))"}})
	if err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("terminal: %v %+v", err, res)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.HasPrefix(text, "from-42\n") {
		t.Errorf("terminal answered %q", text)
	}
	t.Logf("%s: tools/list %q; terminal ran `echo from-$((6*7))`", strings.Join(cmd.Args, " "), names)
}

// TestNPXFromRegistry runs `npx -y oh-bridge --version` in an empty
// directory with an empty cache, the line the docs give, against a
// registry on loopback that serves the tarballs as the npm registry
// would serve them published: npm fetches the main package and only this
// platform's binary package (the os and cpu fields keep the others out).
func TestNPXFromRegistry(t *testing.T) {
	dir, version := distDir(t)
	p := here(t)
	npx := need(t, "npx", "install Node.js 18 or newer, with npm")
	reg := startNPMRegistry(t, npmTarballs(dir, version)...)
	r := run(t, installTimeout, t.TempDir(), reg.env(t), npx, "-y", "oh-bridge", "--version")
	if r.err != nil || r.stdout != versionLine(version) {
		t.Fatalf("npx -y oh-bridge --version: %s\nwant %q", r, versionLine(version))
	}
	var tarballs []string
	for _, req := range reg.Requests() {
		if strings.HasSuffix(req, ".tgz") {
			tarballs = append(tarballs, req)
		}
	}
	slices.Sort(tarballs)
	want := []string{"GET /" + dist.NPMName + "/-/" + dist.NPMTarball(dist.NPMName, version), "GET /" + p.NPMPackage() + "/-/" + dist.NPMTarball(p.NPMPackage(), version)}
	slices.Sort(want)
	if !slices.Equal(tarballs, want) {
		t.Errorf("npm fetched %q, want %q", tarballs, want)
	}
	t.Logf("npx -y oh-bridge --version: %s; fetched %q", strings.TrimSpace(r.stdout), tarballs)
}

// npmTarballs are every npm package in dir.
func npmTarballs(dir, version string) []string {
	out := []string{filepath.Join(dir, dist.NPMTarball(dist.NPMName, version))}
	for _, p := range dist.Platforms {
		out = append(out, filepath.Join(dir, dist.NPMTarball(p.NPMPackage(), version)))
	}
	return out
}

// TestLauncherMessages: where there is no binary, oh-bridge says why and
// how to build the bridge, and exits 1: on a platform with no package,
// and when npm left the platform's package out (--omit=optional).
func TestLauncherMessages(t *testing.T) {
	dir, version := distDir(t)
	p := here(t)
	node := need(t, "node", "install Node.js 18 or newer")
	main := filepath.Join(dir, dist.NPMTarball(dist.NPMName, version))
	goInstall := dist.GoInstall(version)

	t.Run("a platform with no package", func(t *testing.T) {
		project, env := npmInstall(t, nil, filepath.Join(dir, dist.NPMTarball(p.NPMPackage(), version)), main)
		// Node on Windows on ARM, as far as the launcher can tell.
		preload := filepath.Join(t.TempDir(), "platform.cjs")
		if err := os.WriteFile(preload, []byte("Object.defineProperty(process, 'platform', {value: 'win32'});\nObject.defineProperty(process, 'arch', {value: 'arm64'});\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := run(t, time.Minute, project, env, node, "--require", preload, filepath.Join(project, "node_modules", dist.NPMName, "bin", "oh-bridge"), "--version")
		wantMessage(t, r, "win32-arm64", "has no binary for this platform", goInstall)
	})
	t.Run("the platform's package left out", func(t *testing.T) {
		project, env := npmInstall(t, []string{"--omit=optional"}, main)
		r := run(t, time.Minute, project, append(env, "npm_config_offline=true"), need(t, "npx", "install npm"), "oh-bridge", "--version")
		wantMessage(t, r, "the package "+p.NPMPackage()+", which carries the binary for "+p.Target+", is not installed",
			"npm install "+p.NPMPackage()+"@"+version, goInstall)
	})
}

func wantMessage(t *testing.T, r result, want ...string) {
	t.Helper()
	if r.code != 1 || r.stdout != "" {
		t.Errorf("%s\nwant exit 1 and nothing on stdout", r)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("the message does not say %q:\n%s", w, lines(r.stderr))
		}
	}
	t.Logf("the message:\n%s", lines(r.stderr))
}
