// Package localserver finds the OpenHands agent-server a person already
// runs on this machine, and starts one with their consent when there is
// none, so that a conversation can begin without copying a URL and a key
// into the editor. The VS Code extension (through the editor face) and
// `oh-bridge acp` use the same search, in the same order. Nothing here
// runs until a conversation is asked for: probing a local port is a
// network connection, and the bridge makes none before the person asks.
//
// Keys are read from files another program wrote (Agent Canvas's key
// file) as the bridge reads its own (internal/ownfile): only if regular,
// without blocking, small, and the person's. A key is never logged or put
// in a message: Found.Describe names where it came from. Nothing is sent
// to a server on this machine before its socket proves to be the
// person's (trust.go).
package localserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/internal/ownfile"
)

// Source is where a server was found.
type Source string

// The places Find looks, in its order, and a server the bridge started.
const (
	FromEnvironment Source = "environment"
	FromConfig      Source = "config file"
	FromAgentCanvas Source = "Agent Canvas"
	FromDefaultPort Source = "default port"
	FromStarted     Source = "started"
)

// Agent Canvas's local stack (package @openhands/agent-canvas): its
// ingress on port 8000 routes /api, /sockets and /server_info to the
// agent-server on 18000; the launcher keeps the session key in
// ~/.openhands/agent-canvas/api-key.txt unless LOCAL_BACKEND_API_KEY is set
// (OH_SESSION_API_KEY_PATH moves the file). Sources: agent-canvas 1.20.0
// config/defaults.json ("ports": proxy 8000, agentServer 18000);
// scripts/dev-safe.mjs (DEFAULT_API_KEY_PATH, LOCAL_BACKEND_API_KEY,
// OH_SESSION_API_KEY_PATH).
const (
	canvasIngress     = "http://127.0.0.1:8000"
	canvasAgentServer = "http://127.0.0.1:18000"
	canvasKeyDir      = ".openhands/agent-canvas"
	canvasKeyFile     = "api-key.txt"
	// DefaultURL is where `python -m openhands.agent_server` listens
	// unless told otherwise (its --port defaults to 8000).
	DefaultURL = "http://127.0.0.1:8000"
	// keyFileLimit: a session key is a line; a file much larger is not one.
	keyFileLimit = 4096
)

// Config is what the bridge's own config file says of the server.
type Config struct {
	Path          string // for the words; "" when there is none
	ServerURL     string
	SessionAPIKey string
}

// Options say where Find looks. Zero values are the real ones.
type Options struct {
	// Getenv reads the environment (os.Getenv).
	Getenv func(string) string
	// Home is the person's home directory (os.UserHomeDir).
	Home   string
	Config Config
	// Trust says which servers on this machine's ports are the person's
	// (nil: the person's and root's only).
	Trust *Trust
	// CanvasURLs and DefaultURL replace Agent Canvas's ingress and
	// agent-server and the default port's URL (tests).
	CanvasURLs []string
	DefaultURL string
}

// ProbeTimeout bounds one probe: a local server answers at once, and a
// port nothing listens on is refused at once; a port held by something
// that never answers must not hold the conversation up.
const ProbeTimeout = 2 * time.Second

// Found is an agent-server that answered, with the key it took.
type Found struct {
	URL           string
	SessionAPIKey string `json:"-"`
	Source        Source
	// KeySource says where the key came from ("" when the server needs
	// none): an environment variable's name or a file's path.
	KeySource string
	Version   string
}

// Describe says in words what was found and where the key came from,
// never the key.
func (f *Found) Describe() string {
	where := map[Source]string{
		FromEnvironment: "named by OH_BRIDGE_SERVER_URL",
		FromConfig:      "named in the bridge's config file",
		FromAgentCanvas: "Agent Canvas's local stack",
		FromDefaultPort: "on the default port",
		FromStarted:     "started by the bridge",
	}[f.Source]
	s := fmt.Sprintf("the OpenHands agent-server %s at %s (%s)", f.Version, f.URL, where)
	if f.KeySource != "" {
		s += ", with the session key from " + f.KeySource
	} else {
		s += ", which asks for no session key"
	}
	return s
}

