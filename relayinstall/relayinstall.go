// Package relayinstall puts `oh-bridge relay` beside an agent-server on
// another machine through that server's own API, its bash and its file
// upload, as `oh-bridge relay install` and the editor's
// openhands/install_relay do after the person agreed. Prepare asks the
// server's machine what it is and says what Install would do there;
// nothing changes on either machine before Install. docs/relay.md
// ("From the bridge") describes it.
package relayinstall

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/internal/dist"
	"github.com/oh-bridge/oh-bridge/relay/wire"
)

// Defaults of the relay's two sides on the server's machine.
const (
	DefaultAgents  = "127.0.0.1:8931"
	DefaultEditors = "127.0.0.1:8932"
)

// Error kinds, kept through every face.
const (
	// KindPlatform: the server's machine is not this bridge's platform,
	// and no binary for it was given.
	KindPlatform = "relay_platform_mismatch"
	// KindFailed: a step on the server's machine failed.
	KindFailed = "relay_install_failed"
)

// Error is a failed install, in words that name the step and the fix.
type Error struct {
	kind, words string
}

func (e *Error) Error() string { return e.words }

// Kind is the error's kind (KindPlatform, KindFailed).
func (e *Error) Kind() string { return e.kind }

func failed(format string, args ...any) error {
	return &Error{kind: KindFailed, words: fmt.Sprintf(format, args...)}
}

// Options say where the relay goes and what it runs as.
type Options struct {
	// Server is the agent-server's URL, for the words.
	Server string
	// PublicURL is where the person's proxy exposes the relay's editors'
	// side: the URL editors dial.
	PublicURL string
	// Agents and Editors are the relay's two sides on the server's
	// machine (DefaultAgents, DefaultEditors when "").
	Agents, Editors string
	// Binary is oh-bridge for the server's platform; "" is this
	// program, when the platforms match.
	Binary string
}

// Plan is what Install will do, known from the server's machine.
type Plan struct {
	// Machine is the server machine's `uname -sm`; Home the home of the
	// user the server runs as.
	Machine, Home string
	// Binary is the file that goes there, Size its bytes.
	Binary string
	Size   int
	// RemoteBin, RemoteSecret and RemoteLog are where the relay, its
	// secret and its log go on the server's machine.
	RemoteBin, RemoteSecret, RemoteLog string
	// Agents, Editors and PublicURL as given (or defaulted).
	Agents, Editors, PublicURL, Server string

	c    *agentserver.Client
	dir  string // the relay's directory there, which holds the three
	data []byte
}

// Prepare asks the server's machine, through the server's bash, what it
// is and as whom the server runs, and reads the binary that would go
// there. It changes nothing.
func Prepare(ctx context.Context, c *agentserver.Client, o Options) (*Plan, error) {
	if o.Agents == "" {
		o.Agents = DefaultAgents
	}
	if o.Editors == "" {
		o.Editors = DefaultEditors
	}
	if o.PublicURL == "" {
		return nil, failed("no URL for the relay's editors' side: give the URL at which your proxy exposes it (e.g. https://cloud.example/s/abc/relay)")
	}
	probe, err := c.ExecuteBash(ctx, `uname -sm; printf '%s\n' "$HOME"`, 30)
	if err != nil {
		return nil, fmt.Errorf("asking the agent-server at %s what machine it runs on: %w", o.Server, err)
	}
	lines := strings.Split(strings.TrimSpace(probe.Stdout), "\n")
	if probe.ExitCode != 0 || len(lines) < 2 || !strings.HasPrefix(lines[1], "/") {
		return nil, failed("the agent-server's bash answered %q (exit %d) to `uname -sm; echo $HOME`", probe.Stdout+probe.Stderr, probe.ExitCode)
	}
	goos, goarch := platformOf(lines[0])
	bin := o.Binary
	if bin == "" {
		if goos != runtime.GOOS || goarch != runtime.GOARCH {
			carrier := fmt.Sprintf("no package of ours carries it: build it from the source with GOOS=%s GOARCH=%s go build ./cmd/oh-bridge", goos, goarch)
			if pl, ok := dist.PlatformFor(goos, goarch); ok {
				carrier = "the npm package " + pl.NPMPackage() + " carries it"
			}
			return nil, &Error{kind: KindPlatform, words: fmt.Sprintf("the agent-server runs on %s/%s and this bridge is %s/%s: give oh-bridge for %s/%s (%s; `oh-bridge relay install --binary FILE`)",
				goos, goarch, runtime.GOOS, runtime.GOARCH, goos, goarch, carrier)}
		}
		if bin, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, fmt.Errorf("reading the relay's binary: %w", err)
	}
	dir := lines[1] + "/.oh-bridge"
	return &Plan{Machine: lines[0], Home: lines[1], Binary: bin, Size: len(data),
		RemoteBin: dir + "/bin/oh-bridge", RemoteSecret: dir + "/relay-secret", RemoteLog: dir + "/relay.log",
		Agents: o.Agents, Editors: o.Editors, PublicURL: o.PublicURL, Server: o.Server, c: c, dir: dir, data: data}, nil
}

