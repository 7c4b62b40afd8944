package ohactions

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oh-bridge/oh-bridge/pytext"
)

// pythonDriver is a small REPL: it reads one JSON request per line on
// stdin ({"code", "cwd"}) and answers one JSON line on fd 3 ({"text"}).
// With IPython installed it runs cells in an InteractiveShell (magics, !cmd,
// IPython tracebacks without colours, the last expression's repr without
// the Out[n] prompt), otherwise with plain exec/eval. Cell output is what
// the cell writes to sys.stdout and sys.stderr.
const pythonDriver = `import io, json, os, signal, sys
_out = os.fdopen(3, "w")
_real_stdout, _real_stderr = sys.stdout, sys.stderr
try:
    from IPython.core.interactiveshell import InteractiveShell
    _shell = InteractiveShell.instance(colors="NoColor")
    _shell.displayhook.write_output_prompt = lambda: None
    _kind = "ipython"
except Exception:
    _shell = None
    _kind = "python"
_ns = {"__name__": "__main__"}
def _run(code):
    if _shell is not None:
        _shell.run_cell(code, store_history=True)
        return
    import ast, traceback
    try:
        tree = ast.parse(code, "<cell>", "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, "<cell>", "exec"), _ns)
        if last is not None:
            v = eval(compile(last, "<cell>", "eval"), _ns)
            if v is not None:
                print(repr(v))
    except BaseException:
        traceback.print_exc(file=sys.stdout)
_out.write(json.dumps({"ready": _kind, "executable": sys.executable}) + "\n")
_out.flush()
for line in sys.stdin:
    req = json.loads(line)
    if req.get("cwd"):
        try:
            os.chdir(req["cwd"])
        except OSError:
            pass
    buf = io.StringIO()
    sys.stdout = sys.stderr = buf
    try:
        _run(req["code"])
    except BaseException as e:
        buf.write(repr(e))
    finally:
        sys.stdout, sys.stderr = _real_stdout, _real_stderr
    _out.write(json.dumps({"text": buf.getvalue()}) + "\n")
    _out.flush()
`

// pythonSession is the run_ipython kernel: one python3 process.
type pythonSession struct {
	cmd        *exec.Cmd
	stdin      *os.File
	replies    *bufio.Reader
	replyFile  *os.File
	executable string
	cwd        string // the bash cwd last sent (OpenHands' _jupyter_cwd)
	dead       atomic.Bool
	once       sync.Once
}

func startPython(interpreter, dir string) (*pythonSession, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	ir, iw, err := os.Pipe()
	if err != nil {
		pr.Close()
		pw.Close()
		return nil, err
	}
	cmd := exec.Command(interpreter, "-u", "-c", pythonDriver)
	cmd.Dir = dir
	cmd.Stdin = ir
	cmd.ExtraFiles = []*os.File{pw}
	ownProcessGroup(cmd)
	cmd.Env = append(os.Environ(), "PYTHONUNBUFFERED=1", "PAGER=cat", "TERM=dumb")
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		ir.Close()
		iw.Close()
		return nil, err
	}
	pw.Close()
	ir.Close()
	p := &pythonSession{cmd: cmd, stdin: iw, replies: bufio.NewReaderSize(pr, 1<<16), replyFile: pr}
	type ready struct {
		Ready      string `json:"ready"`
		Executable string `json:"executable"`
	}
	lineC := make(chan string, 1)
	go func() {
		l, _ := p.replies.ReadString('\n')
		lineC <- l
	}()
	select {
	case l := <-lineC:
		var rd ready
		if json.Unmarshal([]byte(l), &rd) != nil || rd.Ready == "" {
			p.close()
			return nil, fmt.Errorf("python session did not start (%s)", strings.TrimSpace(l))
		}
		p.executable = rd.Executable
	case <-time.After(30 * time.Second):
		p.close()
		return nil, fmt.Errorf("python session did not start within 30s")
	}
	return p, nil
}

