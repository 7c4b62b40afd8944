package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/oh-bridge/oh-bridge/rpc"
)

// replayMain replays recorded sessions against fresh bridges (copies of this
// executable) and exits 1 if any differs.
func replayMain(args []string) int {
	fs := flag.NewFlagSet("oh-bridge replay", flag.ContinueOnError)
	workspace := fs.String("workspace", "", "copy this directory into a temp workspace for the replay")
	verbose := fs.Bool("v", false, "print the session as it is replayed")
	update := fs.Bool("update", false, "rewrite each FILE with what the bridge sends now (review the diff)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: oh-bridge replay [-v] [--update] [--workspace DIR] FILE...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	failed := false
	for _, file := range fs.Args() {
		ws := *workspace
		if ws == "" {
			// A directory NAME.workspace beside NAME.jsonl is its workspace.
			if fi, err := os.Stat(strings.TrimSuffix(file, ".jsonl") + ".workspace"); err == nil && fi.IsDir() {
				ws = strings.TrimSuffix(file, ".jsonl") + ".workspace"
			}
		}
		ok, err := replayFile(file, ws, *verbose, *update)
		if err != nil {
			fmt.Fprintf(os.Stderr, "replay %s: %v\n", file, err)
			return 2
		}
		failed = failed || !ok
	}
	if failed {
		return 1
	}
	return 0
}

func replayFile(file, workspace string, verbose, update bool) (bool, error) {
	f, err := os.Open(file)
	if err != nil {
		return false, err
	}
	header, records, err := rpc.ReadRecording(f)
	f.Close()
	if err != nil {
		return false, err
	}

	// Which face recorded decides what runs and how it is spoken to.
	args, env, framing := []string{"--stdio", "--log-level", "debug"}, []string(nil), rpc.FramingContentLength
	var acpRun *acpReplay
	if header != nil {
		framing = header.Framing
		switch header.Command {
		case "", "oh-bridge":
		case acpCommand:
			if acpRun, err = newACPReplay(header, records); err != nil {
				return false, err
			}
			defer acpRun.close()
			args, env = acpRun.args, acpRun.env
		default:
			return false, fmt.Errorf("recorded by %q, which replay cannot run (it runs oh-bridge and %s); was the recording made by a newer oh-bridge?", header.Command, acpCommand)
		}
	}

	tmp, err := os.MkdirTemp("", "oh-bridge-replay-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)
	root, _ := filepath.EvalSymlinks(tmp)
	if workspace != "" {
		if err := os.CopyFS(root, os.DirFS(workspace)); err != nil {
			return false, fmt.Errorf("cannot copy the workspace %s: %w", workspace, err)
		}
	}

	self, err := os.Executable()
	if err != nil {
		return false, err
	}
	cmd := exec.Command(self, args...)
	cmd.Dir = root
	cmd.Env = env
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return false, err
	}

	recordedRoot := recordedRoot(records)
	subs := &substitutions{}
	opts := rpc.ReplayOptions{
		Expected: &rpc.Normalizer{Keys: rpc.DefaultVolatileKeys, Paths: map[string]string{}, TempDir: os.TempDir()},
		Actual:   &rpc.Normalizer{Keys: rpc.DefaultVolatileKeys, Paths: map[string]string{root: "$WORKSPACE"}, TempDir: os.TempDir()},
		Skip:     func(m string) bool { return m == "$/logTrace" || m == "window/logMessage" },
		Framing:  framing,
		Rewrite:  subs.toLive,
	}
	if recordedRoot != "" {
		opts.Expected.Paths[recordedRoot] = "$WORKSPACE"
		subs.add(recordedRoot, root)
	}
	if acpRun != nil {
		acpRun.configure(&opts, subs)
	}
	if verbose {
		fmt.Printf("== replaying %s (%d messages) in %s\n", file, len(records), root)
		opts.Transcript = os.Stdout
	}
	res, err := rpc.Replay(records, pipeConn{stdout, stdin}, opts)
	waitErr := cmd.Wait()
	if err != nil {
		return false, err
	}
	if update {
		if err := writeUpdated(file, header, res.Updated, subs); err != nil {
			return false, err
		}
		fmt.Printf("%s: rewritten with %d messages\n", file, len(res.Updated))
		return true, nil
	}
	if len(res.Mismatches) > 0 {
		fmt.Printf("%s: ", file)
		res.Report(os.Stdout)
		fmt.Printf("\nbridge log:\n%s", stderr.String())
		return false, nil
	}
	fmt.Printf("%s: ", file)
	res.Report(os.Stdout)
	if verbose && waitErr != nil {
		fmt.Printf("bridge exited: %v\n", waitErr)
	}
	return true, nil
}

// recordedRoot finds the workspace root of the recorded session: the
// client's first folder, else bridge/info's first root, else (ACP) the
// cwd of the first session the client opened.
func recordedRoot(records []rpc.Record) string {
	for _, r := range records {
		var m struct {
			Method string `json:"method"`
			Params struct {
				RootURI          string `json:"rootUri"`
				RootPath         string `json:"rootPath"`
				WorkspaceFolders []struct {
					URI string `json:"uri"`
				} `json:"workspaceFolders"`
				Cwd string `json:"cwd"`
			} `json:"params"`
			Result struct {
				Roots []string `json:"roots"`
			} `json:"result"`
		}
		if r.Msg == nil || json.Unmarshal(r.Msg, &m) != nil {
			continue
		}
		p := m.Params
		switch {
		case m.Method == "initialize" && len(p.WorkspaceFolders) > 0:
			return strings.TrimPrefix(p.WorkspaceFolders[0].URI, "file://")
		case m.Method == "initialize" && p.RootURI != "":
			return strings.TrimPrefix(p.RootURI, "file://")
		case m.Method == "initialize" && p.RootPath != "":
			return p.RootPath
		case r.Dir == "out" && len(m.Result.Roots) > 0:
			return m.Result.Roots[0]
		case r.Dir == "in" && askServer[m.Method] && p.Cwd != "":
			return p.Cwd
		}
	}
	return ""
}

type pipeConn struct {
	io.ReadCloser
	w io.WriteCloser
}

func (p pipeConn) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p pipeConn) Close() error {
	p.w.Close()
	return nil
}

// writeUpdated rewrites a recording, its header first, putting the
// recorded values (the workspace path, session ids) back where the
// replay's appear.
func writeUpdated(file string, header *rpc.Header, records []rpc.Record, subs *substitutions) error {
	var buf bytes.Buffer
	if header != nil {
		buf.Write(header.Line())
	}
	for _, r := range records {
		if r.Msg != nil {
			r.Msg = subs.toRecorded(r.Msg)
		}
		line, err := json.Marshal(r)
		if err != nil {
			return err
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return os.WriteFile(file, buf.Bytes(), 0o644)
}
