//go:build linux

package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
	"github.com/oh-bridge/oh-bridge/internal/ohtest/logbuf"
)

// Edits an ACP client carries out (fs/write_text_file), with what an
// agent's terminal command can plant in its workspace. The client here
// writes by path in place, as VS Code's fs.writeFile does (os.WriteFile:
// open with O_TRUNC, following links, and write the inode), and reads by
// path.

// byPathClient is an ACP client over the real binary's stdio: it answers
// the bridge's fs/* and session/request_permission requests itself.
type byPathClient struct {
	*acpLines
	t  *testing.T
	mu sync.Mutex // guards permissions and writes
	// permissions are the titles of the questions asked, in order.
	permissions []string
	writes      []string // the paths fs/write_text_file named
	// onWrite, when set, runs after each write the client does, with
	// the path and the content.
	onWrite func(path, content string)
	answer  string // the permission option chosen
}

// startByPathClient runs `oh-bridge acp` against the agent-server at url
// and initializes it with fs on.
func startByPathClient(t *testing.T, url, logFile string) *byPathClient {
	t.Helper()
	env, _ := acpHome(t)
	cmd := exec.Command(bin, "acp", "--config", "", "--log-file", logFile)
	cmd.Env = append(os.Environ(), "OH_BRIDGE_SERVER_URL="+url, "LLM_MODEL=stand-in/scripted", "LLM_API_KEY=k")
	cmd.Env = append(cmd.Env, env...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	stderr := &logbuf.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &byPathClient{acpLines: newACPLines(stdin), t: t, answer: "allow_once"}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	go c.read(stdout, c.handle)
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("oh-bridge acp stderr:\n%s", stderr.String())
		}
	})
	c.call("initialize", map[string]any{"protocolVersion": 1,
		"clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}, "terminal": false},
		"clientInfo":         map[string]any{"name": "by-path-client", "version": "1"}}, 10*time.Second)
	return c
}

// call sends a request and waits for its answer's result.
func (c *byPathClient) call(method string, params any, limit time.Duration) map[string]any {
	c.t.Helper()
	select {
	case m := <-c.request(method, params):
		if m["error"] != nil {
			c.t.Fatalf("%s: %v", method, m["error"])
		}
		res, _ := m["result"].(map[string]any)
		return res
	case <-time.After(limit):
		c.t.Fatalf("%s: no answer within %v", method, limit)
		return nil
	}
}

// handle answers the bridge's requests, in order.
func (c *byPathClient) handle(m map[string]any) {
	method, _ := m["method"].(string)
	if m["id"] == nil {
		return // session/update: the test reads the stand-in's results instead
	}
	params, _ := m["params"].(map[string]any)
	path, _ := params["path"].(string)
	reply := map[string]any{"jsonrpc": "2.0", "id": m["id"]}
	switch method {
	case "fs/read_text_file":
		data, err := os.ReadFile(path)
		if err != nil {
			reply["error"] = map[string]any{"code": -32603, "message": err.Error()}
		} else {
			reply["result"] = map[string]any{"content": string(data)}
		}
	case "fs/write_text_file":
		content, _ := params["content"].(string)
		c.mu.Lock()
		c.writes = append(c.writes, path)
		c.mu.Unlock()
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			reply["error"] = map[string]any{"code": -32603, "message": err.Error()}
		} else {
			reply["result"] = map[string]any{}
		}
		if c.onWrite != nil {
			c.onWrite(path, content)
		}
	case "session/request_permission":
		tc, _ := params["toolCall"].(map[string]any)
		title, _ := tc["title"].(string)
		c.mu.Lock()
		c.permissions = append(c.permissions, title)
		c.mu.Unlock()
		reply["result"] = map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": c.answer}}
	default:
		reply["error"] = map[string]any{"code": -32601, "message": "not served by this client"}
	}
	c.send(reply)
}

// prompt opens a session over ws and runs one prompt to its end.
func (c *byPathClient) prompt(ws string, limit time.Duration) {
	c.t.Helper()
	s := c.call("session/new", map[string]any{"cwd": ws, "mcpServers": []any{}}, 30*time.Second)
	c.call("session/prompt", map[string]any{"sessionId": s["sessionId"], "prompt": []any{map[string]any{"type": "text", "text": "Go."}}}, limit)
}

// toolResult is the stand-in's TOOL_RESULT line: what the agent got.
type toolResult struct {
	Tool    string `json:"tool"`
	IsError bool   `json:"is_error"`
	Text    string `json:"text"`
}