func (p *pythonSession) close() {
	p.once.Do(func() {
		p.dead.Store(true)
		p.stdin.Close()
		killGroup(p.cmd.Process)
		p.cmd.Wait()
		p.replyFile.Close()
	})
}

// runIPython is action_execution_server's run_ipython with the Jupyter
// plugin's formatting.
func (r *Runtime) runIPython(ctx context.Context, a *Action) (*Observation, error) {
	code, err := a.str("code", "")
	if err != nil {
		return nil, err
	}
	includeExtra := true
	if raw, ok := a.Args["include_extra"]; ok && !isNull(raw) {
		if includeExtra, err = a.boolean("include_extra"); err != nil {
			return nil, err
		}
	}
	r.pyMu.Lock()
	py := r.py
	r.pyMu.Unlock()
	if py == nil || py.dead.Load() {
		interp, err := lookPython(r.opts.Python)
		if err != nil {
			return errorObservation("Python is not available in this runtime (no python3 on PATH), so IPython cells cannot run. " +
				"Use the `run` action instead."), nil
		}
		py, err = startPython(interp, r.cwd())
		if err != nil {
			return errorObservation("The Python session could not be started: " + err.Error()), nil
		}
		r.pyMu.Lock()
		r.py = py
		closed := r.isClosed()
		r.pyMu.Unlock()
		if closed {
			py.close()
			return nil, errClosed
		}
	}
	req := map[string]string{"code": code}
	if cwd := r.cwd(); cwd != py.cwd {
		req["cwd"] = cwd
		py.cwd = cwd
	}
	line, _ := json.Marshal(req)
	if _, err := py.stdin.Write(append(line, '\n')); err != nil {
		py.close()
		return errorObservation("The Python session ended: " + err.Error()), nil
	}
	type reply struct {
		text string
		err  error
	}
	replyC := make(chan reply, 1)
	go func() {
		l, err := py.replies.ReadString('\n')
		var rep struct {
			Text string `json:"text"`
		}
		if err == nil {
			err = json.Unmarshal([]byte(l), &rep)
		}
		replyC <- reply{rep.Text, err}
	}()
	var timeoutC <-chan time.Time
	if a.Timeout != nil && *a.Timeout > 0 {
		t := time.NewTimer(time.Duration(*a.Timeout * float64(time.Second)))
		defer t.Stop()
		timeoutC = t.C
	}
	var text string
	select {
	case rep := <-replyC:
		if rep.err != nil {
			py.close()
			return errorObservation("The Python session ended: " + rep.err.Error()), nil
		}
		text = rep.text
	case <-timeoutC:
		// The Jupyter plugin interrupts the kernel and reports the timeout.
		interruptProcess(py.cmd.Process)
		select {
		case <-replyC:
		case <-time.After(5 * time.Second):
			py.close()
		}
		text = "[Execution timed out (" + pytext.Float(*a.Timeout) + " seconds).]"
	case <-ctx.Done():
		interruptProcess(py.cmd.Process)
		select {
		case <-replyC:
		case <-time.After(5 * time.Second):
			py.close()
		}
		return nil, ctx.Err()
	}
	if text == "" {
		text = "[Code executed successfully with no output]"
	}
	text = pytext.RStrip(stripSGR(text))
	if includeExtra {
		text += "\n[Jupyter current working directory: " + r.cwd() + "]"
		text += "\n[Jupyter Python interpreter: " + filepath.Clean(py.executable) + "]"
	}
	return ipythonObservation(code, text), nil
}

// stripSGR is the Jupyter plugin's strip_ansi: colour sequences only.
func stripSGR(s string) string {
	if !strings.Contains(s, "\x1b[") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "\x1b[") {
			j := i + 2
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';') {
				j++
			}
			if j < len(s) && s[j] == 'm' && j > i+2 {
				i = j + 1
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}
