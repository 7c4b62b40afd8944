//go:build unix

package localserver

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// supervisorWorksHere: every Unix runs the supervisor (what it reaches of
// the server's tree differs: tree_linux.go, tree_other.go).
const supervisorWorksHere = true

// The bridge and the supervisor it starts share two pipes, which are the
// supervisor's fds 3 and 4:
//
//   - the lifeline, from the bridge: nothing is written on it. The
//     supervisor reads it until end of file, which comes when the bridge
//     closes its end (Stop) or dies, however it dies: the kernel closes a
//     dead process's files. Nothing else holds the bridge's end (os.Pipe
//     makes it close-on-exec), so no other child of the bridge keeps the
//     supervisor waiting.
//   - the reports, to the bridge: "started PID" once the server runs (or
//     "failed REASON" if it could not be started), then "ended HOW" once
//     it and its descendants have ended, HOW worded as os.ProcessState
//     words it ("exit status 3", "signal: killed").
const (
	lifelineFD = 3
	reportsFD  = 4
)

// sweepLimit bounds the killing of what the server leaves: a process in
// uninterruptible sleep (a hung NFS read) ends only when the kernel lets
// it, and the supervisor does not wait for it beyond that.
const sweepLimit = 5 * time.Second

// supervised is a server running under its supervisor.
type supervised struct {
	sup      *exec.Cmd
	lifeline *os.File // the bridge's end; closing it stops the server
	reports  *os.File
	lines    *bufio.Reader
	server   int
}

// startSupervised starts the supervisor with cmd's command, environment
// (the session key is there, never on a command line), directory and
// output (which the server writes to directly), and returns once it has
// said that the server runs.
func startSupervised(cmd *exec.Cmd) (serverProcess, error) {
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	exe, shown, err := selfExecutable()
	if err != nil {
		return nil, fmt.Errorf("the bridge cannot find its own executable to supervise the server: %w", err)
	}
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		lifeR.Close()
		lifeW.Close()
		return nil, err
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	sup := &exec.Cmd{
		Path:       exe,
		Args:       append([]string{shown, cmd.Path}, cmd.Args[1:]...),
		Env:        append(env[:len(env):len(env)], superviseEnv+"=1"),
		Dir:        cmd.Dir,
		Stdout:     cmd.Stdout,
		Stderr:     cmd.Stderr,
		ExtraFiles: []*os.File{lifeR, repW},
		// A group of its own, as the server had before: a terminal's
		// Ctrl-C to the bridge's group does not reach it, and the bridge
		// stops the server on that signal its own way.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
		WaitDelay:   cmd.WaitDelay,
	}
	err = sup.Start()
	lifeR.Close()
	repW.Close()
	if err != nil {
		lifeW.Close()
		repR.Close()
		return nil, err
	}
	p := &supervised{sup: sup, lifeline: lifeW, reports: repR, lines: bufio.NewReader(repR)}
	verb, rest := p.report()
	if pid, err := strconv.Atoi(rest); verb == "started" && err == nil {
		p.server = pid
		return p, nil
	}
	lifeW.Close()
	werr := sup.Wait()
	repR.Close()
	if verb == "failed" {
		return nil, errors.New(rest)
	}
	return nil, fmt.Errorf("its supervisor (this bridge's own binary, %s) ended before it started the server (%s)", shown, exitWords(werr))
}

// report reads the supervisor's next report: its verb and the rest.
func (p *supervised) report() (verb, rest string) {
	line, _ := p.lines.ReadString('\n')
	verb, rest, _ = strings.Cut(strings.TrimSuffix(line, "\n"), " ")
	return verb, rest
}

func (p *supervised) pid() int { return p.server }

func (p *supervised) wait() error {
	err := p.sup.Wait()
	p.lifeline.Close() // the server ended by itself: nothing to stop
	verb, how := p.report()
	p.reports.Close()
	switch {
	case verb != "ended":
		return fmt.Errorf("its supervisor ended first: %s", exitWords(err))
	case how == "exit status 0":
		return nil
	}
	return errors.New(how)
}

// stop closes the lifeline: the supervisor sends SIGTERM to the server's
// process group, and after stopGrace, or as soon as the server has ended,
// SIGKILL to whatever is left of its tree. A supervisor that has not
// ended by the time that takes at most is killed, with the server's
// group (the server is its child, unreaped, so its pid and group are not
// anyone else's yet).
func (p *supervised) stop(done <-chan struct{}) {
	p.lifeline.Close()
	select {
	case <-done:
		return
	case <-time.After(stopGrace + sweepLimit + outputDelay + time.Second):
	}
	_ = syscall.Kill(-p.server, syscall.SIGKILL)
	_ = p.sup.Process.Kill()
	<-done
}
