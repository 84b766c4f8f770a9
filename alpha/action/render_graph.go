package action

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/graph"
	"github.com/fastopm/fastopm/pkg/graphsvg"
	"github.com/fastopm/fastopm/pkg/progress"
)

// RenderGraph draws the upgrade graph of one or more catalogs (directories
// or catalog images) as upstream's `opm alpha render-graph` does.
type RenderGraph struct {
	// Refs are the catalogs; their channels and bundles compose into one
	// graph.
	Refs []string
	// Sources resolves a reference; nil means directories only. Bundle
	// references are refused (upstream draws catalogs only).
	Sources SourceResolver
	// MaxFileSize is the largest catalog file read, in bytes (0: the
	// loader's default; < 0: no limit).
	MaxFileSize int64
	// Options select what to draw and how.
	Options graph.MermaidOptions
	// Format is mermaid (upstream's text, the default), dot (Graphviz's
	// language) or svg (a picture laid out by Graphviz, in process).
	Format string
	// Progress, when set, says on a terminal that a large drawing is
	// being laid out, and how large.
	Progress *progress.Reporter
}

// The render-graph output formats.
const (
	GraphMermaid = "mermaid"
	GraphDOT     = "dot"
	GraphSVG     = "svg"
)

// The largest drawing -o svg lays out (MaxSVG): past either bound it is
// refused before Graphviz starts. Graphviz's memory grows with the square
// of the channels drawn side by side, and its time with the nodes and
// edges; measured on a 2-core machine (docs/render-graph.md), 1,000
// one-bundle channels take 2 s and 710 MB, 2,000 take 2.6 GB; a wrapped
// chain of 10,000 bundles (20,000 nodes and edges) takes 4 s and 190 MB.
const (
	MaxSVGChannels = 1000
	MaxSVGElements = 25000 // nodes + edges
)

// Past these, -o svg warns on a terminal that the layout takes a while
// (the whole 123 MB benchmark catalog: 394 channels, 3,800 nodes and
// 4,500 edges, 30 s of CPU).
const (
	warnSVGChannels = 100
	warnSVGElements = 3000
)

// ErrDrawingTooLarge is returned, wrapped, for a drawing past
// MaxSVGChannels or MaxSVGElements.
var ErrDrawingTooLarge = errors.New("the graph is too large to lay out as SVG")

// checkSVGSize refuses a drawing too large to lay out, saying how large
// it is, the limit, and what to draw instead.
func checkSVGSize(size graph.DrawingSize) error {
	var what string
	switch {
	case size.Channels > MaxSVGChannels:
		what = fmt.Sprintf("%d channels, past the limit of %d", size.Channels, MaxSVGChannels)
	case size.Nodes+size.Edges > MaxSVGElements:
		what = fmt.Sprintf("%d nodes and edges, past the limit of %d", size.Nodes+size.Edges, MaxSVGElements)
	default:
		return nil
	}
	return fmt.Errorf("%w: %s (%s, %s, %s, %s); %s", ErrDrawingTooLarge, what, plural(size.Packages, "package"), plural(size.Channels, "channel"),
		plural(size.Nodes, "node"), plural(size.Edges, "edge"), smallerDrawing(size))
}

// smallerDrawing says what to draw instead of a drawing too large.
func smallerDrawing(size graph.DrawingSize) string {
	var hints []string
	if size.Packages > 1 {
		hints = append(hints, "-p PACKAGE draws one package")
	}
	if size.Longest > 1 {
		hints = append(hints, "--minimum-edge BUNDLE draws from a later bundle")
	}
	return strings.Join(append(hints, "-o dot and -o mermaid print the graph as text, without a layout or a limit"), "; ")
}

