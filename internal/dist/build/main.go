// Command build makes the bridge's packages into dist/ (`task dist` runs
// it once each platform's binary is built): the npm tarballs, the wheels,
// the release archives and the ACP registry entry, all at the extension's
// version. Run it from the repository's root.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/oh-bridge/oh-bridge/internal/dist"
)

func main() {
	out := flag.String("out", "dist", "where the packages go (emptied first)")
	bins := flag.String("bins", "extension/bin", "the binaries, as <target>/oh-bridge")
	flag.Parse()
	version, err := dist.ExtensionVersion(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "build:", err)
		os.Exit(1)
	}
	b := &dist.Build{Root: ".", Bins: *bins, Out: *out, Version: version, Log: os.Stdout}
	if err := b.Run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "build:", err)
		os.Exit(1)
	}
}
