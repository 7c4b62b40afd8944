package layers

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strconv"
	"strings"
)

// EventsPackage is the one package that decodes the agent-server's events.
const EventsPackage = "ohevents"

// EventOnlyFields are JSON fields only an agent-server event carries: a
// struct that names one reads events by hand.
var EventOnlyFields = []string{"action_id", "tool_name", "llm_message", "rejection_reason", "llm_response_id", "forgotten_event_ids"}

// EventReaders lists where a Go file of package pkg reads agent-server
// events itself instead of taking ohevents' typed values: a string
// literal that is an event's kind (a switch on "ActionEvent" means the
// file decoded the kind), or a struct field tagged with a field only
// events carry. kinds are ohevents.Kinds' names. The events package itself
// is exempt.
func EventReaders(pkg, filename string, src []byte, kinds []string) ([]string, error) {
	if pkg == EventsPackage {
		return nil, nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filename, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	isKind := map[string]bool{}
	for _, k := range kinds {
		isKind[k] = true
	}
	eventOnly := map[string]bool{}
	for _, k := range EventOnlyFields {
		eventOnly[k] = true
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			if n.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(n.Value); err == nil && isKind[s] {
				out = append(out, fmt.Sprintf("%s: %s names the event kind %q: only %s decodes events; switch on its types instead", fset.Position(n.Pos()), pkg, s, EventsPackage))
			}
		case *ast.Field:
			if n.Tag == nil {
				return true
			}
			tag, err := strconv.Unquote(n.Tag.Value)
			if err != nil {
				return true
			}
			name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
			if eventOnly[name] {
				out = append(out, fmt.Sprintf("%s: %s declares a struct field %q of an agent-server event: only %s decodes events; read its typed value", fset.Position(n.Pos()), pkg, name, EventsPackage))
			}
		}
		return true
	})
	return out, nil
}
