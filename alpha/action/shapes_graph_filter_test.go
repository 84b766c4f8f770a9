package action

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/internal/shapecat"
	"github.com/fastopm/fastopm/internal/testutil"
)

// writeShape writes a shape of size n as a catalog directory.
func writeShape(t testing.TB, s shapecat.Shape, n int) string {
	t.Helper()
	dir := t.TempDir()
	if err := s.WriteDir(dir, n); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRenderGraphShapes draws every shape: -o dot always; -o svg of the
// shapes at a size Graphviz lays out quickly, and a refusal, before
// Graphviz starts, of the shapes past the limits.
func TestRenderGraphShapes(t *testing.T) {
	testutil.UseGraphviz(t)
	for _, s := range shapecat.Shapes {
		t.Run(s.Name, func(t *testing.T) {
			dir := writeShape(t, s, 200)
			var dot bytes.Buffer
			if err := (RenderGraph{Refs: []string{dir}, Format: GraphDOT}).Run(context.Background(), &dot); err != nil {
				t.Fatal(err)
			}
			var svg bytes.Buffer
			if err := (RenderGraph{Refs: []string{dir}, Format: GraphSVG}).Run(context.Background(), &svg); err != nil {
				t.Fatal(err)
			}
			nodes, _ := svgTitles(t, svg.Bytes())
			want := 1
			switch s.Name {
			case "channels", "chain", "skips":
				want = 200
			case "skiprange":
				want = 200 + 199 // and one skipRange note per entry but the first
			case "shared-bundle":
				want = 200 // one node per channel it is in
			}
			got := 0
			for k := range nodes {
				if !strings.HasPrefix(k, "legend/") {
					got++
				}
			}
			if got != want {
				t.Errorf("%d bundle nodes in the SVG, want %d", got, want)
			}
		})
	}
	// Past the limits: refused with the size, the limit and what to do
	// instead, and nothing written; -o dot still prints.
	for _, tc := range []struct {
		shape string
		n     int
		want  string
	}{
		{"channels", MaxSVGChannels + 1, fmt.Sprintf("%d channels, past the limit of %d (1 package, %d channels, %d nodes, 0 edges); -o dot and -o mermaid print the graph as text", MaxSVGChannels+1, MaxSVGChannels, MaxSVGChannels+1, MaxSVGChannels+1)},
		{"chain", MaxSVGElements/2 + 1, fmt.Sprintf("%d nodes and edges, past the limit of %d (1 package, 1 channel, %d nodes, %d edges); --minimum-edge BUNDLE draws from a later bundle; -o dot", MaxSVGElements+1, MaxSVGElements, MaxSVGElements/2+1, MaxSVGElements/2)},
	} {
		s, _ := shapecat.Lookup(tc.shape)
		dir := writeShape(t, s, tc.n)
		var out bytes.Buffer
		err := RenderGraph{Refs: []string{dir}, Format: GraphSVG}.Run(context.Background(), &out)
		if !errors.Is(err, ErrDrawingTooLarge) || !strings.Contains(err.Error(), tc.want) || out.Len() != 0 {
			t.Errorf("%s %d: %v (%d bytes written)\nwant %q", tc.shape, tc.n, err, out.Len(), tc.want)
		}
		if err := (RenderGraph{Refs: []string{dir}, Format: GraphDOT}).Run(context.Background(), &out); err != nil || out.Len() == 0 {
			t.Errorf("%s %d: -o dot: %v", tc.shape, tc.n, err)
		}
	}
}

// TestFilterShapes filters every shape, whole (full) and to its heads:
// the result validates (Filter checks it) and, in full, is the catalog
// opm render writes (but for the entries, which a filter lists by name),
// byte for byte, as a stream and as a directory.
func TestFilterShapes(t *testing.T) {
	for _, s := range shapecat.Shapes {
		t.Run(s.Name, func(t *testing.T) {
			dir := writeShape(t, s, 200)
			full := &FilterConfig{Full: true}
			var stream bytes.Buffer
			sum, err := Filter{Ref: dir, Config: full, Sources: DirResolver{}, Out: &stream}.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := declcfg.LoadFS(context.Background(), os.DirFS(dir))
			if err != nil {
				t.Fatal(err)
			}
			if want := (FilterSummary{Packages: 1, Channels: len(cfg.Channels), Bundles: len(cfg.Bundles)}); sum != want {
				t.Errorf("summary %v, want %v", sum, want)
			}
			var rendered bytes.Buffer
			for _, c := range cfg.Channels {
				// A filter lists a channel's entries by name.
				slices.SortFunc(c.Entries, func(a, b declcfg.ChannelEntry) int { return strings.Compare(a.Name, b.Name) })
			}
			for i := range cfg.Bundles {
				declcfg.PrepareForRender(&cfg.Bundles[i])
			}
			if err := cfg.WriteTo(&rendered, declcfg.FormatJSON); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(stream.Bytes(), rendered.Bytes()) {
				t.Errorf("full filter: %d bytes, render: %d bytes; they differ", stream.Len(), rendered.Len())
			}
			out := filepath.Join(t.TempDir(), "out")
			if _, err := (Filter{Ref: dir, Config: full, Sources: DirResolver{}, OutputDir: out}).Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			written, err := os.ReadFile(filepath.Join(out, shapecat.Package, "catalog.json"))
			if err != nil || !bytes.Equal(written, rendered.Bytes()) {
				t.Errorf("directory: %d bytes (%v), want the render's %d", len(written), err, rendered.Len())
			}
			var heads bytes.Buffer
			sum, err = Filter{Ref: dir, Config: &FilterConfig{}, Sources: DirResolver{}, Out: &heads}.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if sum.Bundles != 1 || sum.Channels != 1 {
				t.Errorf("heads: %v, want the default channel's head", sum)
			}
		})
	}
}

// largestWrite records the largest single write.
type largestWrite struct {
	n, largest int
}

func (w *largestWrite) Write(p []byte) (int, error) {
	w.n += len(p)
	w.largest = max(w.largest, len(p))
	return len(p), nil
}

// TestFilterDeepStreams: the deep shape, a list nested 9,000 deep (18 KB
// compact, 324 MB indented), is written in pieces, never held whole.
func TestFilterDeepStreams(t *testing.T) {
	s, _ := shapecat.Lookup("deep")
	dir := writeShape(t, s, s.N)
	var w largestWrite
	if _, err := (Filter{Ref: dir, Config: &FilterConfig{Full: true}, Sources: DirResolver{}, Out: &w}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if w.n < 300<<20 || w.largest > 1<<20 {
		t.Errorf("wrote %d bytes, the largest write %d; want over 300 MB in writes of at most 1 MB", w.n, w.largest)
	}
}

// BenchmarkFilterShapes filters each shape whole (full: true), at the
// size of the project's targets, to a stream.
func BenchmarkFilterShapes(b *testing.B) {
	for _, s := range shapecat.Shapes {
		b.Run(s.Name, func(b *testing.B) {
			dir := writeShape(b, s, 0)
			for b.Loop() {
				if _, err := (Filter{Ref: dir, Config: &FilterConfig{Full: true}, Sources: DirResolver{}, Out: io.Discard}).Run(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRenderGraphShapes draws each shape at the size of the
// project's targets: DOT always, SVG where it is within the limits.
func BenchmarkRenderGraphShapes(b *testing.B) {
	testutil.UseGraphviz(b)
	for _, s := range shapecat.Shapes {
		dir := writeShape(b, s, 0)
		for _, format := range []string{GraphDOT, GraphSVG} {
			b.Run(s.Name+"/"+format, func(b *testing.B) {
				for b.Loop() {
					err := (RenderGraph{Refs: []string{dir}, Format: format}).Run(context.Background(), io.Discard)
					if errors.Is(err, ErrDrawingTooLarge) {
						b.Skip(err)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
