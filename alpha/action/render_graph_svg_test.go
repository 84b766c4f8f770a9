package action

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/graph"
	"github.com/fastopm/fastopm/internal/testutil"
)

// svgTitles reads the titles of the node and edge groups Graphviz writes
// in an SVG: one <g class="node"> or <g class="edge"> per node and edge,
// each with a <title> holding the node's name or "tail->head".
func svgTitles(t *testing.T, svg []byte) (nodes, edges map[string]int) {
	t.Helper()
	nodes, edges = map[string]int{}, map[string]int{}
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var class string
	inTitle := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG does not parse: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			switch el.Name.Local {
			case "g":
				class = ""
				for _, a := range el.Attr {
					if a.Name.Local == "class" {
						class = a.Value
					}
				}
			case "title":
				inTitle = class == "node" || class == "edge"
			}
		case xml.CharData:
			if inTitle {
				if class == "node" {
					nodes[string(el)]++
				} else {
					edges[string(el)]++
				}
				inTitle = false
			}
		case xml.EndElement:
			if el.Name.Local == "title" {
				inTitle = false
			}
		}
	}
	return nodes, edges
}

// TestRenderGraphSVG draws real catalogs and checks that the SVG holds
// every bundle of every channel, every replaces and skips edge, one node
// and edge per skipRange, and nothing else (but the legend). The two
// largest catalogs are drawn in the corpus build only.
func TestRenderGraphSVG(t *testing.T) {
	testutil.UseGraphviz(t)
	type svgCase struct {
		ref string
		sel graph.Selection
	}
	cases := []svgCase{
		{"../../testdata/updates", graph.Selection{}},
		{"../../testdata/catalogs/kube-descheduler-v4.12", graph.Selection{}},
		{"../../testdata/list-graph/catalogs/community-subset", graph.Selection{}},
		{"../../testdata/list-graph/catalogs/graph-edge-cases", graph.Selection{}},
		{"../../testdata/catalogs/fixture-olm-deprecations", graph.Selection{}},
	}
	if testutil.Corpus {
		cases = append(cases,
			svgCase{"../../testdata/catalogs/submariner-v4.14", graph.Selection{}},
			svgCase{"../../testdata/catalogs/okderators", graph.Selection{Package: "odf-operator"}})
	}
	for _, tc := range cases {
		g, err := LoadGraph(context.Background(), []string{tc.ref}, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		chans, err := g.Select(tc.sel)
		if err != nil {
			t.Fatal(err)
		}
		wantNodes, wantEdges := map[string]int{}, map[string]int{}
		for _, c := range chans {
			id := func(s string) string { return c.Package + "/" + c.Name + "/" + s }
			entries := map[string]bool{}
			for _, e := range c.Entries {
				entries[e.Name] = true
				wantNodes[id(e.Name)]++
				if e.SkipRange != "" {
					wantNodes[id(e.Name+"/skipRange")]++
					wantEdges[id(e.Name+"/skipRange")+"->"+id(e.Name)]++
				}
				if e.Replaces != "" {
					wantEdges[id(e.Replaces)+"->"+id(e.Name)]++
				}
				for _, s := range e.Skips {
					wantEdges[id(s)+"->"+id(e.Name)]++
				}
			}
			for _, e := range c.Entries {
				for _, from := range append([]string{e.Replaces}, e.Skips...) {
					if from != "" && !entries[from] {
						wantNodes[id(from)] = 1
					}
				}
			}
		}
		var buf bytes.Buffer
		err = RenderGraph{Refs: []string{tc.ref}, Format: GraphSVG, Options: graph.MermaidOptions{Selection: tc.sel}}.Run(context.Background(), &buf)
		if err != nil {
			t.Fatal(err)
		}
		nodes, edges := svgTitles(t, buf.Bytes())
		for k := range nodes {
			if strings.HasPrefix(k, "legend/") {
				delete(nodes, k)
			}
		}
		for k := range edges {
			if strings.HasPrefix(k, "legend/") {
				delete(edges, k)
			}
		}
		if !maps.Equal(nodes, wantNodes) {
			t.Errorf("%s: nodes differ:\nmissing %v\nextra %v", tc.ref, diffKeys(wantNodes, nodes), diffKeys(nodes, wantNodes))
		}
		if !maps.Equal(edges, wantEdges) {
			t.Errorf("%s: edges differ:\nmissing %v\nextra %v", tc.ref, diffKeys(wantEdges, edges), diffKeys(edges, wantEdges))
		}
		if len(wantEdges) == 0 || len(wantNodes) == 0 {
			t.Errorf("%s: nothing drawn", tc.ref)
		}
		// The same catalog gives the same bytes.
		var again bytes.Buffer
		if err := (RenderGraph{Refs: []string{tc.ref}, Format: GraphSVG, Options: graph.MermaidOptions{Selection: tc.sel}}).Run(context.Background(), &again); err != nil || !bytes.Equal(buf.Bytes(), again.Bytes()) {
			t.Errorf("%s: a second drawing differs (%v)", tc.ref, err)
		}
	}
}

func diffKeys(a, b map[string]int) []string {
	var out []string
	for k, n := range a {
		if b[k] != n {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func TestRenderGraphDOTErrors(t *testing.T) {
	var buf bytes.Buffer
	err := RenderGraph{Refs: []string{"../../testdata/updates"}, Format: GraphSVG, Options: graph.MermaidOptions{Selection: graph.Selection{MinEdge: "nope"}}}.Run(context.Background(), &buf)
	if err == nil || !strings.Contains(err.Error(), `unknown minimum edge name: "nope"`) || buf.Len() != 0 {
		t.Errorf("unknown minimum edge: %v, wrote %d bytes", err, buf.Len())
	}
	err = RenderGraph{Refs: []string{"../../testdata/updates"}, Format: "png"}.Run(context.Background(), &buf)
	if err == nil || buf.Len() != 0 {
		t.Errorf("unknown format: %v", err)
	}
}
