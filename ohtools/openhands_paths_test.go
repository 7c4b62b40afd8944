package ohtools_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/internal/realserver"
	"github.com/oh-bridge/oh-bridge/rpc/rpctest"
)

// The two paths of TestAgainstOpenHands: the environment both share, the
// driver that runs openhands-tools, and `oh-bridge mcp` under the MCP Go
// SDK's client.

// diffEnv is what both paths share: a home without rc files, a PATH
// whose first python is a stand-in (the texts name it), the directory
// each case's workspaces are made in, and where the real tools save what
// truncation cut.
type diffEnv struct {
	root, home, bin, python, observations, tmux string
}

func newDiffEnv(t *testing.T) *diffEnv {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &diffEnv{root: root, home: filepath.Join(root, "home"), bin: filepath.Join(root, "bin"), observations: filepath.Join(root, "observations")}
	for _, d := range []string{e.home, e.bin, e.observations, filepath.Join(root, realSide), filepath.Join(root, bridgeSide)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.python = filepath.Join(e.bin, "python")
	if err := os.WriteFile(e.python, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// tmux's socket path must stay short.
	if e.tmux, err = os.MkdirTemp("", "oh-tmux-"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(e.tmux) })
	return e
}

// environ is the environment of both paths' shells.
func (e *diffEnv) environ() []string {
	return []string{
		"PATH=" + e.bin + ":/usr/local/bin:/usr/bin:/bin",
		"HOME=" + e.home,
		"LC_ALL=C.UTF-8", // tmux shows what is not ASCII only in a UTF-8 locale
		"TMUX_TMPDIR=" + e.tmux,
	}
}

// The directories of each side's workspaces. Their names are as long as
// each other: a text cut at 30,000 characters is cut before its paths are
// normalized, so paths of different lengths would cut it in different
// places.
const (
	realSide   = "real"
	bridgeSide = "ours"
)

// workspace is a case's fresh workspace on one path.
func (e *diffEnv) workspace(path string, i int) string {
	return filepath.Join(e.root, path, fmt.Sprintf("case-%03d", i))
}

// The normalizations: only what must differ from run to run or path to
// path, the same on both sides (docs/openhands-compat.md says why).
var (
	// A temporary file's random name: FileEditor's create beside the
	// target, ".NAME.XXXXXXXX.tmp".
	diffTempNameRE = regexp.MustCompile(`\.[a-z0-9_]{8}\.tmp'`)
)

func (e *diffEnv) normalize(r goldenResult, workspace string) goldenResult {
	repl := strings.NewReplacer(workspace, "$WORKSPACE", e.python, "$PY", e.observations, "$OBSERVATIONS")
	out := goldenResult{IsError: r.IsError}
	for _, c := range r.Content {
		var text string
		if json.Unmarshal(c, &text) != nil {
			out.Content = append(out.Content, c)
			continue
		}
		text = diffTempNameRE.ReplaceAllString(repl.Replace(text), ".$$TMP.tmp'")
		b, _ := json.Marshal(text)
		out.Content = append(out.Content, b)
	}
	return out
}

// driverRun is one run of the driver: calls in order on one set of tools
// over a workspace of their own.
type driverRun struct {
	Name      string     `json:"name"`
	Workspace string     `json:"workspace"`
	Calls     []toolCall `json:"calls"`
}

// driverOutput is what the driver answered: each run's normalized
// results by run name, and the tools' definitions.
type driverOutput struct {
	results     map[string][]goldenResult
	definitions json.RawMessage
}

// runDriverRuns runs the driver over runs, and has it print the tools'
// definitions too.
func runDriverRuns(venv string, e *diffEnv, runs []driverRun) (*driverOutput, error) {
	defs := filepath.Join(e.root, "definitions")
	req := struct {
		SoftTimeout     int         `json:"soft_timeout"`
		ObservationsDir string      `json:"observations_dir"`
		Jobs            int         `json:"jobs"`
		Definitions     string      `json:"definitions_workspace"`
		Runs            []driverRun `json:"runs"`
	}{diffSoftTimeout, e.observations, diffJobs, defs, runs}
	workspaces := map[string]string{}
	for _, r := range append(runs, driverRun{Workspace: defs}) {
		if err := os.MkdirAll(r.Workspace, 0o755); err != nil {
			return nil, err
		}
		workspaces[r.Name] = r.Workspace
	}
	lines, err := runDriver(venv, e, req)
	if err != nil {
		return nil, err
	}
	out := &driverOutput{results: map[string][]goldenResult{}}
	for _, l := range lines {
		var line struct {
			Name        string          `json:"name"`
			Results     []goldenResult  `json:"results"`
			Error       string          `json:"error"`
			Definitions json.RawMessage `json:"definitions"`
		}
		if err := json.Unmarshal(l, &line); err != nil {
			return nil, fmt.Errorf("the driver printed %q: %v", l, err)
		}
		if line.Error != "" {
			return nil, fmt.Errorf("the driver failed on %q:\n%s", line.Name, line.Error)
		}
		if line.Definitions != nil {
			out.definitions = line.Definitions
			continue
		}
		for _, r := range line.Results {
			out.results[line.Name] = append(out.results[line.Name], e.normalize(r, workspaces[line.Name]))
		}
	}
	if out.definitions == nil {
		return nil, fmt.Errorf("the driver printed no definitions")
	}
	return out, nil
}

// runDriver runs test/openhands/tools_driver.py in the environment's
// Python with req on its stdin and returns its output lines.
func runDriver(venv string, e *diffEnv, req any) ([][]byte, error) {
	in, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	driver, err := filepath.Abs(driverFile)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(realserver.Python(venv), "-I", driver)
	cmd.Dir = e.root
	cmd.Env = append(e.environ(),
		"LITELLM_LOCAL_MODEL_COST_MAP=True", // no network at import
		"OPENHANDS_SUPPRESS_BANNER=1",
		"LOG_LEVEL=WARNING",
	)
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %v\n%s\n%s", driverFile, err, stdout.String(), tailOf(stderr.String(), 4000))
	}
	var lines [][]byte
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
	}
	return lines, nil
}

