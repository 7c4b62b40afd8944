package conversation

import (
	"context"
	"fmt"
	"strings"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/ohevents"
)

// Continuing a conversation in a new one: when a conversation's tools
// cannot be served again (their token may have leaked,
// EndpointExposedError), the person goes on in a new conversation, with a
// new endpoint and token, whose first message carries the old one's
// history: what was asked, said and done. The agent-server has no way to
// copy a conversation with a new mcp_config, so the history goes as text.

// historyLimit bounds the history carried: the end of a long conversation
// matters most, and the message goes to the model whole.
const historyLimit = 30000

// historyEvents bounds the events read (a page is 100).
const historyEvents = 5000

// History is the text of a conversation's history, for a new conversation
// that continues it: a line or a block an event, the oldest first, cut
// from the front to historyLimit characters.
func History(ctx context.Context, c *agentserver.Client, id string) (string, error) {
	var lines []string
	page := ""
	for read := 0; read < historyEvents; {
		p, err := c.SearchEvents(ctx, id, page, 100)
		if err != nil {
			return "", err
		}
		for _, e := range p.Items {
			read++
			if l := historyLine(e); l != "" {
				lines = append(lines, l)
			}
		}
		if p.NextPageID == nil || *p.NextPageID == "" || len(p.Items) == 0 {
			break
		}
		page = *p.NextPageID
	}
	text := strings.Join(lines, "\n\n")
	if r := []rune(text); len(r) > historyLimit {
		text = "[… the start of the history is left out …]\n\n" + string(r[len(r)-historyLimit:])
	}
	return text, nil
}

// historyLine is an event's line or block of the history, or "".
func historyLine(ev ohevents.Event) string {
	switch e := ev.(type) {
	case *ohevents.MessageEvent:
		if e.LLMMessage == nil {
			return ""
		}
		body := messageText(e.LLMMessage.Content)
		if body == "" {
			return ""
		}
		who := "Agent"
		if e.Source == "user" {
			who = "User"
		}
		return who + ": " + body
	case *ohevents.ActionEvent:
		args := "null" // an action the model's call could not be made
		if e.Action != nil {
			args = strings.TrimSpace(string(e.Action.Raw()))
		}
		if r := []rune(args); len(r) > 2000 {
			args = string(r[:2000]) + "…"
		}
		return fmt.Sprintf("Agent called %s: %s", e.ToolName, args)
	case *ohevents.ObservationEvent:
		if e.Observation == nil {
			return ""
		}
		var parts []string
		for _, c := range e.Observation.Content {
			if c.Text != "" {
				parts = append(parts, c.Text)
			}
		}
		out := strings.Join(parts, "\n")
		if r := []rune(out); len(r) > 4000 {
			out = string(r[:2000]) + "\n[…]\n" + string(r[len(r)-2000:])
		}
		return fmt.Sprintf("Result of %s:\n%s", e.ToolName, out)
	}
	return ""
}

func messageText(items ohevents.Texts) string {
	var parts []string
	for _, it := range items {
		if it.Text != "" && (it.Type == "" || it.Type == "text") {
			parts = append(parts, it.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// continuationTask is the first message of a conversation that continues
// old: its history, then the person's new message, if any.
func continuationTask(old, history, task string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "This conversation continues an earlier one (%s), whose tools could not be used again. Its history follows; the workspace is as it left it.\n\n", old)
	b.WriteString("<earlier-conversation>\n")
	b.WriteString(history)
	b.WriteString("\n</earlier-conversation>")
	if strings.TrimSpace(task) != "" {
		b.WriteString("\n\n")
		b.WriteString(task)
	} else {
		b.WriteString("\n\nWait for the user's next message.")
	}
	return b.String()
}
