//go:build !unix

package cli

import (
	"os"
	"os/signal"
	"syscall"
)

// execFull runs the program p with args as a child with s's streams
// (execChild): there is no exec here. Ctrl+C reaches opm-full too, which
// stops as it does; this opm no longer reacts to it (no stop of its own
// 0.75 s later, pkg/interrupt), waits for opm-full and exits with its
// code.
func execFull(s Streams, p string, args []string, env []string) (int, error) {
	signal.Ignore(os.Interrupt, syscall.SIGTERM)
	return execChild(s, p, args, env)
}
