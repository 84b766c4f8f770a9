package graph

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fastopm/fastopm/alpha/declcfg"
)

// load builds the graph of an in-memory catalog tree.
func load(t *testing.T, files map[string]string) (*Graph, error) {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, data := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(data)}
	}
	bld := NewBuilder()
	err := declcfg.Walk(context.Background(), fsys, func(b *declcfg.Blob) error { return bld.AddBlob(b) })
	if err != nil {
		return nil, err
	}
	return bld.Build()
}

func bundle(name, pkg, version string) string {
	return `{"schema":"olm.bundle","name":"` + name + `","package":"` + pkg + `","image":"x","properties":[{"type":"olm.package","value":{"packageName":"` + pkg + `","version":"` + version + `"}}]}` + "\n"
}

func TestNodesAndEdges(t *testing.T) {
	g, err := load(t, map[string]string{"c.json": `{"schema":"olm.channel","package":"p","name":"stable","entries":[
		{"name":"a.v1"},{"name":"a.v3","replaces":"a.v2","skips":["a.v1"],"skipRange":"<3.0.0"},{"name":"a.v2","replaces":"a.v1"}]}` + "\n" +
		bundle("a.v1", "p", "1.0.0") + bundle("a.v2", "p", "2.0.0") + bundle("a.v3", "p", "3.0.0")})
	if err != nil {
		t.Fatal(err)
	}
	nodes := g.Nodes(g.Channels[0])
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	if got := strings.Join(names, ","); got != "a.v3,a.v2,a.v1" {
		t.Fatalf("nodes %s, want decreasing versions", got)
	}
	want := []Edge{
		{From: "a.v1", To: "a.v3", Kind: Skips},
		{From: "a.v1", To: "a.v3", Kind: SkipRange, Range: "<3.0.0"},
		{From: "a.v2", To: "a.v3", Kind: SkipRange, Range: "<3.0.0"},
		{From: "a.v2", To: "a.v3", Kind: Replaces},
	}
	if len(nodes[0].Edges) != len(want) {
		t.Fatalf("edges %+v", nodes[0].Edges)
	}
	for i, e := range want {
		if nodes[0].Edges[i] != e {
			t.Errorf("edge %d: %+v, want %+v", i, nodes[0].Edges[i], e)
		}
	}
}

// Upstream stops at the first bundle whose version cannot be read, among
// the first blob of each name; a later blob of a name is not read at all.
func TestBuildVersionErrors(t *testing.T) {
	_, err := load(t, map[string]string{"a.json": bundle("b.v1", "p", "1.0.0"), "b.json": bundle("b.v1", "q", "bad") + bundle("c.v1", "p", "1.x")})
	if err == nil || !strings.Contains(err.Error(), `bundle "c.v1" has invalid version "1.x": `) || !strings.HasPrefix(err.Error(), "b.json:2: ") {
		t.Fatalf("error %v", err)
	}
	_, err = load(t, map[string]string{"a.json": `{"schema":"olm.bundle","name":"d","properties":[{"type":"olm.gvk","value":{"group":1}}]}`})
	if err == nil || !strings.Contains(err.Error(), `parse properties for bundle "d": parse property[0] of type "olm.gvk": json: cannot unmarshal number`) {
		t.Fatalf("error %v", err)
	}
	_, err = load(t, map[string]string{"a.json": `{"schema":"olm.bundle","name":"d","properties":[{"type":"olm.bundle.object","value":{"data":"!!"}}]}`})
	if err == nil || !strings.Contains(err.Error(), `parse property[0] of type "olm.bundle.object": illegal base64 data`) {
		t.Fatalf("error %v", err)
	}
	_, err = load(t, map[string]string{"a.json": `{"schema":"olm.bundle","name":"d","properties":[]}`})
	if err == nil || !strings.Contains(err.Error(), `bundle "d" has multiple "olm.package" properties, expected exactly 1`) {
		t.Fatalf("error %v", err)
	}
}

// Channels of one package with one name (an invalid catalog) are drawn in
// load order, run after run; upstream's order varies.
func TestDuplicateChannelsInLoadOrder(t *testing.T) {
	files := map[string]string{}
	for _, f := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		files[f+".json"] = `{"schema":"olm.channel","package":"p","name":"stable","entries":[{"name":"` + f + `"}]}` + "\n" + bundle(f, "p", "1.0.0")
	}
	var first string
	for i := 0; i < 5; i++ {
		g, err := load(t, files)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := g.WriteMermaid(&buf, MermaidOptions{}); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = buf.String()
			var order []string
			for _, l := range strings.Split(first, "\n") {
				if strings.HasPrefix(l, "      p-stable-") {
					order = append(order, strings.TrimPrefix(strings.Fields(l)[0], "p-stable-"))
				}
			}
			if got := strings.Join(order, ""); !strings.HasPrefix(got, "a[") || !strings.Contains(got, "g[\"g\"]h[") {
				t.Fatalf("order %s, want load order a..h", got)
			}
		} else if buf.String() != first {
			t.Fatal("output differs between runs")
		}
	}
}

func TestSelectUnknownMinimumEdge(t *testing.T) {
	g, err := load(t, map[string]string{"a.json": bundle("a", "p", "1.0.0")})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := g.WriteMermaid(&buf, MermaidOptions{Selection: Selection{MinEdge: "zz"}}); err == nil || err.Error() != `unknown minimum edge name: "zz"` || buf.Len() != 0 {
		t.Fatalf("err %v, output %q", err, buf.String())
	}
}
