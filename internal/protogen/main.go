// Command protogen writes extension/src/protocol.gen.ts: the TypeScript
// shapes of the bridge's editor protocol, generated from the Go types that
// are their one source. Run it at the repository root after changing a
// type the protocol carries:
//
//	go run ./internal/protogen
//
// A test in this package fails while the file is stale, and
// `go run ./internal/protogen -check` says whether it is.
//
// It reads two tables of package handlers and every type they reach:
//
//   - the method table, the one map literal (*Handlers).Methods returns
//     (handlers/table.go). An entry's Handle is handle(fn), fn being a
//     func(context.Context, *P) (R, error): P is the method's params and
//     R its result (a pointer R is its element: a handler answers a value
//     or an error).
//   - the notifications table, `var notifications = map[string]any{...}`
//     (handlers/notifications.go): each notification the bridge sends,
//     with a value of its params type.
//
// It also reads the tools' registry (package ohtools, tools.go).
//
// It writes BridgeRequests (method → {params, result}),
// BridgeNotifications (method → params) and a declaration for each named
// type reached, sorted by name. Go types become TypeScript as
// encoding/json writes them:
//
//   - a field is its json tag's name; "-" and unexported fields are
//     skipped; untagged embedded structs are flattened, with encoding/json's
//     rules for names they share.
//   - omitempty (or omitzero) makes the field optional: `name?: T`.
//   - a pointer, slice or map field without omitempty is `T | null`: a
//     nil one marshals as null. The generator cannot see that some code
//     always allocates, so every such field says null; it is the one rule
//     for all of them. Inside slices and maps, and for a handler's result,
//     pointers are taken to be non-nil.
//   - bool is boolean, every integer and float type number, string string;
//     the ",string" option makes a string. []byte is a string (base64).
//   - map[K]V is Record<string, V>; slices and arrays are T[].
//   - a named string type whose package declares constants of it is the
//     union of their values.
//   - any, other interfaces and json.RawMessage are unknown. A sealed
//     interface (one with an unexported method, like updates.Update) is
//     the union of its package's types that implement it, discriminated
//     by the string field each of them sets only to constants no other
//     member uses, in the composite literals and assignments of the
//     module's packages the generator loads (handlers and what it
//     imports); Update's is sessionUpdate. That field's type is the union
//     of those constants.
//   - time.Time is a string. Any other type with its own MarshalJSON or
//     MarshalText needs an entry in overrides (typescript.go); without one
//     the generator stops.
//   - A struct with no fields is Record<string, never>.
//
// Params are read by the bridge: encoding/json leaves a field the client
// leaves out at its zero value, and each handler checks what it needs. A
// named type only params reach is therefore written with every field
// optional (pointers, slices and maps also taking null). A type results or
// notifications reach too is written as the bridge sends it, which is
// also a valid thing to send.
//
// Type names are the Go names with a capital first letter; when two
// packages' types would share a name, both take their package's name in
// front (UpdatesLocation). Doc comments of types and fields come along.
//
// The module's packages are type-checked from source with go/types; other
// packages through the standard library's source importer, without cgo.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// output is the generated file, relative to the module's root.
const output = "extension/src/protocol.gen.ts"

// handlersPath is the package with the tables, relative to the module.
const handlersPath = "handlers"

// eventsPath is the package of the agent-server's events, relative to the
// module; a module without it has no events to write.
const eventsPath = "ohevents"

func main() {
	check := flag.Bool("check", false, "only report whether "+output+" is up to date (exit 1 if not)")
	flag.Parse()
	root, err := moduleRoot()
	if err != nil {
		fatal(err)
	}
	src, err := generate(root)
	if err != nil {
		fatal(err)
	}
	path := filepath.Join(root, filepath.FromSlash(output))
	if *check {
		old, _ := os.ReadFile(path)
		if !bytes.Equal(old, src) {
			fatal(fmt.Errorf("%s is stale: run go run ./internal/protogen", output))
		}
		return
	}
	if err := os.WriteFile(path, src, 0o644); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "protogen:", err)
	os.Exit(1)
}

// moduleRoot is the directory of the go.mod above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// generate returns the TypeScript for the module at root.
func generate(root string) ([]byte, error) {
	l, err := newLoader(root)
	if err != nil {
		return nil, err
	}
	tools, cardKind, err := readTools(l)
	if err != nil {
		return nil, err
	}
	return generateWith(l, tools, cardKind)
}

// generateWith returns the TypeScript for the module l loads, with the
// tools given (none for a module without them).
func generateWith(l *loader, tools []tool, cardKind types.Type) ([]byte, error) {
	p, err := l.load(l.module + "/" + handlersPath)
	if err != nil {
		return nil, err
	}
	reqs, err := readMethods(l, p)
	if err != nil {
		return nil, err
	}
	notes, err := readNotifications(l, p)
	if err != nil {
		return nil, err
	}
	asks, err := readEditorRequests(l, p)
	if err != nil {
		return nil, err
	}
	var events []eventKind
	if _, err := os.Stat(filepath.Join(l.root, eventsPath)); err == nil {
		ep, err := l.load(l.module + "/" + eventsPath)
		if err != nil {
			return nil, err
		}
		if events, err = readEventKinds(l, ep); err != nil {
			return nil, err
		}
	}
	return write(l, reqs, notes, asks, tools, cardKind, events)
}