func awaitResult(t *testing.T, p *agentservertest.Peer) toolResult {
	t.Helper()
	var r toolResult
	json.Unmarshal([]byte(p.AwaitLine(t, "TOOL_RESULT ")), &r)
	return r
}

// hostileACP is a workspace ws beside a directory outside it, and a
// stand-in that plays the steps for ws as one turn, then says "Done.".
func hostileACP(t *testing.T, steps func(ws string) []map[string]any) (ws, outside string, p *agentservertest.Peer) {
	t.Helper()
	tmp := t.TempDir()
	ws, outside = filepath.Join(tmp, "ws"), filepath.Join(tmp, "outside")
	os.Mkdir(ws, 0o755)
	os.Mkdir(outside, 0o755)
	script, _ := json.Marshal(map[string]any{"turns": [][]map[string]any{steps(ws), {{"message": "Done."}}}})
	scriptFile := filepath.Join(tmp, "script.json")
	os.WriteFile(scriptFile, script, 0o644)
	// The stand-in, for speed: a fresh scripted agent for each hostile
	// workspace; the fault is the workspace's (links, races), and its
	// events are held to the real server's by agentserver's
	// TestStandInKeepsToTheRealServer.
	return ws, outside, agentservertest.Start(t, "--script", scriptFile)
}

// TestACPEditOfHardLink: the agent links a file from outside the
// workspace into it from its terminal, then edits it. The client, which
// writes in place, is never asked to write it; the agent is told why in
// OpenHands' words; the outside file keeps its text; the log says so.
func TestACPEditOfHardLink(t *testing.T) {
	ws, outside, p := hostileACP(t, func(ws string) []map[string]any {
		return []map[string]any{
			{"tool": "terminal", "arguments": map[string]any{"command": "ln ../outside/hl.txt hl.txt"}},
			{"tool": "file_editor", "arguments": map[string]any{"command": "str_replace", "path": filepath.Join(ws, "hl.txt"), "old_str": "secret", "new_str": "pwned"}},
		}
	})
	hl := filepath.Join(ws, "hl.txt")
	os.WriteFile(filepath.Join(outside, "hl.txt"), []byte("secret\n"), 0o644)
	logFile := filepath.Join(t.TempDir(), "acp.log")
	c := startByPathClient(t, p.URL, logFile)
	c.prompt(ws, 60*time.Second)

	if r := awaitResult(t, p); r.IsError {
		t.Fatalf("the agent's ln failed: %s", r.Text)
	}
	r := awaitResult(t, p)
	if !r.IsError || !strings.HasPrefix(r.Text, "Ran into a file with 2 hard links: writing "+hl) || !strings.Contains(r.Text, "nothing was written") ||
		!strings.HasSuffix(r.Text, "while trying to write to "+hl) {
		t.Errorf("the edit's result: %+v\nwant OpenHands' \"Ran into … while trying to write to %s\" naming the links", r, hl)
	}
	if got := readFile(t, filepath.Join(outside, "hl.txt")); got != "secret\n" {
		t.Errorf("the outside file holds %q; the edit went through the link", got)
	}
	c.mu.Lock()
	writes := c.writes
	c.mu.Unlock()
	if len(writes) != 0 {
		t.Errorf("the client was asked to write %v", writes)
	}
	if log := readFile(t, logFile); !strings.Contains(log, `msg="refused a write through the editor"`) || !strings.Contains(log, "hard links") {
		t.Errorf("the log does not say the write was refused:\n%s", log)
	}
}

// TestACPPermissionNamesRealFile: the agent makes a symlink to another
// file of the workspace and edits through it. The question names both
// the path the agent gave and the file that changes.
func TestACPPermissionNamesRealFile(t *testing.T) {
	ws, _, p := hostileACP(t, func(ws string) []map[string]any {
		return []map[string]any{
			{"tool": "terminal", "arguments": map[string]any{"command": "printf 'one\\n' > real.txt && ln -s real.txt alias.txt"}},
			{"tool": "file_editor", "arguments": map[string]any{"command": "str_replace", "path": filepath.Join(ws, "alias.txt"), "old_str": "one", "new_str": "two"}},
		}
	})
	alias, real := filepath.Join(ws, "alias.txt"), filepath.Join(ws, "real.txt")
	c := startByPathClient(t, p.URL, filepath.Join(t.TempDir(), "acp.log"))
	c.prompt(ws, 60*time.Second)
	awaitResult(t, p)
	if r := awaitResult(t, p); r.IsError {
		t.Errorf("the edit through the link failed: %s", r.Text)
	}
	c.mu.Lock()
	questions := c.permissions
	c.mu.Unlock()
	var edit string
	for _, q := range questions {
		if strings.Contains(q, alias) {
			edit = q
		}
	}
	if !strings.Contains(edit, alias+" leads to "+real+": that is the file this changes") {
		t.Errorf("the edit's question is %q (all: %q); want it to name %s and %s", edit, questions, alias, real)
	}
	if got := readFile(t, real); got != "two\n" {
		t.Errorf("real.txt holds %q", got)
	}
}

