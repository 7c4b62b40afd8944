package main

import (
	"fmt"
	"go/types"
	"reflect"
	"strings"

	"github.com/oh-bridge/oh-bridge/ohtools"
)

// The tools: what the extension shows of a tool call comes from the
// tools' declarations (ohtools.Spec), read from the registry itself. It
// writes ToolArguments (a tool's name → its arguments' type, the Go type
// they parse into), ToolName, and toolCards (a tool's name → how its calls
// are shown, ohtools.CardKind), so the extension switches on card kinds
// and reads typed arguments, never a tool's name.

// toolsPath is the package that declares the tools, relative to the
// module.
const toolsPath = "ohtools"

// tool is one declared tool as the generator writes it.
type tool struct {
	name  string
	args  types.Type
	card  string
	extra bool
}

// readTools takes the registry's tools and finds each one's argument type
// among the types of package ohtools as l loads it.
func readTools(l *loader) (tools []tool, cardKind types.Type, err error) {
	p, err := l.load(l.module + "/" + toolsPath)
	if err != nil {
		return nil, nil, err
	}
	lookup := func(rt reflect.Type) (types.Type, error) {
		for rt.Kind() == reflect.Pointer {
			rt = rt.Elem()
		}
		tn, ok := p.types.Scope().Lookup(rt.Name()).(*types.TypeName)
		if !ok || rt.PkgPath() != p.types.Path() {
			return nil, fmt.Errorf("%s.%s is not a type of %s", rt.PkgPath(), rt.Name(), p.types.Path())
		}
		return tn.Type(), nil
	}
	for _, t := range ohtools.Tools() {
		args, err := lookup(t.ArgsType())
		if err != nil {
			return nil, nil, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		tools = append(tools, tool{name: t.Name, args: args, card: string(t.Card), extra: t.Extra})
	}
	cardKind, err = lookup(reflect.TypeFor[ohtools.CardKind]())
	return tools, cardKind, err
}

// writeTools writes the tools' part of the file.
func (g *gen) writeTools(b *strings.Builder, tools []tool, cardKind types.Type) {
	b.WriteString("\n/** The tools the bridge declares (ohtools): each one's arguments, as the Go type they parse into. */\n")
	b.WriteString("export interface ToolArguments {\n")
	for _, t := range tools {
		fmt.Fprintf(b, "  %s: %s;\n", property(t.name), g.ts(t.args, out, "  "))
	}
	b.WriteString("}\n\n/** A tool the bridge declares. */\nexport type ToolName = keyof ToolArguments;\n")
	fmt.Fprintf(b, "\n/** How the calls of each tool are shown (ohtools.Spec.Card). */\nexport const toolCards: { readonly [T in ToolName]: %s } = {\n", g.ts(cardKind, out, "  "))
	for _, t := range tools {
		fmt.Fprintf(b, "  %s: %s,\n", property(t.name), quote(t.card))
	}
	b.WriteString("};\n\n/** The tools served only when asked for (--extra-tools): the default ones are OpenHands' own. */\n")
	var extra []string
	for _, t := range tools {
		if t.extra {
			extra = append(extra, quote(t.name))
		}
	}
	fmt.Fprintf(b, "export const extraTools: readonly ToolName[] = [%s];\n", strings.Join(extra, ", "))
}
