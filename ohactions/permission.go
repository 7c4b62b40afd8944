package ohactions

import (
	"encoding/json"
	"fmt"
)

// RejectedContent is OpenHands' text for an action the user rejected
// (UserRejectObservation, as its runtime client builds it).
const RejectedContent = "Action has been rejected by the user! Waiting for further user input."

// Reject returns the observation OpenHands records when the user rejects
// an action: a user_rejected observation caused by the action.
func (r *Runtime) Reject(raw json.RawMessage) (*Observation, error) {
	a, err := ParseAction(raw)
	if err != nil {
		return nil, err
	}
	return r.stamp(a, &Observation{Type: "user_rejected", Message: RejectedContent, Content: RejectedContent, Extras: Object{}}), nil
}

// Risk says what an action would do, for asking the user first: the tool
// kind as ACP names it (read, edit, execute, fetch, other) and a short title.
// Actions that change nothing (think, finish, message, ...) need no
// permission: needsAsk is false for them.
func Risk(raw json.RawMessage) (kind, title string, needsAsk bool, err error) {
	a, err := ParseAction(raw)
	if err != nil {
		return "", "", false, err
	}
	str := func(key string) string {
		s, _ := a.str(key, "")
		return s
	}
	switch a.Type {
	case "run":
		if b, _ := a.boolean("is_input"); b {
			return "execute", fmt.Sprintf("send %q to the running command", str("command")), true, nil
		}
		return "execute", fmt.Sprintf("run `%s`", str("command")), true, nil
	case "run_ipython":
		return "execute", "run Python code", true, nil
	case "read":
		return "read", "read " + str("path"), true, nil
	case "write":
		return "edit", "write " + str("path"), true, nil
	case "edit":
		cmd := str("command")
		if cmd == "view" {
			return "read", "view " + str("path"), true, nil
		}
		return "edit", fmt.Sprintf("%s %s", cmd, str("path")), true, nil
	case "browse", "browse_interactive":
		return "fetch", "browse " + str("url"), true, nil
	}
	for _, t := range Answered {
		if t == a.Type {
			return "think", a.Type, false, nil
		}
	}
	return "other", a.Type, true, nil
}
