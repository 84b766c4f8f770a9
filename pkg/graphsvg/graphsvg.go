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
	"strings"
)

// Program is the name of the drawing program.
const Program = "opm-graphviz"

// EnvProgram, when set, is the path of the drawing program.
const EnvProgram = "OPM_GRAPHVIZ"

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

// SVG lays out dot with Graphviz's dot engine and returns the SVG. The
// drawing stops when ctx is done.
func SVG(ctx context.Context, dot []byte) ([]byte, error) {
	prog, err := find()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, prog)
	cmd.Stdin = bytes.NewReader(dot)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("%s: %s", Program, msg)
	}
	return out.Bytes(), nil
}
