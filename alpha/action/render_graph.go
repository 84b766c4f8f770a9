package action

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/graph"
	"github.com/fastopm/fastopm/pkg/graphsvg"
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
}

// The render-graph output formats.
const (
	GraphMermaid = "mermaid"
	GraphDOT     = "dot"
	GraphSVG     = "svg"
)

// Run writes the drawing to w. Nothing is written when a catalog cannot be
// read or the selection fails.
func (r RenderGraph) Run(ctx context.Context, w io.Writer) error {
	g, err := LoadGraph(ctx, r.Refs, r.Sources, r.MaxFileSize)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	switch r.Format {
	case "", GraphMermaid:
		err = g.WriteMermaid(&buf, r.Options)
	case GraphDOT, GraphSVG:
		err = g.WriteDOT(&buf, r.Options.Selection)
		if err == nil && r.Format == GraphSVG {
			var svg []byte
			if svg, err = graphsvg.SVG(ctx, buf.Bytes()); err == nil {
				buf.Reset()
				buf.Write(svg)
			}
		}
	default:
		err = fmt.Errorf("unknown graph format %q", r.Format)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
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
