//go:build unix

package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest/logbuf"
	"github.com/oh-bridge/oh-bridge/rpc"
)

// acpAgent is an `oh-bridge acp` process and a line client on its stdio.
type acpAgent struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	msgs   chan map[string]any
	stderr *logbuf.Buffer
	done   chan struct{}
}

// acpHome is a home and cache directory of the test's own, and where the
// agent's default log file is in it.
func acpHome(t *testing.T) (env []string, logPath string) {
	t.Helper()
	tmp := t.TempDir()
	home, cache := filepath.Join(tmp, "home"), filepath.Join(tmp, "cache")
	os.Mkdir(home, 0o755)
	logPath = filepath.Join(cache, "oh-bridge", "acp.log")
	if runtime.GOOS == "darwin" {
		logPath = filepath.Join(home, "Library", "Caches", "oh-bridge", "acp.log")
	}
	return []string{"HOME=" + home, "XDG_CACHE_HOME=" + cache}, logPath
}

// startACP runs `oh-bridge acp --config "" args...` with env added and no
// agent-server from the environment.
func startACP(t *testing.T, env []string, args ...string) *acpAgent {
	t.Helper()
	// No looking for a server on this machine: these tests are about the
	// bridge without one (acp_local_test.go is about finding one).
	cmd := exec.Command(bin, append([]string{"acp", "--config", "", "--find-server=false"}, args...)...)
	cmd.Env = append(os.Environ(), "OH_BRIDGE_SERVER_URL=", "LLM_MODEL=", "LLM_API_KEY=")
	cmd.Env = append(cmd.Env, env...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	a := &acpAgent{cmd: cmd, stdin: stdin, msgs: make(chan map[string]any, 100), stderr: &logbuf.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = a.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r := bufio.NewReader(stdout)
		for {
			line, err := r.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				var m map[string]any
				if json.Unmarshal(line, &m) != nil {
					m = map[string]any{"notJSON": string(line)}
				}
				a.msgs <- m
			}
			if err != nil {
				close(a.msgs)
				return
			}
		}
	}()
	go func() { cmd.Wait(); close(a.done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-a.done
		if t.Failed() {
			t.Logf("oh-bridge acp stderr:\n%s", a.stderr.String())
		}
	})
	return a
}

func (a *acpAgent) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(a.stdin, line+"\n"); err != nil {
		t.Fatalf("writing to oh-bridge acp: %v", err)
	}
}

// await returns the next message that satisfies want; the ones before it
// are returned too, in order.
func (a *acpAgent) await(t *testing.T, what string, want func(map[string]any) bool) (map[string]any, []map[string]any) {
	t.Helper()
	var skipped []map[string]any
	deadline := time.After(10 * time.Second)
	for {
		select {
		case m, ok := <-a.msgs:
			if !ok {
				t.Fatalf("oh-bridge acp closed its stdout before %s; it sent %v", what, skipped)
			}
			if want(m) {
				return m, skipped
			}
			skipped = append(skipped, m)
		case <-deadline:
			t.Fatalf("no %s within 10 s; got %v", what, skipped)
		}
	}
}

// call sends a request and returns its answer.
func (a *acpAgent) call(t *testing.T, id any, method string, params any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	a.send(t, string(b))
	want, _ := json.Marshal(id)
	m, _ := a.await(t, "the answer to "+method, func(m map[string]any) bool {
		got, _ := json.Marshal(m["id"])
		return m["method"] == nil && bytes.Equal(got, want)
	})
	return m
}

// end closes stdin, as an editor does, and returns the exit code.
func (a *acpAgent) end(t *testing.T) int {
	t.Helper()
	a.stdin.Close()
	select {
	case <-a.done:
		return a.cmd.ProcessState.ExitCode()
	case <-time.After(10 * time.Second):
		t.Fatal("oh-bridge acp did not exit within 10 s of its stdin closing")
		return -1
	}
}

var acpInitialize = map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}, "clientInfo": map[string]any{"name": "acp-log-test", "version": "1"}}

