// Package rogue runs, for tests, a server of another user on a local
// port: a process of uid 65534 (nobody) that answers every request as an
// OpenHands agent-server would answer a probe (/server_info with a
// version, an empty conversation listing, 200 to the rest), and reports
// each request it received, headers and body, so that a test can check
// that nothing, and no key or token, reached it. It needs root (setpriv
// drops to nobody); Start skips the test elsewhere, and fails it under
// CI=true.
package rogue

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// UID is the rogue's user: nobody.
const UID = 65534

// Request is one request the rogue received.
type Request struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

// Rogue is the running server.
type Rogue struct {
	Port int
	PID  int

	mu   sync.Mutex
	reqs []Request
	got  chan struct{} // a request was added
	cmd  *exec.Cmd
}

// The server, given to python3 -c: the script must not be a file under a
// test's private temp directory, which nobody cannot read.
const script = `
import http.server, json, sys
version = sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def handle_one(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n).decode("utf-8", "replace") if n else ""
        print(json.dumps({"method": self.command, "path": self.path,
                          "headers": {k: v for k, v in self.headers.items()}, "body": body}), flush=True)
        if self.path.startswith("/server_info"):
            out = {"title": "OpenHands Agent Server", "version": version, "sdk_version": version, "uptime": 1.0}
        elif self.path.startswith("/api/conversations/search"):
            out = {"items": [], "next_page_id": None}
        elif self.path.startswith("/api/conversations") and self.command == "POST":
            out = {"id": "c0ffee00-0000-4000-8000-000000000000", "execution_status": "idle", "agent": {}, "workspace": {}}
        else:
            out = {}
        data = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = handle_one
    def log_message(self, *a): pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H)
print("LISTENING %d" % srv.server_address[1], flush=True)
srv.serve_forever()
`

// RunPython runs python code as uid 65534 and returns what it printed
// (stdout and stderr) and its exit code: another user's client.
func RunPython(t testing.TB, code string, args ...string) (string, int) {
	t.Helper()
	setpriv, py := tools(t)
	cmd := exec.Command(setpriv, append([]string{"--reuid=" + strconv.Itoa(UID), "--regid=" + strconv.Itoa(UID), "--clear-groups", py, "-I", "-c", code}, args...)...)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent"}
	out, _ := cmd.CombinedOutput()
	return string(out), cmd.ProcessState.ExitCode()
}

func tools(t testing.TB) (setpriv, python string) {
	t.Helper()
	if os.Getuid() != 0 {
		skip(t, "a process of another user needs root here (setpriv drops to uid 65534); run the test as root")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		skip(t, "setpriv (util-linux) is not installed: apt-get install util-linux")
	}
	python = "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		skip(t, "/usr/bin/python3 is not installed: apt-get install python3")
	}
	return setpriv, python
}

// Start runs the rogue on 127.0.0.1:port (0: a free one) as uid 65534,
// answering as agent-server version; it ends with the test.
func Start(t testing.TB, port int, version string) *Rogue {
	t.Helper()
	setpriv, py := tools(t)
	cmd := exec.Command(setpriv, "--reuid="+strconv.Itoa(UID), "--regid="+strconv.Itoa(UID), "--clear-groups",
		py, "-I", "-c", script, strconv.Itoa(port), version)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent"}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &Rogue{PID: cmd.Process.Pid, cmd: cmd, got: make(chan struct{}, 1)}
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { cmd.Process.Kill(); cmd.Wait() }) })
	lines := bufio.NewScanner(out)
	lines.Buffer(nil, 64<<20)
	ready := make(chan int, 1)
	go func() {
		for lines.Scan() {
			l := lines.Text()
			if p, ok := strings.CutPrefix(l, "LISTENING "); ok {
				n, _ := strconv.Atoi(p)
				ready <- n
				continue
			}
			var req Request
			if json.Unmarshal([]byte(l), &req) == nil {
				r.mu.Lock()
				r.reqs = append(r.reqs, req)
				r.mu.Unlock()
				select {
				case r.got <- struct{}{}:
				default:
				}
			}
		}
		close(ready)
		io.Copy(io.Discard, out)
	}()
	select {
	case p, ok := <-ready:
		if !ok {
			cmd.Wait()
			t.Fatalf("the rogue server did not start on port %d: %s", port, stderr.String())
		}
		r.Port = p
	case <-time.After(30 * time.Second):
		t.Fatalf("the rogue server did not start within 30 s: %s", stderr.String())
	}
	return r
}

// Stop ends the rogue: its port is free again.
func (r *Rogue) Stop() {
	r.cmd.Process.Kill()
	r.cmd.Wait()
}

// URL is the rogue's base URL.
func (r *Rogue) URL() string { return fmt.Sprintf("http://127.0.0.1:%d", r.Port) }

// Requests are the requests received so far.
func (r *Rogue) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.reqs...)
}

// CheckNothingReceived fails the test if any request reached the rogue,
// naming each and every secret among secrets found in one.
func (r *Rogue) CheckNothingReceived(t testing.TB, secrets ...string) {
	t.Helper()
	for _, req := range r.sync(t) {
		raw, _ := json.Marshal(req)
		t.Errorf("the server of another user received %s %s", req.Method, req.Path)
		for _, s := range secrets {
			if s != "" && strings.Contains(string(raw), s) {
				t.Errorf("… and with it the secret %q", s)
			}
		}
	}
}

// Await waits for a request that ok accepts, and returns it.
func (r *Rogue) Await(t testing.TB, what string, ok func(Request) bool) Request {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		r.mu.Lock()
		for _, req := range r.reqs {
			if ok(req) {
				r.mu.Unlock()
				return req
			}
		}
		r.mu.Unlock()
		select {
		case <-r.got:
		case <-deadline:
			t.Fatalf("the rogue server did not receive %s within 30 s", what)
		}
	}
}

// sync returns the requests received before a request of the test's own,
// which the rogue prints after every one it printed before: a request
// the code under test made, and had its answer to, is among them.
func (r *Rogue) sync(t testing.TB) []Request {
	t.Helper()
	resp, err := http.Get(r.URL() + syncPath)
	if err != nil {
		t.Fatalf("the rogue server does not answer: %v", err)
	}
	resp.Body.Close()
	deadline := time.After(30 * time.Second)
	for {
		r.mu.Lock()
		for i, req := range r.reqs {
			if req.Path == syncPath {
				out := append([]Request(nil), r.reqs[:i]...)
				r.reqs = append(r.reqs[:i:i], r.reqs[i+1:]...)
				r.mu.Unlock()
				return out
			}
		}
		r.mu.Unlock()
		select {
		case <-r.got:
		case <-deadline:
			t.Fatal("the rogue server did not report the test's own request within 30 s")
		}
	}
}

const syncPath = "/__rogue_sync"

func skip(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(why)
	}
	t.Skip(why)
}