// write walks the tables' types and writes the file.
func write(l *loader, reqs []request, notes []notification, asks []request, tools []tool, cardKind types.Type, events []eventKind) ([]byte, error) {
	g := newGen(l)
	for _, e := range events {
		g.reach(e.typ, out)
	}
	for _, r := range reqs {
		g.reach(r.result, out)
	}
	for _, n := range notes {
		g.reach(n.params, out)
	}
	for _, a := range asks {
		g.reach(a.params, out)
	}
	for _, r := range reqs {
		g.reach(r.params, in)
	}
	for _, a := range asks {
		g.reach(a.result, in)
	}
	for _, t := range tools {
		g.reach(t.args, out)
	}
	if len(tools) > 0 {
		g.reach(cardKind, out)
	}
	g.assignNames("BridgeRequests", "BridgeNotifications", "EditorRequests", "AgentServerEvent", "agentServerEventKinds")
	if len(g.errs) > 0 {
		return nil, errors.Join(g.errs...)
	}
	var b strings.Builder
	b.WriteString(header)
	b.WriteString("\n/** The methods the bridge serves: each one's params and result. */\n")
	b.WriteString("export interface BridgeRequests {\n")
	for _, r := range reqs {
		fmt.Fprintf(&b, "  %s: { params: %s; result: %s };\n", quote(r.method), g.ts(r.params, in, "  "), g.result(r.result))
	}
	b.WriteString("}\n\n/** The notifications the bridge sends the editor: each one's params. */\n")
	b.WriteString("export interface BridgeNotifications {\n")
	for _, n := range notes {
		fmt.Fprintf(&b, "  %s: %s;\n", quote(n.method), g.ts(n.params, out, "  "))
	}
	b.WriteString("}\n\n/** The requests the bridge sends the editor: the params it sends, the result it reads. */\n")
	b.WriteString("export interface EditorRequests {\n")
	for _, a := range asks {
		fmt.Fprintf(&b, "  %s: { params: %s; result: %s };\n", quote(a.method), g.ts(a.params, out, "  "), g.ts(a.result, in, "  "))
	}
	b.WriteString("}\n")
	if len(tools) > 0 {
		g.writeTools(&b, tools, cardKind)
	}
	if len(events) > 0 {
		b.WriteString(g.events(events))
	}
	var decls []*types.TypeName
	for tn := range g.names {
		decls = append(decls, tn)
	}
	sortByName(decls, g.names)
	for _, tn := range decls {
		b.WriteString("\n")
		b.WriteString(g.declaration(tn))
	}
	if len(g.errs) > 0 {
		return nil, errors.Join(g.errs...)
	}
	return []byte(b.String()), nil
}

// result writes a handler's result: a pointer is its element, a slice or
// map may be null.
func (g *gen) result(t types.Type) string {
	if _, ok := types.Unalias(t).Underlying().(*types.Pointer); ok {
		return g.ts(t, out, "  ")
	}
	if nullable(t) {
		return g.ts(t, out, "  ") + " | null"
	}
	return g.ts(t, out, "  ")
}

func sortByName(tns []*types.TypeName, names map[*types.TypeName]string) {
	sort.Slice(tns, func(i, j int) bool { return names[tns[i]] < names[tns[j]] })
}

const header = `// Code generated by go run ./internal/protogen; DO NOT EDIT.
//
// The bridge's editor protocol in TypeScript, from the Go types that are
// its one source: the method table (handlers/table.go), the notifications
// and editor-requests tables (handlers/notifications.go), the tools'
// declarations (ohtools) and every type they reach. To change a shape, change the Go type and run
// ` + "`go run ./internal/protogen`" + ` at the repository root; the rules are in
// internal/protogen's doc comment.
`

// events writes AgentServerEvent, the union of the event kinds ohevents
// reads, each its type with its kind's name for the kind, and the list of
// those names, which tells a known kind from another at run time.
func (g *gen) events(events []eventKind) string {
	var b strings.Builder
	b.WriteString("\n/**\n * An agent-server event of a kind the bridge reads (ohevents.Kinds), as the\n")
	b.WriteString(" * server sends it in openhands/did_receive_event. Another kind may come\n")
	b.WriteString(" * (a later server's): agentServerEventKinds tells them apart.\n */\n")
	b.WriteString("export type AgentServerEvent =\n")
	for _, e := range events {
		fmt.Fprintf(&b, "  | (%s & { kind: %s })\n", g.ts(e.typ, out, "  "), quote(e.kind))
	}
	b.WriteString("  ;\n\n/** The kinds of AgentServerEvent. */\n")
	b.WriteString("export const agentServerEventKinds: readonly AgentServerEvent['kind'][] = [\n")
	for _, e := range events {
		fmt.Fprintf(&b, "  %s,\n", quote(e.kind))
	}
	b.WriteString("];\n")
	return b.String()
}
