package distcheck

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/dist"
)

// TestRegistryEntry: dist/acp-registry/oh-bridge/ holds an agent.json and
// an icon.svg the registry takes (EntryProblems, IconProblems), whose
// archives are the release archives dist/ holds and whose npx and uvx
// packages are the ones it built, at the extension's version.
func TestRegistryEntry(t *testing.T) {
	dir, version := distDir(t)
	entryDir := filepath.Join(dir, dist.RegistryDir, dist.RegistryID)
	raw, err := os.ReadFile(filepath.Join(entryDir, "agent.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range EntryProblems(dist.RegistryID, raw) {
		t.Errorf("agent.json: %s", p)
	}
	icon, err := os.ReadFile(filepath.Join(entryDir, "icon.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range IconProblems(string(icon)) {
		t.Errorf("icon.svg: %s", p)
	}
	var e dist.RegistryEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	if e.Version != version {
		t.Errorf("the entry's version is %s, the extension's %s", e.Version, version)
	}
	if e.Distribution.NPX == nil || e.Distribution.NPX.Package != dist.NPMName+"@"+version {
		t.Errorf("npx runs %+v, want %s@%s", e.Distribution.NPX, dist.NPMName, version)
	}
	if e.Distribution.UVX == nil || e.Distribution.UVX.Package != dist.PyPIName+"@"+version {
		t.Errorf("uvx runs %+v, want %s@%s", e.Distribution.UVX, dist.PyPIName, version)
	}
	for platform, b := range e.Distribution.Binary {
		if !strings.HasPrefix(b.Archive, dist.ReleaseURL(version, "")) {
			t.Errorf("%s: the archive %s is not in the release v%s", platform, b.Archive, version)
		}
		entries, err := readArchive(filepath.Join(dir, dist.ReleaseDir, path.Base(b.Archive)))
		if err != nil {
			t.Errorf("%s: %v", platform, err)
			continue
		}
		if _, ok := Find(entries, strings.TrimPrefix(b.Cmd, "./")); !ok {
			t.Errorf("%s: %s holds no %s: %q", platform, path.Base(b.Archive), b.Cmd, Paths(entries))
		}
	}
	t.Logf("agent.json:\n%s", raw)
}

func readArchive(file string) ([]Entry, error) {
	if strings.HasSuffix(file, ".zip") {
		return ReadZip(file)
	}
	return ReadTarGz(file)
}

// TestRegistryProblemsAreFound: the registry's checks refuse the entries
// and icons they exist to refuse, so a broken check cannot pass one.
func TestRegistryProblemsAreFound(t *testing.T) {
	good := func() map[string]any {
		var m map[string]any
		b, _ := json.Marshal(dist.Registry("1.2.3"))
		json.Unmarshal(b, &m)
		return m
	}
	distribution := func(m map[string]any) map[string]any { return m["distribution"].(map[string]any) }
	cases := []struct {
		name   string
		change func(m map[string]any)
		want   string
	}{
		{"ours", func(map[string]any) {}, ""},
		{"no description", func(m map[string]any) { delete(m, "description") }, "description is required"},
		{"an id with capitals", func(m map[string]any) { m["id"] = "Oh-Bridge" }, `id "Oh-Bridge" must match`},
		{"an id that is not the directory", func(m map[string]any) { m["id"] = "openhands" }, `must be the directory's name, "oh-bridge"`},
		{"a version that is not semantic", func(m map[string]any) { m["version"] = "1.2" }, `version "1.2" must match`},
		{"a repository that is no URI", func(m map[string]any) { m["repository"] = "oh-bridge/oh-bridge" }, "must be a URI"},
		{"an unknown distribution", func(m map[string]any) { distribution(m)["docker"] = map[string]any{} }, "distribution.docker is not a distribution type"},
		{"no windows binary", func(m map[string]any) { delete(distribution(m)["binary"].(map[string]any), "windows-x86_64") },
			"every OS: windows is missing"},
		{"an unknown platform", func(m map[string]any) {
			distribution(m)["binary"].(map[string]any)["linux-riscv64"] = map[string]any{"archive": "https://example.com/a.tar.gz", "cmd": "./a"}
		}, "distribution.binary.linux-riscv64 is not a platform"},
		{"a binary without cmd", func(m map[string]any) {
			delete(distribution(m)["binary"].(map[string]any)["linux-x86_64"].(map[string]any), "cmd")
		}, "distribution.binary.linux-x86_64.cmd is required"},
		{"an unknown field in a target", func(m map[string]any) {
			distribution(m)["binary"].(map[string]any)["linux-x86_64"].(map[string]any)["sha256"] = "x"
		}, "distribution.binary.linux-x86_64.sha256 is not a field"},
		{"an archive of another version", func(m map[string]any) {
			distribution(m)["binary"].(map[string]any)["linux-x86_64"].(map[string]any)["archive"] = dist.ReleaseURL("1.2.2", "a.tar.gz")
		}, "the binary URL for linux-x86_64 has version 1.2.2, the entry 1.2.3"},
		{"the latest archive", func(m map[string]any) {
			distribution(m)["binary"].(map[string]any)["linux-x86_64"].(map[string]any)["archive"] = dist.Repository + "/releases/latest/download/a.tar.gz"
		}, "uses /latest/"},
		{"npx at latest", func(m map[string]any) { distribution(m)["npx"].(map[string]any)["package"] = "oh-bridge@latest" }, "uses @latest"},
		{"npx at another version", func(m map[string]any) { distribution(m)["npx"].(map[string]any)["package"] = "oh-bridge@1.0.0" },
			"the npx package's version (1.0.0) is not the entry's (1.2.3)"},
		{"uvx at another version", func(m map[string]any) { distribution(m)["uvx"].(map[string]any)["package"] = "oh-bridge==1.0.0" },
			"the uvx package's version (1.0.0) is not the entry's (1.2.3)"},
		{"args that are not strings", func(m map[string]any) { distribution(m)["uvx"].(map[string]any)["args"] = []any{1} },
			"distribution.uvx.args must be a list of strings"},
		{"no package", func(m map[string]any) { delete(distribution(m)["npx"].(map[string]any), "package") }, "distribution.npx.package is required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := good()
			c.change(m)
			raw, _ := json.Marshal(m)
			got := strings.Join(EntryProblems("oh-bridge", raw), "\n")
			if c.want == "" && got != "" || !strings.Contains(got, c.want) {
				t.Errorf("EntryProblems = %q, want %q", got, c.want)
			}
		})
	}
	ours, err := os.ReadFile(filepath.Join(root, "packaging", "acp-registry", "icon.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, svg, want string }{
		{"ours", string(ours), ""},
		{"24x24", `<svg width="24" height="24"><path fill="currentColor"/></svg>`, "must be 16x16 (it is 24x24)"},
		{"not square", `<svg viewBox="0 0 16 12"><path fill="currentColor"/></svg>`, "must be square"},
		{"a colour", `<svg width="16" height="16"><path fill="#ff0000"/><path fill="currentColor"/></svg>`, `fill="#ff0000"`},
		{"a colour in style", `<svg width="16" height="16"><path style="stroke: red" fill="currentColor"/></svg>`, "stroke: red"},
		{"no currentColor", `<svg width="16" height="16"><path d="M0 0h1z"/></svg>`, "must use currentColor"},
	} {
		t.Run("icon "+c.name, func(t *testing.T) {
			got := strings.Join(IconProblems(c.svg), "\n")
			if c.want == "" && got != "" || !strings.Contains(got, c.want) {
				t.Errorf("IconProblems = %q, want %q", got, c.want)
			}
		})
	}
}

// TestRegistryAuthCheck runs the registry's own check of an agent
// (.github/workflows/verify_agents.py --auth-check and client.py) on each
// of the entry's distributions for this platform: the agent started as
// the registry starts it (the archive extracted and its cmd run in it;
// `npx --prefix SANDBOX --yes PACKAGE ARGS`; `uvx --cache-dir SANDBOX/uv-
// cache PACKAGE ARGS`), with a home of its own and TERM=dumb, is sent the
// validator's initialize, and must answer with an auth method of type
// "agent" or "terminal". npm and uv get the packages from dist/ (a
// registry on loopback, a find-links directory), not from the network.
func TestRegistryAuthCheck(t *testing.T) {
	dir, version := distDir(t)
	p := here(t)
	raw, err := os.ReadFile(filepath.Join(dir, dist.RegistryDir, dist.RegistryID, "agent.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e dist.RegistryEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	t.Run("binary", func(t *testing.T) {
		b := e.Distribution.Binary[p.Registry]
		sandbox := t.TempDir()
		entries, err := readArchive(filepath.Join(dir, dist.ReleaseDir, path.Base(b.Archive)))
		if err != nil {
			t.Fatal(err)
		}
		extract := filepath.Join(sandbox, "extracted")
		for _, en := range entries {
			if err := os.MkdirAll(filepath.Join(extract, filepath.Dir(en.Path)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(extract, en.Path), en.Data, en.Mode); err != nil {
				t.Fatal(err)
			}
		}
		authCheck(t, extract, sandbox, nil, filepath.Join(extract, strings.TrimPrefix(b.Cmd, "./")), b.Args...)
	})
	t.Run("npx", func(t *testing.T) {
		npx := need(t, "npx", "install Node.js 18 or newer, with npm")
		reg := startNPMRegistry(t, npmTarballs(dir, version)...)
		sandbox := t.TempDir()
		authCheck(t, sandbox, sandbox, reg.env(t), npx, append([]string{"--prefix", sandbox, "--yes", e.Distribution.NPX.Package}, e.Distribution.NPX.Args...)...)
	})
	t.Run("uvx", func(t *testing.T) {
		python, _, uvx := uvEnv(t)
		sandbox := t.TempDir()
		args := append([]string{"--cache-dir", filepath.Join(sandbox, "uv-cache"), "--no-index", "--find-links", dir, e.Distribution.UVX.Package}, e.Distribution.UVX.Args...)
		authCheck(t, sandbox, sandbox, uvEnvVars(t, python), uvx, args...)
	})
}

// authCheck is client.py's run_auth_check: start the agent, send the
// validator's initialize, read one line, and find an auth method of type
// "agent" or "terminal" (a method's "type", else "terminal" for a
// _meta "terminal-auth", else "agent").
func authCheck(t *testing.T, cwd, sandbox string, env []string, name string, args ...string) {
	t.Helper()
	home := filepath.Join(sandbox, "auth-home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = cwd
	cmd.Env = append(append(baseEnv(t), env...), "HOME="+home, "TERM=dumb")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}()
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,`+
		`"clientInfo":{"name":"ACP Registry Validator","version":"1.0.0"},"clientCapabilities":{"terminal":true,`+
		`"fs":{"readTextFile":true,"writeTextFile":true},"_meta":{"terminal_output":true,"terminal-auth":true}}}}`+"\n")
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- s
	}()
	var answer string
	select {
	case answer = <-line:
	case <-time.After(installTimeout):
		t.Fatalf("%s: no answer to initialize in %s; stderr:\n%s", strings.Join(cmd.Args, " "), installTimeout, stderr.String())
	}
	var res struct {
		Result struct {
			AuthMethods []struct {
				ID, Name, Type string
				Meta           map[string]any `json:"_meta"`
			} `json:"authMethods"`
		} `json:"result"`
		Error any `json:"error"`
	}
	if err := json.Unmarshal([]byte(answer), &res); err != nil || res.Error != nil {
		t.Fatalf("%s: initialize answered %q (%v); stderr:\n%s", strings.Join(cmd.Args, " "), answer, err, stderr.String())
	}
	var ok []string
	for _, m := range res.Result.AuthMethods {
		typ := m.Type
		if typ == "" {
			if _, terminal := m.Meta["terminal-auth"]; terminal {
				typ = "terminal"
			} else {
				typ = "agent"
			}
		}
		if typ == "agent" || typ == "terminal" {
			ok = append(ok, m.ID+"("+typ+")")
		}
	}
	if len(ok) == 0 {
		t.Fatalf("%s: no auth method of type agent or terminal: %s", strings.Join(cmd.Args, " "), answer)
	}
	t.Logf("%s: Auth OK: %s", strings.Join(cmd.Args, " "), strings.Join(ok, ", "))
}
