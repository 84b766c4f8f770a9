// Package graphsvg lays out and draws a Graphviz DOT graph as SVG, with
// Graphviz itself: the opm-graphviz program (cmd/opm-graphviz: Graphviz
// compiled to WebAssembly, run by github.com/goccy/go-graphviz on the
// wazero runtime), so no dot binary, container or browser is needed.
//
// Graphviz runs in a child process rather than in opm because its Go
// package compiles and instantiates the WebAssembly module when it is
// initialised, in every process that links it; opm itself stays free of
// that start-up cost (see cmd/opm-graphviz).
package graphsvg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Program is the name of the drawing program.
const Program = "opm-graphviz"

// EnvProgram, when set, is the path of the drawing program.
const EnvProgram = "OPM_GRAPHVIZ"

// EnvMaxMemory is how SVG tells the drawing program MaxMemory, in bytes:
// opm-graphviz reads its own peak resident memory when it has drawn and,
// past the bound, writes nothing and exits with ExitTooLarge. The
// sampling of /proc stops a drawing that grows past the bound; this
// catches one that ended between two samples, so the verdict never
// depends on the machine's speed. (The kernel's count of an ended child,
// getrusage's ru_maxrss, would not do: a child that opm's os/exec starts
// inherits in it the peak of opm's own memory.)
const EnvMaxMemory = "OPM_GRAPHVIZ_MAX_MEMORY"

// ExitTooLarge is the exit code of a drawing program that went past
// EnvMaxMemory.
const ExitTooLarge = 3

// ErrNoProgram is returned when the drawing program cannot be found.
var ErrNoProgram = errors.New("drawing SVG needs the " + Program + " program (Graphviz, kept out of opm so that opm starts fast): " +
	"put it beside opm or on the PATH (make build builds bin/" + Program + "; or go install github.com/fastopm/fastopm/cmd/" + Program + "@VERSION), " +
	"or set " + EnvProgram + " to its path; -o dot needs nothing")

// find locates the drawing program: $OPM_GRAPHVIZ, then beside the
// running executable, then on the PATH.
func find() (string, error) {
	if p := os.Getenv(EnvProgram); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvProgram, p, err)
		}
		return p, nil
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), Program)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(Program); err == nil {
		return p, nil
	}
	return "", ErrNoProgram
}

// Available reports whether SVG can be drawn.
func Available() bool {
	_, err := find()
	return err == nil
}

// The bounds of one drawing, whatever the caller estimated: past them the
// drawing program is stopped. Graphviz's memory grows with the square of
// the clusters side by side (2,000 one-bundle channels: 2.6 GB), so an
// estimate that is wrong must still never exhaust the machine.
var (
	// MaxMemory is the most resident memory, in bytes, of the drawing
	// program (read from /proc; not enforced where there is none).
	MaxMemory int64 = 2 << 30
	// MaxTime is the longest a drawing may take.
	MaxTime = 10 * time.Minute
)

// ErrTooLarge is returned, wrapped, when a drawing went past MaxMemory or
// MaxTime.
var ErrTooLarge = errors.New("the graph is too large to lay out")

// SVG lays out dot with Graphviz's dot engine and returns the SVG. The
// drawing stops when ctx is done, or when it goes past MaxMemory or
// MaxTime.
func SVG(ctx context.Context, dot []byte) ([]byte, error) {
	prog, err := find()
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithTimeout(ctx, MaxTime)
	defer cancel()
	cmd := exec.CommandContext(runCtx, prog)
	cmd.Env = append(os.Environ(), EnvMaxMemory+"="+strconv.FormatInt(MaxMemory, 10))
	cmd.Stdin = bytes.NewReader(dot)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", Program, err)
	}
	stop := make(chan struct{})
	watched := make(chan int64, 1)
	go func() { watched <- watchMemory(cmd.Process, MaxMemory, stop) }()
	err = cmd.Wait()
	close(stop)
	var exit *exec.ExitError
	if peak := <-watched; peak > MaxMemory || (errors.As(err, &exit) && exit.ExitCode() == ExitTooLarge) {
		return nil, fmt.Errorf("%w: Graphviz used more than %d MB and was stopped", ErrTooLarge, MaxMemory>>20)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if runCtx.Err() != nil {
			return nil, fmt.Errorf("%w: Graphviz took more than %s and was stopped", ErrTooLarge, MaxTime)
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("%s: %s", Program, msg)
	}
	return out.Bytes(), nil
}

// watchMemory reads the resident memory of p every 50 ms until stop is
// closed, kills p when it goes past limit, and returns the most it saw.
// Where /proc cannot be read it returns at once.
func watchMemory(p *os.Process, limit int64, stop <-chan struct{}) int64 {
	statm := fmt.Sprintf("/proc/%d/statm", p.Pid)
	page := int64(os.Getpagesize())
	var peak int64
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		b, err := os.ReadFile(statm)
		if err != nil {
			return peak
		}
		// size resident shared text lib data dt, in pages.
		f := strings.Fields(string(b))
		if len(f) < 2 {
			return peak
		}
		pages, _ := strconv.ParseInt(f[1], 10, 64)
		if rss := pages * page; rss > peak {
			peak = rss
		}
		if peak > limit {
			_ = p.Kill()
			return peak
		}
		select {
		case <-stop:
			return peak
		case <-tick.C:
		}
	}
}
