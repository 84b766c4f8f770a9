package graph

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/internal/shapecat"
)

// loadShape builds the graph of a synthetic catalog shape of size n.
func loadShape(t *testing.T, name string, n int) *Graph {
	t.Helper()
	s, ok := shapecat.Lookup(name)
	if !ok {
		t.Fatalf("no shape %q", name)
	}
	bld := NewBuilder()
	if err := declcfg.Walk(context.Background(), s.FS(n), func(b *declcfg.Blob) error { return bld.AddBlob(b) }); err != nil {
		t.Fatal(err)
	}
	g, err := bld.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

var rowRE = regexp.MustCompile(`(?m)^      \{ rank=same; (.*); \}$`)

// TestWriteDOTRows: a chain longer than WrapAt is drawn top to bottom in
// rows of rowLength entries, oldest first, each row's start tied to the
// next one's; a chain of WrapAt steps still flows left to right, as
// before, with no rows.
func TestWriteDOTRows(t *testing.T) {
	var buf bytes.Buffer
	if err := loadShape(t, "chain", WrapAt+1).WriteDOT(&buf, Selection{}); err != nil {
		t.Fatal(err)
	}
	if dot := buf.String(); !strings.Contains(dot, "rankdir=LR;") || strings.Contains(dot, "rank=same") {
		t.Errorf("a chain of %d entries (%d steps) is not drawn left to right without rows", WrapAt+1, WrapAt)
	}

	const n = 1000
	buf.Reset()
	if err := loadShape(t, "chain", n).WriteDOT(&buf, Selection{}); err != nil {
		t.Fatal(err)
	}
	dot := buf.String()
	if !strings.Contains(dot, "rankdir=TB;") {
		t.Fatal("a chain of 1000 is not drawn top to bottom")
	}
	per := rowLength(n)
	if per != 30 {
		t.Errorf("rowLength(%d) = %d, want 30 (about sqrt(0.85 n))", n, per)
	}
	rows := rowRE.FindAllStringSubmatch(dot, -1)
	if want := (n + per - 1) / per; len(rows) != want {
		t.Fatalf("%d rows, want %d", len(rows), want)
	}
	next := 0 // the next bundle expected, oldest first
	for i, r := range rows {
		ids := strings.Split(r[1], "; ")
		if i < len(rows)-1 && len(ids) != per {
			t.Fatalf("row %d has %d entries, want %d", i, len(ids), per)
		}
		for _, id := range ids {
			if want := fmt.Sprintf(`"shape/stable/shape.v1.0.%d"`, next); id != want {
				t.Fatalf("row %d: %s, want %s", i, id, want)
			}
			next++
		}
		if i > 0 {
			prev := strings.Split(rows[i-1][1], "; ")[0]
			if !strings.Contains(dot, prev+" -> "+ids[0]+" [style=invis];") {
				t.Errorf("row %d is not tied below row %d", i, i-1)
			}
		}
	}
	if next != n {
		t.Errorf("%d entries in rows, want %d", next, n)
	}
}

func TestRowLength(t *testing.T) {
	for _, tc := range []struct{ n, want int }{{0, 10}, {21, 10}, {117, 10}, {118, 11}, {250, 15}, {1000, 30}, {10000, 93}} {
		if got := rowLength(tc.n); got != tc.want {
			t.Errorf("rowLength(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

// TestDrawingSize counts what WriteDOT draws: the shapes' entries and
// edges, and a skipRange as one node and one edge.
func TestDrawingSize(t *testing.T) {
	for _, tc := range []struct {
		shape string
		n     int
		want  DrawingSize
	}{
		{"chain", 500, DrawingSize{Packages: 1, Channels: 1, Nodes: 500, Edges: 499, Longest: 500}},
		{"channels", 300, DrawingSize{Packages: 1, Channels: 300, Nodes: 300, Longest: 1}},
		{"shared-bundle", 40, DrawingSize{Packages: 1, Channels: 40, Nodes: 40, Longest: 1}},
	} {
		got, err := loadShape(t, tc.shape, tc.n).DrawingSize(Selection{})
		if err != nil || got != tc.want {
			t.Errorf("%s %d: %+v %v, want %+v", tc.shape, tc.n, got, err, tc.want)
		}
	}
	g, err := load(t, map[string]string{"c.json": `{"schema":"olm.channel","package":"p","name":"stable","entries":[
		{"name":"a.v1"},{"name":"a.v3","replaces":"a.v2","skips":["a.v0"],"skipRange":"<3.0.0"},{"name":"a.v2","replaces":"a.v1"}]}` + "\n" +
		bundle("a.v1", "p", "1.0.0") + bundle("a.v2", "p", "2.0.0") + bundle("a.v3", "p", "3.0.0")})
	if err != nil {
		t.Fatal(err)
	}
	got, err := g.DrawingSize(Selection{})
	// a.v1..3, a.v0 (not in channel), the skipRange note; two replaces,
	// a skips, the note's edge.
	if want := (DrawingSize{Packages: 1, Channels: 1, Nodes: 5, Edges: 4, Longest: 3}); err != nil || got != want {
		t.Errorf("%+v %v, want %+v", got, err, want)
	}
	var buf bytes.Buffer
	if err := g.WriteDOT(&buf, Selection{}); err != nil {
		t.Fatal(err)
	}
	dot := buf.String()
	if nodes := strings.Count(dot, "      \"p/stable/"); nodes-got.Edges != got.Nodes {
		t.Errorf("the DOT has %d node and edge lines, DrawingSize says %d nodes and %d edges", nodes, got.Nodes, got.Edges)
	}
}
