package localserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ownfile"
)

// Choices are the person's answers that outlive a run, in a small JSON
// file of the bridge's own ($XDG_CONFIG_HOME/oh-bridge/choices.json): to
// always start an agent-server when none is found, and the servers of
// other users they confirmed. It is read as the bridge's own files are
// (ownfile): a file another user wrote, or could have, is refused, and so
// trusts nobody.
type Choices struct {
	Path string

	mu sync.Mutex
}

// choicesFile is the file's shape.
type choicesFile struct {
	AlwaysStartServer bool            `json:"alwaysStartServer,omitempty"`
	TrustedServers    []TrustedServer `json:"trustedServers,omitempty"`
}

// TrustedServer is a port the person confirmed another user's server on.
type TrustedServer struct {
	Port int `json:"port"`
	// UID is the user the server runs as; -1 when the system cannot tell
	// (the port alone is confirmed).
	UID         int    `json:"uid"`
	ConfirmedAt string `json:"confirmedAt,omitempty"`
}

// choicesLimit caps the file: a few confirmations.
const choicesLimit = 64 << 10

// ChoicesPath is $XDG_CONFIG_HOME/oh-bridge/choices.json ("" when there is
// no config directory).
func ChoicesPath() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "oh-bridge", "choices.json")
}

// read is the file's content; a missing file is empty, and one that
// cannot be used is said once in err (and trusts nothing).
func (c *Choices) read() (choicesFile, error) {
	var f choicesFile
	if c == nil || c.Path == "" {
		return f, nil
	}
	data, err := ownfile.Read(c.Path, ownfile.Options{What: "the bridge's choices file", Limit: choicesLimit, OthersMayRead: true})
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return choicesFile{}, err
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return choicesFile{}, fmt.Errorf("the bridge's choices file %s is not its JSON (%v): remove it, and answer the questions again", c.Path, err)
	}
	return f, nil
}

func (c *Choices) update(change func(*choicesFile)) error {
	if c == nil || c.Path == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	f, err := c.read()
	if err != nil {
		return err
	}
	change(&f)
	data, _ := json.MarshalIndent(f, "", "  ")
	return ownfile.Write(c.Path, append(data, '\n'), "the bridge's config directory")
}

// AlwaysStart says whether the person chose to always start a server.
func (c *Choices) AlwaysStart() (bool, error) {
	f, err := c.read()
	return f.AlwaysStartServer, err
}

// SetAlwaysStart keeps that choice.
func (c *Choices) SetAlwaysStart() error {
	return c.update(func(f *choicesFile) { f.AlwaysStartServer = true })
}

// TrustsServer says whether the person confirmed uid's server on port.
func (c *Choices) TrustsServer(port, uid int) bool {
	f, err := c.read()
	return err == nil && slices.ContainsFunc(f.TrustedServers, func(s TrustedServer) bool { return s.Port == port && s.UID == uid })
}

// TrustsPort says whether the person confirmed the port whatever its
// owner (on a system that cannot tell owners).
func (c *Choices) TrustsPort(port int) bool { return c.TrustsServer(port, -1) }

// TrustsUID says whether the person confirmed a server of uid on any port.
func (c *Choices) TrustsUID(uid int) bool {
	f, err := c.read()
	return err == nil && slices.ContainsFunc(f.TrustedServers, func(s TrustedServer) bool { return s.UID == uid })
}

// TrustServer keeps the person's confirmation of uid's server on port.
func (c *Choices) TrustServer(port, uid int) error {
	return c.update(func(f *choicesFile) {
		f.TrustedServers = slices.DeleteFunc(f.TrustedServers, func(s TrustedServer) bool { return s.Port == port })
		f.TrustedServers = append(f.TrustedServers, TrustedServer{Port: port, UID: uid, ConfirmedAt: time.Now().UTC().Format(time.RFC3339)})
	})
}