// badRequests sends what a confused client might: a line that is not
// JSON and a method that does not exist. Both are answered.
func badRequests(t *testing.T, a *acpAgent) {
	t.Helper()
	a.send(t, "{broken")
	a.await(t, "the parse error", func(m map[string]any) bool { return m["id"] == nil && m["error"] != nil })
	if m := a.call(t, 2, "no/such_method", nil); m["error"] == nil {
		t.Fatalf("no/such_method answered %v, want an error", m)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestACPQuietStderr: at the default level, an initialize and bad
// requests leave stderr empty (agent-shell shows every stderr line as an
// error) and the log, warning included, goes to the cache directory's
// acp.log; with the cache directory unwritable, stderr stays empty too.
func TestACPQuietStderr(t *testing.T) {
	t.Run("default log file", func(t *testing.T) {
		t.Parallel()
		env, logPath := acpHome(t)
		a := startACP(t, env)
		a.call(t, 1, "initialize", acpInitialize)
		badRequests(t, a)
		if code := a.end(t); code != 0 {
			t.Errorf("exit code %d, want 0", code)
		}
		if s := a.stderr.String(); s != "" {
			t.Errorf("stderr at the default level:\n%s\nwant nothing", s)
		}
		log := readFile(t, logPath)
		for _, want := range []string{`msg="serving ACP on stdio"`, `msg="ACP client"`, "name=acp-log-test", `level=WARN msg="answered an invalid message"`, fmt.Sprintf("pid=%d", a.cmd.Process.Pid)} {
			if !strings.Contains(log, want) {
				t.Errorf("%s lacks %q:\n%s", logPath, want, log)
			}
		}
		if strings.Contains(log, "level=DEBUG") {
			t.Errorf("%s has debug lines at the default level:\n%s", logPath, log)
		}
		if fi, err := os.Stat(logPath); err == nil && fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v; the log holds prompts, so only its owner may read it", logPath, fi.Mode())
		}
	})
	t.Run("unwritable cache directory", func(t *testing.T) {
		t.Parallel()
		env, _ := acpHome(t)
		// A file where the cache directory should be: nothing can be
		// created under it, on Linux or macOS.
		notDir := filepath.Join(t.TempDir(), "file")
		os.WriteFile(notDir, nil, 0o644)
		env = append(env, "XDG_CACHE_HOME="+notDir, "HOME="+notDir)
		a := startACP(t, env)
		if m := a.call(t, 1, "initialize", acpInitialize); m["result"] == nil {
			t.Fatalf("initialize answered %v", m)
		}
		badRequests(t, a)
		if code := a.end(t); code != 0 {
			t.Errorf("exit code %d, want 0", code)
		}
		if s := a.stderr.String(); s != "" {
			t.Errorf("stderr with no log file possible:\n%s\nwant nothing", s)
		}
	})
}

// TestACPLogFileFlag: --log-file PATH takes the log instead of the cache
// directory, --log-file - puts it on stderr, and a log file that cannot be
// opened is an error that names the fix.
func TestACPLogFileFlag(t *testing.T) {
	t.Parallel()
	env, defaultLog := acpHome(t)
	path := filepath.Join(t.TempDir(), "agent.log")
	a := startACP(t, env, "--log-file", path)
	a.call(t, 1, "initialize", acpInitialize)
	a.end(t)
	if log := readFile(t, path); !strings.Contains(log, `msg="serving ACP on stdio"`) {
		t.Errorf("--log-file %s has:\n%s", path, log)
	}
	if _, err := os.Stat(defaultLog); err == nil {
		t.Errorf("%s was written although --log-file was given", defaultLog)
	}

	a = startACP(t, env, "--log-file", "-")
	a.call(t, 1, "initialize", acpInitialize)
	a.end(t)
	if s := a.stderr.String(); !strings.Contains(s, `level=INFO msg="serving ACP on stdio"`) {
		t.Errorf("--log-file - wrote to stderr:\n%s", s)
	}

	out, err := exec.Command(bin, "acp", "--log-file", filepath.Join(t.TempDir(), "no", "such", "dir", "acp.log")).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "cannot open the log file") || !strings.Contains(string(out), "--log-file - for stderr") {
		t.Errorf("an unopenable --log-file: %v, output %q; want exit 2 naming the fix", err, out)
	}
}

