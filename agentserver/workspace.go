package agentserver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"path"
)

// The agent-server's own workspace API: its files and its bash, on the
// machine it runs on. The bridge uses them for one thing, with the
// person's consent: to put an `oh-bridge relay` beside a server on
// another machine (`oh-bridge relay install`, docs/relay.md).

// BashOutput is what a command run by the server's bash printed.
type BashOutput struct {
	ExitCode int    `json:"exit_code"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
}

// ExecuteBash runs command on the server's machine and waits for it, for
// at most timeout seconds (POST /api/bash/execute_bash_command).
func (c *Client) ExecuteBash(ctx context.Context, command string, timeout int) (*BashOutput, error) {
	var out struct {
		ExitCode *int    `json:"exit_code"`
		Stdout   *string `json:"stdout"`
		Stderr   *string `json:"stderr"`
	}
	err := c.do(ctx, http.MethodPost, "/api/bash/execute_bash_command", nil,
		map[string]any{"command": command, "timeout": timeout}, &out, &NotAgentServerError{URL: c.base.String(), Detail: "POST /api/bash/execute_bash_command answered 404: this server has no bash API"})
	if err != nil {
		return nil, err
	}
	r := &BashOutput{ExitCode: -1}
	if out.ExitCode != nil {
		r.ExitCode = *out.ExitCode
	}
	if out.Stdout != nil {
		r.Stdout = *out.Stdout
	}
	if out.Stderr != nil {
		r.Stderr = *out.Stderr
	}
	return r, nil
}

// Upload writes data to the absolute path on the server's machine
// (POST /api/file/upload, a multipart form's "file").
func (c *Client) Upload(ctx context.Context, to string, data io.Reader) error {
	if !path.IsAbs(to) {
		return fmt.Errorf("the server's upload takes an absolute path, not %q", to)
	}
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	part, err := w.CreateFormFile("file", path.Base(to))
	if err != nil {
		return err
	}
	if _, err := io.Copy(part, data); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.send(ctx, http.MethodPost, "/api/file/upload", url.Values{"path": {to}}, w.FormDataContentType(), &body, nil,
		&NotAgentServerError{URL: c.base.String(), Detail: "POST /api/file/upload answered 404: this server has no file API"})
}
