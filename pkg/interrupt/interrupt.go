// Package interrupt stops a command promptly on SIGINT or SIGTERM,
// whatever it is doing.
//
// A command first gets the chance to stop by itself: the signal cancels
// the context it runs under (with a cause, *Signal), and code that checks
// its context returns. Some work does not look at a context (a CUE
// evaluation, a read from a pipe): if the command has not returned within
// Grace of the signal, or at a second signal, the process exits by itself
// with the shell's code for the signal (128 + its number), after running
// the clean-ups registered with OnExit (temporary files and directories
// that a normal return would have removed) and waiting for the critical
// sections in progress (Critical: a commit by renames, which must not stop
// halfway).
package interrupt

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"
)

// Grace is how long a command has to return by itself after a signal.
const Grace = 750 * time.Millisecond

// grace is Grace; tests of a command that returns by itself lengthen it.
var grace = Grace

// Signal is the cause of a context cancelled by a signal.
type Signal struct{ os.Signal }

func (s *Signal) Error() string { return "interrupted by " + Name(s.Signal) }

// ExitCode is the shell's exit code for a process ended by the signal:
// 130 for SIGINT, 143 for SIGTERM.
func (s *Signal) ExitCode() int { return ExitCode(s.Signal) }

// ExitCode is 128 plus the signal's number.
func ExitCode(sig os.Signal) int {
	if n, ok := sig.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 1
}

// Name is the signal's name as kill(1) spells it: SIGINT, SIGTERM.
func Name(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

// Cause returns the signal that cancelled ctx, or nil.
func Cause(ctx context.Context) *Signal {
	if s, ok := context.Cause(ctx).(*Signal); ok {
		return s
	}
	return nil
}

var (
	mu       sync.Mutex
	cleanups []*func()
	critical sync.WaitGroup
	exiting  bool
)

// OnExit registers f to run if the process exits on a signal before the
// returned function is called (which unregisters f without running it).
// f must be quick and safe to run while the command is still running (it
// removes a temporary file or directory).
func OnExit(f func()) (remove func()) {
	p := &f
	mu.Lock()
	cleanups = append(cleanups, p)
	mu.Unlock()
	return func() {
		mu.Lock()
		defer mu.Unlock()
		if i := slices.Index(cleanups, p); i >= 0 {
			cleanups = slices.Delete(cleanups, i, i+1)
		}
	}
}

// Critical marks a section that the exit on a signal waits for; call the
// returned function when it ends. A section must be short: a few renames.
// Once the process has started to exit, a new section never starts: the
// call blocks until the process is gone.
func Critical() (done func()) {
	mu.Lock()
	if exiting {
		mu.Unlock()
		select {} // the process is exiting
	}
	critical.Add(1)
	mu.Unlock()
	return critical.Done
}

// Notify returns a context cancelled, with a *Signal cause, on SIGINT or
// SIGTERM, and arranges for the process to exit with ExitCode if the
// command has not returned Grace after it, or at a second signal, writing
// why to stderr. Call stop when the command has returned.
func Notify(parent context.Context, stderr io.Writer) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		var sig os.Signal
		select {
		case sig = <-sigs:
		case <-done:
			return
		}
		cancel(&Signal{sig})
		timer := time.NewTimer(grace)
		select {
		case <-done:
			return
		case <-sigs:
		case <-timer.C:
		}
		fmt.Fprintf(stderr, "Error: interrupted by %s\n", Name(sig))
		Exit(ExitCode(sig))
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(sigs)
			close(done)
			cancel(nil)
		})
	}
}

// Exit runs the registered clean-ups, waits for the critical sections in
// progress, and exits with code.
func Exit(code int) {
	mu.Lock()
	exiting = true
	fs := slices.Clone(cleanups)
	mu.Unlock()
	critical.Wait()
	for _, f := range slices.Backward(fs) {
		(*f)()
	}
	os.Exit(code)
}