// Words say what Install will do, for the person to agree to.
func (p *Plan) Words() []string {
	return []string{
		fmt.Sprintf("The agent-server at %s runs on %s, as the user whose home is %s.", p.Server, p.Machine, p.Home),
		fmt.Sprintf("This puts %s (%.1f MB) there as %s, with a new pairing secret in %s (mode 600),", p.Binary, float64(p.Size)/(1<<20), p.RemoteBin, p.RemoteSecret),
		fmt.Sprintf("and starts `oh-bridge relay`: its agents' side on %s and its editors' side on %s, which your proxy exposes as %s.", p.Agents, p.Editors, p.PublicURL),
	}
}

// Install puts the relay there with a new pairing secret, starts it,
// and waits for it to say it listens. It returns the secret and the
// relay's first words.
func (p *Plan) Install(ctx context.Context) (secret, said string, err error) {
	c, dir := p.c, p.dir
	secret = wire.NewSecret()
	if out, err := c.ExecuteBash(ctx, fmt.Sprintf("mkdir -p %s/bin && chmod 700 %s %s/bin", shq(dir), shq(dir), shq(dir)), 30); err != nil || out.ExitCode != 0 {
		return "", "", failed("making %s on the server's machine: %v %s", dir, err, outText(out))
	}
	if err := c.Upload(ctx, p.RemoteBin, bytes.NewReader(p.data)); err != nil {
		var se *agentserver.ServerError
		if errors.As(err, &se) && se.Status == http.StatusRequestEntityTooLarge {
			return "", "", failed("the proxy in front of the agent-server refused the binary's %.1f MB (HTTP 413): let the agent-server's location take it (nginx: client_max_body_size 64m;), or put the relay there by hand (docs/relay.md)", float64(p.Size)/(1<<20))
		}
		return "", "", fmt.Errorf("uploading the relay's binary: %w", err)
	}
	if err := c.Upload(ctx, p.RemoteSecret, strings.NewReader(secret+"\n")); err != nil {
		return "", "", fmt.Errorf("uploading the relay's secret: %w", err)
	}
	start := fmt.Sprintf("chmod 700 %[1]s && chmod 600 %[2]s && : > %[3]s && chmod 600 %[3]s && "+
		"(setsid nohup %[1]s relay --secret-file %[2]s --agents %[4]s --editors %[5]s > %[3]s 2>&1 < /dev/null &)",
		shq(p.RemoteBin), shq(p.RemoteSecret), shq(p.RemoteLog), shq(p.Agents), shq(p.Editors))
	if out, err := c.ExecuteBash(ctx, start, 30); err != nil || out.ExitCode != 0 {
		return "", "", failed("starting the relay on the server's machine: %v %s", err, outText(out))
	}
	// Its first line says where it listens; a failure says why.
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := c.ExecuteBash(ctx, "cat "+shq(p.RemoteLog), 30)
		if err != nil {
			return "", "", err
		}
		switch {
		case strings.Contains(out.Stdout, "relay: agents' side"):
			return secret, strings.TrimSpace(out.Stdout), nil
		case strings.Contains(out.Stdout, "oh-bridge relay:"):
			return "", "", failed("the relay did not start: %s", strings.TrimSpace(out.Stdout))
		case time.Now().After(deadline):
			return "", "", failed("the relay said nothing in 20 s; its log (%s) holds: %q", p.RemoteLog, out.Stdout)
		}
		select {
		case <-ctx.Done():
			return "", "", ctx.Err()
		case <-time.After(200 * time.Millisecond): // the server's machine sends no event; its log is read again
		}
	}
}

// platformOf maps `uname -sm` to Go's names.
func platformOf(uname string) (goos, goarch string) {
	f := strings.Fields(uname)
	if len(f) != 2 {
		return "", ""
	}
	goos = strings.ToLower(f[0])
	switch f[1] {
	case "x86_64", "amd64":
		goarch = "amd64"
	case "aarch64", "arm64":
		goarch = "arm64"
	default:
		goarch = f[1]
	}
	return goos, goarch
}

// shq quotes s for the server's bash.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func outText(o *agentserver.BashOutput) string {
	if o == nil {
		return ""
	}
	return strings.TrimSpace(o.Stdout + " " + o.Stderr)
}
