// Command opm is a drop-in, faster replacement for operator-registry's opm:
// it renders, validates and serves file-based OLM catalogs.
package main

import (
	"context"
	"os"

	"github.com/fastopm/fastopm/cmd/opm/internal/cli"
	"github.com/fastopm/fastopm/pkg/interrupt"
	"github.com/fastopm/fastopm/pkg/progress"
)

func main() {
	// SIGINT and SIGTERM cancel the command's context; a command that has
	// not returned shortly after is stopped (pkg/interrupt).
	ctx, stop := interrupt.Notify(context.Background(), os.Stderr)
	code := cli.Main(ctx, cli.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Terminal: progress.IsTerminal(os.Stderr)}, os.Args[1:])
	stop()
	os.Exit(code)
}