// Tried is a place Find looked at and did not take, and why.
type Tried struct {
	Source Source
	URL    string
	Why    string
	// Untrusted is set when a server listens there that is not the
	// person's: who runs it, for the person to confirm or not.
	Untrusted *UntrustedError
}

// OtherUsers is the server of another user found there, for the person
// to confirm; nil when the place had none, or its owner is unknown.
func (t Tried) OtherUsers() *UntrustedError {
	if t.Untrusted == nil || t.Untrusted.Unknown {
		return nil
	}
	return t.Untrusted
}

// NotFoundError is Find's answer when no place had a server: it lists
// what was tried, in order.
type NotFoundError struct{ Tried []Tried }

func (e *NotFoundError) Error() string {
	var b strings.Builder
	b.WriteString("no OpenHands agent-server was found on this machine")
	if len(e.Tried) > 0 {
		b.WriteString(" (")
		for i, t := range e.Tried {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%s: %s", t.Source, t.Why)
		}
		b.WriteString(")")
	}
	b.WriteString("; start one (the bridge can start it for you), or set the server's URL")
	return b.String()
}

// Kind is "server_not_found".
func (e *NotFoundError) Kind() string { return "server_not_found" }

type candidate struct {
	source         Source
	url, key, from string
	keyErr         error // the key could not be read: said if the server needs one
}

// Find looks for a running agent-server, in order: the environment
// (OH_BRIDGE_SERVER_URL, OH_BRIDGE_SESSION_API_KEY), the bridge's config
// file, Agent Canvas's local stack with its key file, and an agent-server
// on the default port. A server on this machine is asked nothing until
// the socket listening there proves to be the person's (Trust.Check): one
// of another user's is passed over with who runs it (Tried.Untrusted),
// and nothing is sent to it. Each key goes only to the server it was
// given for: the environment's key to the environment's URL, the config
// file's to the config file's, Agent Canvas's to Agent Canvas's ports;
// the default port gets none. A server must then answer GET /server_info
// with a version the bridge speaks and accept its key (a listing of
// conversations). Find returns the first that does, and what it passed
// over.
func Find(ctx context.Context, o Options) (*Found, []Tried, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	home := o.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	hc := o.Trust.HTTPClient(ProbeTimeout)
	envKey := getenv("OH_BRIDGE_SESSION_API_KEY")
	var cands []candidate
	if u := getenv("OH_BRIDGE_SERVER_URL"); u != "" {
		cands = append(cands, candidate{source: FromEnvironment, url: u, key: envKey, from: fromIf(envKey, "OH_BRIDGE_SESSION_API_KEY")})
	}
	if o.Config.ServerURL != "" {
		cands = append(cands, candidate{source: FromConfig, url: o.Config.ServerURL, key: o.Config.SessionAPIKey,
			from: fromIf(o.Config.SessionAPIKey, "the config file "+o.Config.Path)})
	}
	canvas := canvasKey(getenv, home)
	canvasURLs := o.CanvasURLs
	if canvasURLs == nil {
		canvasURLs = []string{canvasIngress, canvasAgentServer}
	}
	for _, u := range canvasURLs {
		cands = append(cands, candidate{source: FromAgentCanvas, url: u, key: canvas.key, from: canvas.from, keyErr: canvas.keyErr})
	}
	defaultURL := o.DefaultURL
	if defaultURL == "" {
		defaultURL = DefaultURL
	}
	cands = append(cands, candidate{source: FromDefaultPort, url: defaultURL})
	var tried []Tried
	seen := map[string]bool{}
	for _, c := range cands {
		if c.source == FromAgentCanvas && c.key == "" && c.keyErr == nil {
			// No Canvas here: its stack always has a key.
			continue
		}
		id := string(c.source) + " " + c.url
		if seen[id] {
			continue
		}
		seen[id] = true
		if _, err := o.Trust.Check(c.url); err != nil {
			t := Tried{Source: c.source, URL: c.url, Why: err.Error()}
			var ue *UntrustedError
			if errors.As(err, &ue) {
				ue.Source = c.source
				t.Untrusted = ue
			}
			tried = append(tried, t)
			continue
		}
		version, err := Probe(ctx, hc, c.url, c.key)
		if err == nil {
			return &Found{URL: strings.TrimRight(c.url, "/"), SessionAPIKey: c.key, Source: c.source, KeySource: c.from, Version: version}, tried, nil
		}
		if ctx.Err() != nil {
			return nil, tried, ctx.Err()
		}
		tried = append(tried, Tried{Source: c.source, URL: c.url, Why: c.why(err)})
	}
	return nil, tried, &NotFoundError{Tried: tried}
}

