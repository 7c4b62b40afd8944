package shellint

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// How a terminal's shell is launched: which shell, its argv, its
// environment, and the integration script and nonce it gets.

// Shells are the shells a terminal runs (resolveShell's kinds), whether or
// not this machine has them installed: opening one that is missing answers
// a *ShellNotFoundError.
func Shells() []string { return []string{"bash", "zsh"} }

func resolveShell(name string) (kind, path string, err error) {
	switch name {
	case "", "auto", "bash":
		kind = "bash"
	case "zsh":
		kind = "zsh"
	default:
		base := filepath.Base(name)
		switch {
		case strings.HasPrefix(base, "bash"):
			kind = "bash"
		case strings.HasPrefix(base, "zsh"):
			kind = "zsh"
		default:
			return "", "", &InvalidOptionError{Option: "shell", Value: name, Reason: `only bash and zsh are supported; use "bash", "zsh" or "auto"`}
		}
		if filepath.IsAbs(name) {
			if st, err := os.Stat(name); err != nil || st.IsDir() {
				return "", "", &ShellNotFoundError{Shell: name}
			}
			return kind, name, nil
		}
	}
	if name == "" || name == "auto" {
		name = kind
	}
	path, err = exec.LookPath(name)
	if err != nil {
		return "", "", &ShellNotFoundError{Shell: name}
	}
	return kind, path, nil
}

// shellCommand is the interactive shell for mode m. The nonce is not in
// its environment: a process's environment block stays readable in
// /proc/<pid>/environ for its whole life, whatever the shell unsets, so a
// command's child could read it there and forge the end of a command.
// startProc hands it over on descriptor 3 instead, which the integration
// script reads and closes before any user file runs.
func (t *Terminal) shellCommand(m Mode) (argv, env []string, err error) {
	env = t.baseEnv()
	env = append(env, "BR_DIR="+t.runDir)
	if t.opts.LineEditing {
		env = append(env, "BR_EDITING=1")
	}
	if m == ModeNoRC {
		env = append(env, "BR_NORC=1")
	}
	switch t.shellKind {
	case "bash":
		script := bashIntegration
		if m == ModeNoRC && t.opts.testHangNoRC {
			script = "sleep 1000\n" + script
		}
		rc := filepath.Join(t.runDir, "bashrc")
		if err := os.WriteFile(rc, []byte(script), 0o600); err != nil {
			return nil, nil, fmt.Errorf("write shell integration: %w", err)
		}
		return []string{t.shellPath, "--noprofile", "--rcfile", rc, "-i"}, env, nil
	default:
		zdot := filepath.Join(t.runDir, "zdot")
		if err := os.MkdirAll(zdot, 0o700); err != nil {
			return nil, nil, fmt.Errorf("write shell integration: %w", err)
		}
		zenv := zshEnvIntegration
		if m == ModeNoRC && t.opts.testHangNoRC {
			zenv = "sleep 1000\n" + zenv
		}
		if err := os.WriteFile(filepath.Join(zdot, ".zshenv"), []byte(zenv), 0o600); err != nil {
			return nil, nil, fmt.Errorf("write shell integration: %w", err)
		}
		if err := os.WriteFile(filepath.Join(zdot, ".zshrc"), []byte(zshRcIntegration), 0o600); err != nil {
			return nil, nil, fmt.Errorf("write shell integration: %w", err)
		}
		userZdot, set := t.lookupEnv("ZDOTDIR")
		if set {
			env = append(env, "BR_USER_ZDOTDIR="+userZdot)
		}
		env = append(env, "ZDOTDIR="+zdot)
		return []string{t.shellPath, "-i"}, env, nil
	}
}

func (t *Terminal) lookupEnv(k string) (string, bool) {
	if v, ok := t.opts.Env[k]; ok {
		return v, true
	}
	return os.LookupEnv(k)
}

// agentEnv makes programs behave for a reader that cannot page, answer
// prompts or wait for buffered output.
var agentEnv = [][2]string{
	{"TERM", "xterm-256color"},
	{"PAGER", "cat"},
	{"GIT_PAGER", "cat"},
	{"MANPAGER", "cat"},
	{"LESS", "-FRX"},
	{"GIT_TERMINAL_PROMPT", "0"},
	{"DEBIAN_FRONTEND", "noninteractive"},
	{"PYTHONUNBUFFERED", "1"},
}

// baseEnv is the process environment minus what would confuse the
// integration, plus agentEnv, plus the caller's overrides.
func (t *Terminal) baseEnv() []string {
	drop := map[string]bool{
		"PROMPT_COMMAND": true, "PS0": true, "PS1": true, "PS2": true,
		"COLUMNS": true, "LINES": true, "ZDOTDIR": true,
		"BR_NONCE": true, "BR_NORC": true, "BR_DIR": true, "BR_EDITING": true, "BR_USER_ZDOTDIR": true,
	}
	for _, kv := range agentEnv {
		drop[kv[0]] = true
	}
	for k := range t.opts.Env {
		drop[k] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] && !strings.HasPrefix(k, "__br_") {
			env = append(env, kv)
		}
	}
	for _, kv := range agentEnv {
		if _, ok := t.opts.Env[kv[0]]; !ok {
			env = append(env, kv[0]+"="+kv[1])
		}
	}
	for k, v := range t.opts.Env {
		if k == "ZDOTDIR" {
			continue // handed to the zsh integration separately
		}
		env = append(env, k+"="+v)
	}
	return env
}
