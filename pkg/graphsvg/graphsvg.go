// Package graphsvg lays out and draws a Graphviz DOT graph as SVG, in
// process: Graphviz itself, compiled to WebAssembly and run by
// github.com/goccy/go-graphviz (on the wazero runtime), so no dot binary,
// container or browser is needed.
package graphsvg

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/goccy/go-graphviz"
)

var (
	mu       sync.Mutex
	instance *graphviz.Graphviz
)

// SVG lays out dot with Graphviz's dot engine and returns the SVG. Calls
// are serialised: one Graphviz instance is shared by the process.
func SVG(ctx context.Context, dot []byte) ([]byte, error) {
	mu.Lock()
	defer mu.Unlock()
	if instance == nil {
		gv, err := graphviz.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("start graphviz: %w", err)
		}
		instance = gv
	}
	g, err := graphviz.ParseBytes(dot)
	if err != nil {
		return nil, fmt.Errorf("parse DOT: %w", err)
	}
	defer g.Close()
	var buf bytes.Buffer
	if err := instance.Render(ctx, g, graphviz.SVG, &buf); err != nil {
		return nil, fmt.Errorf("render SVG: %w", err)
	}
	return buf.Bytes(), nil
}