// TestACPDebugLogsMessages: --log-level debug logs every message in both
// directions, with its method and id, and a message of 1 MB as one line
// of about 2 KiB.
func TestACPDebugLogsMessages(t *testing.T) {
	t.Parallel()
	env, _ := acpHome(t)
	path := filepath.Join(t.TempDir(), "agent.log")
	a := startACP(t, env, "--log-level", "debug", "--log-file", path)
	a.call(t, 1, "initialize", acpInitialize)
	big := strings.Repeat("é", 1<<19) // 1 MiB, in two-byte characters
	a.call(t, "big-1", "fs/big_write", map[string]any{"content": big})
	a.end(t)
	if s := a.stderr.String(); s != "" {
		t.Errorf("stderr at debug level with --log-file:\n%s\nwant nothing", s)
	}
	log := readFile(t, path)
	for _, want := range []string{
		`msg="ACP message" pid=%d component=wire dir=in kind=request method=initialize id=1 bytes=`,
		`msg="ACP message" pid=%d component=wire dir=out kind=result method=initialize id=1 bytes=`,
		`msg="ACP message" pid=%d component=wire dir=in kind=request method=fs/big_write id="\"big-1\"" bytes=`,
		`msg="ACP message" pid=%d component=wire dir=out kind=error method=fs/big_write id="\"big-1\"" bytes=`,
	} {
		if want = fmt.Sprintf(want, a.cmd.Process.Pid); !strings.Contains(log, want) {
			t.Errorf("the debug log lacks %q", want)
		}
	}
	for _, line := range strings.Split(log, "\n") {
		if len(line) > 8<<10 {
			t.Errorf("a log line of %d bytes (want the message clipped to 2 KiB): %.300s…", len(line), line)
		}
		if strings.Contains(line, "method=fs/big_write") && strings.Contains(line, "kind=request") && !strings.Contains(line, " more bytes)") {
			t.Errorf("the 1 MB message's line does not say it was clipped: %.300s…", line)
		}
	}
	if t.Failed() {
		t.Logf("log:\n%.6000s", log)
	}
}

// TestACPRotatesItsLog: a log file past 10 MiB becomes acp.log.1 and a
// new acp.log starts.
func TestACPRotatesItsLog(t *testing.T) {
	t.Parallel()
	env, logPath := acpHome(t)
	os.MkdirAll(filepath.Dir(logPath), 0o700)
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(10 << 20)
	f.Close()
	a := startACP(t, env)
	a.call(t, 1, "initialize", acpInitialize)
	a.end(t)
	if fi, err := os.Stat(logPath + ".1"); err != nil || fi.Size() < 10<<20 {
		t.Errorf("acp.log.1: %v, %v; want the full log moved there", fi, err)
	}
	if log := readFile(t, logPath); !strings.Contains(log, `msg="serving ACP on stdio"`) || len(log) > 1<<20 {
		t.Errorf("the new acp.log has %d bytes:\n%.2000s", len(log), log)
	}
}