// Run writes the drawing to w. Nothing is written when a catalog cannot be
// read, the selection fails, or the drawing is too large (-o svg).
func (r RenderGraph) Run(ctx context.Context, w io.Writer) error {
	g, err := LoadGraph(ctx, r.Refs, r.Sources, r.MaxFileSize)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	switch r.Format {
	case "", GraphMermaid:
		err = g.WriteMermaid(&buf, r.Options)
	case GraphDOT:
		err = g.WriteDOT(&buf, r.Options.Selection)
	case GraphSVG:
		err = r.drawSVG(ctx, g, &buf)
	default:
		err = fmt.Errorf("unknown graph format %q", r.Format)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// drawSVG lays out the selected graph as SVG into buf, refusing it first
// when it is too large.
func (r RenderGraph) drawSVG(ctx context.Context, g *graph.Graph, buf *bytes.Buffer) error {
	sel := r.Options.Selection
	size, err := g.DrawingSize(sel)
	if err != nil {
		return err
	}
	if err := checkSVGSize(size); err != nil {
		return err
	}
	if size.Channels > warnSVGChannels || size.Nodes+size.Edges > warnSVGElements {
		hint := ""
		if size.Packages > 1 {
			hint = "; -p PACKAGE draws one package"
		}
		r.Progress.Printf("warning: a large drawing (%s, %s, %s, %s): its layout takes a while%s", plural(size.Packages, "package"), plural(size.Channels, "channel"),
			plural(size.Nodes, "node"), plural(size.Edges, "edge"), hint)
	}
	if err := g.WriteDOT(buf, sel); err != nil {
		return err
	}
	task := r.Progress.Start(fmt.Sprintf("laying out %d nodes and %d edges with Graphviz", size.Nodes, size.Edges), 0)
	svg, err := graphsvg.SVG(ctx, buf.Bytes())
	task.Done("")
	if err != nil {
		if errors.Is(err, graphsvg.ErrTooLarge) {
			return fmt.Errorf("%w; %s", err, smallerDrawing(size))
		}
		return err
	}
	buf.Reset()
	buf.Write(svg)
	return nil
}

// LoadGraph reads the upgrade graph of the catalogs refs name, in order.
// Only what the graph needs is kept: channel entries, bundle names and
// versions, deprecations.
func LoadGraph(ctx context.Context, refs []string, sources SourceResolver, maxFileSize int64) (*graph.Graph, error) {
	if sources == nil {
		sources = DirResolver{}
	}
	bld := graph.NewBuilder()
	for _, ref := range refs {
		if err := loadGraphRef(ctx, bld, ref, sources, maxFileSize); err != nil {
			return nil, fmt.Errorf("render reference %q: %w", ref, err)
		}
	}
	return bld.Build()
}

func loadGraphRef(ctx context.Context, bld *graph.Builder, ref string, sources SourceResolver, maxFileSize int64) error {
	src, err := sources.Resolve(ctx, ref)
	if err != nil {
		return err
	}
	if src.Close != nil {
		defer src.Close() //nolint:errcheck // best-effort cleanup of a temporary unpack
	}
	if src.FS == nil {
		bld.AddConfig(src.Config)
		return nil
	}
	bld.NextCatalog()
	var (
		mu   sync.Mutex
		errs declcfg.Errors
	)
	err = declcfg.Walk(ctx, src.FS, func(b *declcfg.Blob) error {
		if err := bld.AddBlob(b); err != nil {
			mu.Lock()
			errs = append(errs, &declcfg.Error{Path: b.Path, Line: b.Line, Col: b.Col, Err: err})
			mu.Unlock()
		}
		return nil
	}, declcfg.WithMaxFileSize(maxFileSize))
	var walkErrs declcfg.Errors
	if err != nil && !errors.As(err, &walkErrs) {
		return err
	}
	if errs = append(walkErrs, errs...); len(errs) > 0 {
		sort.SliceStable(errs, func(i, j int) bool {
			if errs[i].Path != errs[j].Path {
				return errs[i].Path < errs[j].Path
			}
			return errs[i].Line < errs[j].Line
		})
		return errs
	}
	return nil
}

// plural is "1 what" or "N whats".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