func tailOf(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

var (
	bridgeOnce sync.Once
	bridgeBin  string
	bridgeErr  error
)

// builtBridge compiles oh-bridge once for the tests that need the binary.
func builtBridge(t *testing.T) string {
	t.Helper()
	bridgeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "oh-bridge-bin-")
		if err != nil {
			bridgeErr = err
			return
		}
		bridgeBin, bridgeErr = rpctest.BuildBridge("../cmd/oh-bridge", dir)
	})
	if bridgeErr != nil {
		t.Fatal(bridgeErr)
	}
	return bridgeBin
}

// runBridge runs every case through its own `oh-bridge mcp`, diffJobs at
// a time, and returns each case's normalized results.
func runBridge(t *testing.T, e *diffEnv, cases []toolCase) map[string][]goldenResult {
	bin := builtBridge(t)
	var mu sync.Mutex
	results := map[string][]goldenResult{}
	errs := make([]error, len(cases))
	sem := make(chan struct{}, diffJobs)
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			dir := e.workspace(bridgeSide, i)
			r, err := runBridgeCase(bin, e, dir, c)
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", c.Name, err)
				return
			}
			mu.Lock()
			results[c.Name] = r
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return results
}

func runBridgeCase(bin string, e *diffEnv, dir string, c toolCase) ([]goldenResult, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "mcp", "--workspace", dir, "--log-level", "warn")
	cmd.Dir = dir
	cmd.Env = append(e.environ(), fmt.Sprintf("NO_CHANGE_TIMEOUT_SECONDS=%d", diffSoftTimeout))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "differential", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, fmt.Errorf("connect: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	var out []goldenResult
	for _, call := range c.Calls {
		if err := applySetup(call.Setup, dir); err != nil {
			return nil, err
		}
		args := json.RawMessage(strings.ReplaceAll(string(call.Arguments), "$WORKSPACE", dir))
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: call.Tool, Arguments: args})
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) {
			// The MCP layer refused the call: its error is the text.
			enc, _ := json.Marshal(fmt.Sprintf("MCP error %d: %s", rpcErr.Code, rpcErr.Message))
			out = append(out, goldenResult{IsError: true, Content: []json.RawMessage{enc}})
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s: %v\n%s", call.Tool, args, err, stderr.String())
		}
		r := goldenResult{IsError: res.IsError}
		for _, block := range res.Content {
			switch b := block.(type) {
			case *mcp.TextContent:
				enc, _ := json.Marshal(b.Text)
				r.Content = append(r.Content, enc)
			case *mcp.ImageContent:
				enc, _ := json.Marshal(map[string]any{"image": b.MIMEType, "bytes": len(b.Data)})
				r.Content = append(r.Content, enc)
			default:
				return nil, fmt.Errorf("%s: a content block of type %T", call.Tool, block)
			}
		}
		out = append(out, e.normalize(r, dir))
	}
	return out, nil
}

// applySetup is ohtest.Setup.Apply for a goroutine of its own: its
// failure is returned.
func applySetup(s *ohtest.Setup, dir string) error {
	if s == nil {
		return nil
	}
	for file, content := range s.Files {
		p := filepath.Join(dir, file)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	if s.Sh != "" {
		cmd := exec.Command("bash", "-c", s.Sh)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("setup %q: %v\n%s", s.Sh, err, out)
		}
	}
	if s.SleepMs > 0 {
		time.Sleep(time.Duration(s.SleepMs) * time.Millisecond)
	}
	return nil
}