// recordACPSession records a session with no agent-server, one of every
// kind the bridge answers alone: initialize, bad requests, authenticate,
// a session and a prompt in it (the answer that says how to configure a
// server), session/load and resume without a server, a prompt to an
// unknown session, a cancel, session/list and session/close.
func recordACPSession(t *testing.T, file string) {
	t.Helper()
	env, _ := acpHome(t)
	ws := t.TempDir()
	a := startACP(t, env, "--record", file)
	a.call(t, 1, "initialize", acpInitialize)
	badRequests(t, a)
	a.call(t, 3, "authenticate", map[string]any{"methodId": "none"})
	res := a.call(t, 4, "session/new", map[string]any{"cwd": ws, "mcpServers": []any{}})
	sid, _ := res["result"].(map[string]any)["sessionId"].(string)
	if sid == "" {
		t.Fatalf("session/new answered %v", res)
	}
	a.call(t, 5, "session/load", map[string]any{"sessionId": "elsewhere", "cwd": ws, "mcpServers": []any{}})
	prompt := map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "hello"}}}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 6, "method": "session/prompt", "params": prompt})
	a.send(t, string(b))
	a.await(t, "the session/update saying how to configure a server", func(m map[string]any) bool { return m["method"] == "session/update" })
	a.await(t, "the prompt's answer", func(m map[string]any) bool { return m["id"] == 6.0 })
	a.call(t, 7, "session/prompt", map[string]any{"sessionId": "unconfigured-0000", "prompt": []any{map[string]any{"type": "text", "text": "hello"}}})
	a.send(t, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"`+sid+`"}}`)
	a.call(t, 8, "session/list", map[string]any{"cwd": ws})
	a.call(t, 9, "session/resume", map[string]any{"sessionId": "elsewhere", "cwd": ws, "mcpServers": []any{}})
	if m := a.call(t, 10, "session/close", map[string]any{"sessionId": sid}); m["result"] == nil {
		t.Fatalf("session/close answered %v", m)
	}
	if code := a.end(t); code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
}

// TestACPRecordReplay: `oh-bridge acp --record` writes the editor face's
// JSONL format under a header that says the framing, and `oh-bridge
// replay` replays it against a fresh agent: it matches, it notices a
// change, and --update leaves a current recording as it was.
func TestACPRecordReplay(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "acp.jsonl")
	recordACPSession(t, file)
	f, _ := os.Open(file)
	header, records, err := rpc.ReadRecording(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if header == nil || header.Framing != rpc.FramingLines || header.Command != "oh-bridge acp" {
		t.Fatalf("the recording's header is %+v, want lines framing and the command", header)
	}
	var got []string
	for _, r := range records {
		var m struct{ Method string }
		json.Unmarshal(r.Msg, &m)
		got = append(got, r.Dir+":"+m.Method)
	}
	for _, want := range []string{"in:initialize", "in:", "in:no/such_method", "in:session/new", "out:session/update", "in:session/cancel", "in:session/close"} {
		if !strings.Contains(" "+strings.Join(got, " ")+" ", " "+want+" ") {
			t.Errorf("the recording lacks %s: %v", want, got)
		}
	}

	out, err := exec.Command(bin, "replay", file).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("replay matches")) {
		t.Fatalf("replay of the ACP recording (%v):\n%s", err, out)
	}

	src := []byte(readFile(t, file))
	tampered := filepath.Join(t.TempDir(), "tampered.jsonl")
	os.WriteFile(tampered, bytes.Replace(src, []byte(`"title":"OpenHands (oh-bridge)"`), []byte(`"title":"Someone else"`), 1), 0o644)
	out, err = exec.Command(bin, "replay", tampered).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !bytes.Contains(out, []byte(`+       "title": "OpenHands (oh-bridge)"`)) {
		t.Errorf("replay of a tampered ACP recording: %v, want exit 1 with the difference\n%s", err, out)
	}

	updated := filepath.Join(t.TempDir(), "updated.jsonl")
	os.WriteFile(updated, src, 0o644)
	if out, err := exec.Command(bin, "replay", "--update", updated).CombinedOutput(); err != nil {
		t.Fatalf("replay --update: %v\n%s", err, out)
	}
	if now := readFile(t, updated); now != string(src) {
		t.Errorf("replay --update changed a current recording (the session id and paths must go back to the recorded ones):\n--- recorded\n%s\n--- updated\n%s", src, now)
	}
}

// TestACPReplayRefusesConversations: a recording in which the client
// asked an agent-server something (session/new here) cannot be replayed
// (the model's turns and the server's ids are not the bridge's), and
// replay says so; one made with a server but only initialize and errors
// replays.
func TestACPReplayRefusesConversations(t *testing.T) {
	t.Parallel()
	env, _ := acpHome(t)
	withSession := filepath.Join(t.TempDir(), "server.jsonl")
	// Port 1: nothing listens, so session/new fails at once.
	a := startACP(t, env, "--server", "http://127.0.0.1:1", "--record", withSession)
	a.call(t, 1, "initialize", acpInitialize)
	a.call(t, 2, "session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})
	a.end(t)
	out, err := exec.Command(bin, "replay", withSession).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !bytes.Contains(out, []byte("asked the OpenHands agent-server (session/new)")) {
		t.Errorf("replay of a session on a server: %v, want exit 2 saying why\n%s", err, out)
	}

	initOnly := filepath.Join(t.TempDir(), "init.jsonl")
	a = startACP(t, env, "--server", "http://127.0.0.1:1", "--record", initOnly)
	a.call(t, 1, "initialize", acpInitialize)
	badRequests(t, a)
	a.end(t)
	if out, err := exec.Command(bin, "replay", initOnly).CombinedOutput(); err != nil || !bytes.Contains(out, []byte("replay matches")) {
		t.Errorf("replay of initialize with a server configured (%v):\n%s", err, out)
	}

	// With none configured, a session makes the bridge look on this
	// machine: what it found there is not the replay's.
	looked := filepath.Join(t.TempDir(), "looked.jsonl")
	a = startACP(t, env, "--find-server=true", "--record", looked)
	a.call(t, 1, "initialize", acpInitialize)
	a.call(t, 2, "session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})
	a.end(t)
	out, err = exec.Command(bin, "replay", looked).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !bytes.Contains(out, []byte("looked for an OpenHands agent-server on the recording machine (session/new")) ||
		!bytes.Contains(out, []byte("--find-server=false")) {
		t.Errorf("replay of a session that looked for a server: %v, want exit 2 saying why\n%s", err, out)
	}
}
