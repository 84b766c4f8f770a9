// Command opm is a drop-in, faster replacement for operator-registry's opm:
// it renders, validates and serves file-based OLM catalogs.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/fastopm/fastopm/cmd/opm/internal/cli"
	"github.com/fastopm/fastopm/pkg/progress"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, cli.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Terminal: progress.IsTerminal(os.Stderr)}, os.Args[1:])
	stop()
	os.Exit(code)
}