// TestACPWriteSwapRace measures the race that remains with a client that
// writes by path: while the agent's edits go through the client, a loop
// swaps the file with a symlink to a file outside (renameat2 with
// RENAME_EXCHANGE, as fast as it can). It counts the client's writes that
// landed outside and checks that the agent was told of each one.
// OH_BRIDGE_SWAP_WRITES sets the number of edits (default 150);
// docs/safety.md has the figures of a long run.
func TestACPWriteSwapRace(t *testing.T) {
	n := 150
	if s := os.Getenv("OH_BRIDGE_SWAP_WRITES"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	ws, outside, p := hostileACP(t, func(ws string) []map[string]any {
		steps := make([]map[string]any, n)
		for k := range steps {
			steps[k] = map[string]any{"tool": "file_editor", "arguments": map[string]any{"command": "insert", "path": filepath.Join(ws, "f.txt"), "insert_line": 0, "new_str": fmt.Sprintf("w-%d", k)}}
		}
		return steps
	})
	f := filepath.Join(ws, "f.txt")
	out := filepath.Join(outside, "f.txt")
	os.WriteFile(f, []byte("inside\n"), 0o644)
	os.WriteFile(out, []byte("outside\n"), 0o644)
	if err := os.Symlink("../outside/f.txt", filepath.Join(ws, "f.swap")); err != nil {
		t.Fatal(err)
	}

	c := startByPathClient(t, p.URL, filepath.Join(t.TempDir(), "acp.log"))
	c.answer = "allow_always"
	var landed []int // the edits whose write landed outside
	// Each edit's text is its own (its line w-k on top), so the outside
	// file holding it says the client's write went there. It is left as
	// it is: a client reading back through the same link finds it.
	c.onWrite = func(path, content string) {
		if data, _ := os.ReadFile(out); string(data) == content {
			k, _ := strconv.Atoi(strings.TrimPrefix(strings.SplitN(content, "\n", 2)[0], "w-"))
			landed = append(landed, k)
		}
	}
	var swaps atomic.Int64
	stop := make(chan struct{})
	swapped := make(chan struct{})
	go func() {
		defer close(swapped)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if unix.Renameat2(unix.AT_FDCWD, f, unix.AT_FDCWD, filepath.Join(ws, "f.swap"), unix.RENAME_EXCHANGE) == nil {
				swaps.Add(1)
			}
		}
	}()
	start := time.Now()
	c.prompt(ws, time.Duration(n)*time.Second)
	close(stop)
	<-swapped
	elapsed := time.Since(start)

	results := make([]toolResult, n)
	kinds := map[string]int{}
	for k := range results {
		results[k] = awaitResult(t, p)
		kinds[resultKind(results[k])]++
	}
	unreported := 0
	for _, k := range landed {
		if !strings.Contains(results[k].Text, "an unconfirmed write") {
			unreported++
			t.Errorf("edit %d landed outside, and the agent was told %q", k, results[k].Text)
		}
	}
	t.Logf("%d edits in %v, %d swaps, %d writes asked of the client: %d landed outside (1 in %.0f swaps, 1 in %.0f writes), %d of them not reported; results: %v",
		n, elapsed.Round(time.Millisecond), swaps.Load(), len(c.writes), len(landed), ratio(swaps.Load(), len(landed)), ratio(int64(len(c.writes)), len(landed)), unreported, kinds)
}

func ratio(a int64, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// resultKind sorts a result for the log line.
func resultKind(r toolResult) string {
	switch {
	case !r.IsError:
		return "ok"
	case strings.Contains(r.Text, "an unconfirmed write"):
		return "unconfirmed"
	case strings.Contains(r.Text, "outside the workspace"):
		return "outside"
	case strings.Contains(r.Text, "symbolic link"):
		return "symlink"
	case strings.Contains(r.Text, "changed since"):
		return "stale"
	}
	return "other: " + r.Text[:min(len(r.Text), 80)]
}
