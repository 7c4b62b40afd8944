package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/oh-bridge/oh-bridge/localserver"
)

// trustServerMain is `oh-bridge trust-server URL`: the person confirms,
// from a terminal, an agent-server on this machine that another user runs
// (a team's service account), after seeing who runs it. The bridge then
// talks to it, on both faces, until the port has another owner. It is
// the way every refusal names; the editors also ask in their own way.
func trustServerMain(args []string, stdin io.Reader, stdout io.Writer) int {
	fset := flag.NewFlagSet("oh-bridge trust-server", flag.ContinueOnError)
	yes := fset.Bool("yes", false, "confirm without asking (the owner is still printed)")
	fset.Usage = func() {
		fmt.Fprintln(fset.Output(), "Usage: oh-bridge trust-server [--yes] URL")
		fmt.Fprintln(fset.Output(), "\nConfirm an OpenHands agent-server on this machine that another user runs, after")
		fmt.Fprintln(fset.Output(), "seeing who runs it. The confirmation is kept in "+localserver.ChoicesPath()+".")
		fset.PrintDefaults()
	}
	if err := fset.Parse(args); err != nil {
		return 2
	}
	if fset.NArg() != 1 {
		fset.Usage()
		return 2
	}
	url := strings.TrimRight(fset.Arg(0), "/")
	if !localserver.IsLocal(url) {
		fmt.Fprintf(os.Stderr, "oh-bridge trust-server: %s is not a server on this machine (http://127.0.0.1:PORT): there is no owner to confirm; a server you name elsewhere is used as named\n", url)
		return 2
	}
	t := trust()
	owner, err := t.Check(url)
	var ue *localserver.UntrustedError
	switch {
	case err == nil:
		fmt.Fprintf(stdout, "%s is run by %s: the bridge already trusts it.\n", url, owner.Describe())
		return 0
	case asUntrusted(err, &ue) && ue.Unknown:
		fmt.Fprintf(stdout, "This system does not tell who runs %s.\n", url)
	case asUntrusted(err, &ue):
		fmt.Fprintf(stdout, "%s is run by %s, not by you.\n", url, ue.Owner.Describe())
	default:
		fmt.Fprintln(os.Stderr, "oh-bridge trust-server:", err)
		return 1
	}
	fmt.Fprintln(stdout, "Your keys, and the tools of the workspaces you open (terminals and files), go to the server the bridge uses.")
	if !*yes {
		fmt.Fprint(stdout, "Trust it? [y/N] ")
		answer, _ := bufio.NewReader(stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			fmt.Fprintln(stdout, "Not confirmed.")
			return 1
		}
	}
	uid := ue.Owner.UID
	if ue.Unknown {
		uid = -1
	}
	if err := t.Confirm(url, uid); err != nil {
		fmt.Fprintln(os.Stderr, "oh-bridge trust-server:", err)
		return 1
	}
	fmt.Fprintf(stdout, "Confirmed, and kept in %s; remove it from trustedServers there to take it back.\n", localserver.ChoicesPath())
	return 0
}

func asUntrusted(err error, ue **localserver.UntrustedError) bool {
	u, ok := err.(*localserver.UntrustedError)
	if ok {
		*ue = u
	}
	return ok
}
