// Command opm-graphviz lays out a Graphviz DOT graph with Graphviz's dot
// engine and writes it as SVG: the DOT on standard input, the SVG on
// standard output, an error on standard error with exit code 1.
//
// opm runs it for `opm alpha render-graph -o svg` and for the HTTP side's
// graph.svg (pkg/graphsvg). It is a program of its own because Graphviz,
// compiled to WebAssembly and run by github.com/goccy/go-graphviz, is
// compiled and instantiated when the Go package is initialised: every
// process that links it pays about 0.1 s and 15 MB at start (0.8 s and
// 20 MB more, and 18 MB written to $TMPDIR, when its compilation cache is
// cold), whether it draws or not. Kept out of opm, only a drawing pays.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/goccy/go-graphviz"

	"github.com/fastopm/fastopm/pkg/graphsvg"
)

// maxDOT bounds the input: the DOT of a whole 500 MB catalog is a few MB.
const maxDOT = 256 << 20

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "usage: opm-graphviz < graph.dot > graph.svg")
		os.Exit(2)
	}
	if err := run(context.Background(), os.Stdin, os.Stdout, maxMemory()); err != nil {
		fmt.Fprintln(os.Stderr, "opm-graphviz:", err)
		if errors.Is(err, errTooLarge) {
			os.Exit(graphsvg.ExitTooLarge)
		}
		os.Exit(1)
	}
}

var errTooLarge = errors.New("the drawing used more memory than allowed")

// maxMemory is the bound opm passes in graphsvg.EnvMaxMemory; 0 is none.
func maxMemory() int64 {
	n, err := strconv.ParseInt(os.Getenv(graphsvg.EnvMaxMemory), 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// peakMemory is this process's peak resident memory in bytes (VmHWM,
// Linux); 0 where it is not known.
func peakMemory() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// run draws; past limit bytes of peak memory (0: no limit) it writes
// nothing and returns errTooLarge.
func run(ctx context.Context, in io.Reader, out io.Writer, limit int64) error {
	dot, err := io.ReadAll(io.LimitReader(in, maxDOT+1))
	if err != nil {
		return fmt.Errorf("read DOT: %w", err)
	}
	if len(dot) > maxDOT {
		return fmt.Errorf("the DOT input is over %d bytes", maxDOT)
	}
	gv, err := graphviz.New(ctx)
	if err != nil {
		return fmt.Errorf("start graphviz: %w", err)
	}
	defer gv.Close()
	g, err := graphviz.ParseBytes(dot)
	if err != nil {
		return fmt.Errorf("parse DOT: %w", err)
	}
	defer g.Close()
	var buf bytes.Buffer
	if err := gv.Render(ctx, g, graphviz.SVG, &buf); err != nil {
		return fmt.Errorf("render SVG: %w", err)
	}
	if peak := peakMemory(); limit > 0 && peak > limit {
		return fmt.Errorf("%w: %d MB, more than %d MB", errTooLarge, peak>>20, limit>>20)
	}
	_, err = out.Write(buf.Bytes())
	return err
}
