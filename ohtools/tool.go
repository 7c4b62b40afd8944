package ohtools

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// A tool is declared once, in its own file, as a Spec: its name, schema,
// description, argument type, card and run. Everything else derives from
// the set of declarations: Definitions and the MCP registration, the
// editor's capability list, Parse (the arguments are parsed once, into the
// tool's typed value every reader uses), ACP's kind and title (Action), the
// card a face fills (Card), and the extension's rendering (protogen writes
// Tools into protocol.gen.ts). Nothing else names a tool by its string.

// Spec declares a tool whose arguments parse into A.
type Spec[A Args] struct {
	Name string
	// Description is what the agent reads; "{working_dir}" in it becomes
	// the first workspace root.
	Description string
	// Schema is the input schema as the agent sees it, key order kept.
	Schema      string
	Annotations Annotations
	// Card is how a face shows a call of the tool.
	Card CardKind
	// Extra marks a tool of the bridge's own, not one of OpenHands': it is
	// served only when asked for (Select), so the default list stays
	// OpenHands' own.
	Extra bool
	// Parse checks a call's arguments the agent's way; its error is an
	// *ArgumentError.
	Parse func(raw json.RawMessage) (A, error)
	// Run carries out a parsed call with the agent's tools.
	Run func(ctx context.Context, tb *Toolbox, args A, progress func(Progress)) (*Observation, error)
}

// Args are a call's arguments, parsed into the tool's own type: what the
// call would do (for asking the person first) and what its card shows.
type Args interface {
	Action() Action
	Card() Card
}

// CardKind is how a face shows a tool's calls.
type CardKind string

const (
	// CardCommand: a command's card, with its live output and exit code,
	// maybe in a display terminal of the client's.
	CardCommand CardKind = "command"
	// CardFile: a file's card, with its location and, for an edit, the
	// diff.
	CardFile CardKind = "file"
	// CardPlan: the result text, and the task list the call sets as the
	// conversation's plan.
	CardPlan CardKind = "plan"
	// CardText: the result text.
	CardText CardKind = "text"
)

// Card is what a call's card shows before the call runs, from its
// arguments alone.
type Card struct {
	// Path is the file the call names, as the agent gave it ("" none).
	Path string
	// Line is the line of Path to show, from 1; nil shows the file.
	Line *int
	// Edits: the call changes Path (its card shows a diff).
	Edits bool
	// Proposed is the change the arguments spell out, when they do: a
	// create's text, a str_replace's old and new text, an insert's lines.
	Proposed *Diff
	// Plan is the task list the call sets, when it sets one.
	Plan []Task
	// SetsPlan: the call replaces the task list with Plan.
	SetsPlan bool
}

// Diff is a change of a file's text; OldText nil is a new file.
type Diff struct {
	OldText, NewText *string
}

// Tool is a declared tool (a Spec with its argument type erased), as the
// registry keeps it.
type Tool struct {
	Name        string
	Description string
	Schema      string
	Annotations Annotations
	Card        CardKind
	Extra       bool

	argType reflect.Type
	parse   func(raw json.RawMessage) (Args, error)
	run     func(ctx context.Context, tb *Toolbox, args Args, progress func(Progress)) (*Observation, error)
}

// ArgsType is the Go type the tool's arguments parse into (*TerminalArgs,
// ...): internal/protogen writes it for the extension.
func (t *Tool) ArgsType() reflect.Type { return t.argType }

// Definition is the tool as an agent working in workingDir sees it.
func (t *Tool) Definition(workingDir string) Definition {
	return Definition{
		Name:        t.Name,
		Description: strings.ReplaceAll(t.Description, "{working_dir}", workingDir),
		InputSchema: json.RawMessage(t.Schema),
		Annotations: t.Annotations,
	}
}

var registry struct {
	sync.Mutex
	tools map[string]*Tool
}

// declare adds a tool to the registry; each tool's file calls it once, in
// a package-level `var _ = declare(Spec[...]{...})`: the registry is the
// only list of tools.
func declare[A Args](s Spec[A]) *Tool {
	t := &Tool{
		Name: s.Name, Description: s.Description, Schema: s.Schema, Annotations: s.Annotations,
		Card: s.Card, Extra: s.Extra, argType: reflect.TypeFor[A](),
		parse: func(raw json.RawMessage) (Args, error) { return s.Parse(raw) },
		run: func(ctx context.Context, tb *Toolbox, args Args, progress func(Progress)) (*Observation, error) {
			a, ok := args.(A)
			if !ok {
				return nil, fmt.Errorf("ohtools: %s got arguments of type %T", s.Name, args)
			}
			return s.Run(ctx, tb, a, progress)
		},
	}
	registry.Lock()
	defer registry.Unlock()
	if registry.tools == nil {
		registry.tools = map[string]*Tool{}
	}
	if registry.tools[t.Name] != nil {
		panic("ohtools: tool " + t.Name + " is declared twice")
	}
	registry.tools[t.Name] = t
	return t
}

// openHandsOrder is the order openhands-tools lists its tools in; the
// bridge's own tools follow, by name.
var openHandsOrder = []string{"terminal", "file_editor", "task_tracker"}

// Tools are every declared tool: OpenHands' own in OpenHands' order, then
// the extra ones by name.
func Tools() []*Tool {
	registry.Lock()
	all := make([]*Tool, 0, len(registry.tools))
	for _, t := range registry.tools {
		all = append(all, t)
	}
	registry.Unlock()
	rank := func(t *Tool) int {
		if i := slices.Index(openHandsOrder, t.Name); i >= 0 {
			return i
		}
		return len(openHandsOrder)
	}
	slices.SortFunc(all, func(a, b *Tool) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a.Name, b.Name))
	})
	return all
}

// Lookup returns the declared tool of that name.
func Lookup(name string) (*Tool, bool) {
	registry.Lock()
	defer registry.Unlock()
	t, ok := registry.tools[name]
	return t, ok
}

// Default are the tools served when no extra one is asked for:
// OpenHands' own.
func Default() []*Tool {
	return slices.DeleteFunc(Tools(), func(t *Tool) bool { return t.Extra })
}

// ExtraTools names the tools that are served only when asked for.
func ExtraTools() []string {
	var names []string
	for _, t := range Tools() {
		if t.Extra {
			names = append(names, t.Name)
		}
	}
	return names
}

// UnknownExtraToolError names an extra tool asked for that does not exist.
type UnknownExtraToolError struct{ Name string }

func (e *UnknownExtraToolError) Error() string {
	if len(ExtraTools()) == 0 {
		return fmt.Sprintf("there is no extra tool %q: this bridge has none", e.Name)
	}
	return fmt.Sprintf("there is no extra tool %q: the extra tools are %s", e.Name, strings.Join(ExtraTools(), ", "))
}

// Kind returns "unknown_tool".
func (e *UnknownExtraToolError) Kind() string { return "unknown_tool" }

// Select returns the default tools and the extra ones named, in Tools'
// order. A name that is no extra tool is an *UnknownExtraToolError.
func Select(extra []string) ([]*Tool, error) {
	for _, name := range extra {
		if t, ok := Lookup(name); !ok || !t.Extra {
			return nil, &UnknownExtraToolError{Name: name}
		}
	}
	return slices.DeleteFunc(Tools(), func(t *Tool) bool { return t.Extra && !slices.Contains(extra, t.Name) }), nil
}

// Names are the tools' names.
func Names(tools []*Tool) []string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return names
}