// why says why a server that answered was not taken.
func (c candidate) why(err error) string {
	var ke *agentserver.APIKeyError
	if !errors.As(err, &ke) {
		return err.Error()
	}
	switch {
	case c.keyErr != nil:
		return fmt.Sprintf("it needs a session key, and the key file could not be read: %v", c.keyErr)
	case c.source == FromDefaultPort:
		return "it needs a session key, and none is sent to a server merely found on the default port: name it with OH_BRIDGE_SERVER_URL=" +
			strings.TrimRight(c.url, "/") + " and its key in OH_BRIDGE_SESSION_API_KEY (the server's OH_SESSION_API_KEYS_0)"
	case c.source == FromConfig && c.key == "":
		return "it needs a session key: put it in the config file as sessionApiKey (OH_BRIDGE_SESSION_API_KEY goes only to OH_BRIDGE_SERVER_URL)"
	case c.key == "":
		return "it needs a session key: set OH_BRIDGE_SESSION_API_KEY (the server's OH_SESSION_API_KEYS_0)"
	}
	return err.Error()
}

func fromIf(key, from string) string {
	if key == "" {
		return ""
	}
	return from
}

type keyed struct {
	key, from string
	keyErr    error
}

// canvasKey is Agent Canvas's session key: LOCAL_BACKEND_API_KEY, else its
// key file. A file that is not there means no Canvas; one that cannot be
// read (a FIFO, a link out of its directory, too large, empty) is said.
func canvasKey(getenv func(string) string, home string) keyed {
	if k := strings.TrimSpace(getenv("LOCAL_BACKEND_API_KEY")); k != "" {
		return keyed{key: k, from: "LOCAL_BACKEND_API_KEY"}
	}
	path := getenv("OH_SESSION_API_KEY_PATH")
	if path == "" {
		if home == "" {
			return keyed{}
		}
		path = filepath.Join(home, canvasKeyDir, canvasKeyFile)
	}
	key, err := ReadKeyFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return keyed{}
	}
	if err != nil {
		return keyed{keyErr: err}
	}
	return keyed{key: key, from: path}
}

// ReadKeyFile reads a session key from a file another program of the
// person's wrote: a regular file, not a link, read without blocking, a few
// KiB at most, owned by the person and writable by no one else
// (ownfile); the key is its first line, trimmed.
func ReadKeyFile(path string) (string, error) {
	data, err := ownfile.Read(path, ownfile.Options{What: "the key file", Limit: keyFileLimit, OthersMayRead: true})
	if err != nil {
		return "", err
	}
	key, _, _ := strings.Cut(string(data), "\n")
	key = strings.TrimSpace(key)
	if key == "" {
		return "", fmt.Errorf("%s holds no key (its first line is empty)", path)
	}
	return key, nil
}

// Probe checks that url is an agent-server the bridge speaks to, and that
// it takes key: GET /server_info (and its version), then a listing of one
// conversation, which needs the key. It returns the server's version.
func Probe(ctx context.Context, hc *http.Client, url, key string) (string, error) {
	c, err := agentserver.NewClient(url, key, nil, hc)
	if err != nil {
		return "", err
	}
	info, err := c.ServerInfo(ctx)
	if err != nil {
		return "", err
	}
	if _, err := c.SearchConversations(ctx, "", 1, agentserver.SortUpdatedAtDesc); err != nil {
		return "", err
	}
	return info.Version, nil
}
