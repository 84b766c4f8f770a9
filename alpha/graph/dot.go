package graph

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/fastopm/fastopm/alpha/declcfg"
)

// The drawing's colours: deprecation is upstream's mermaid orange.
const (
	dotHead       = "#2E7D32" // channel head: a thick green border
	dotDeprecated = "#E8960F" // deprecated: an orange fill
	dotSkipped    = "#C62828" // skipped (OLM never installs it): a red dashed border
	dotMissing    = "#9E9E9E" // not an entry of the channel: grey, dotted
)

// WriteDOT writes the selected part of the graph in Graphviz's DOT
// language, one cluster per package and per channel, laid out left to
// right like render-graph's mermaid text. Nodes are the channel entries
// (bundle name and version); edges lead from the bundle a cluster may run
// to the one it may upgrade to: replaces solid, skips dashed. Channel heads, deprecated bundles
// (and channels and packages), bundles OLM v0 never installs (another entry
// of the channel skips them), names that are not entries of the channel,
// and the default channel are marked, and a legend explains the marks. A
// skipRange is one note node holding the range and the number of entries
// it covers (listed in its tooltip), with a dotted edge to its entry.
// The text is the same for the same catalog, byte for byte.
func (g *Graph) WriteDOT(w io.Writer, s Selection) error {
	chans, err := g.Select(s)
	if err != nil {
		return err
	}
	// Draw packages by name, their channels by name.
	slices.SortStableFunc(chans, func(a, b *Channel) int {
		if a.Package != b.Package {
			return compare(a.Package, b.Package)
		}
		return compare(a.Name, b.Name)
	})
	depPkg, depCh, depBundle := map[string]string{}, map[string]string{}, map[string]string{}
	for _, d := range g.Deprecations {
		for _, e := range d.Entries {
			switch e.Reference.Schema {
			case declcfg.SchemaPackage:
				depPkg[d.Package] = e.Message
			case declcfg.SchemaChannel:
				depCh[d.Package+"\x00"+e.Reference.Name] = e.Message
			case declcfg.SchemaBundle:
				depBundle[d.Package+"\x00"+e.Reference.Name] = e.Message
			}
		}
	}

	// A drawing flows left to right, each upgrade step a column; one
	// with a long chain of upgrades is drawn top to bottom instead,
	// every channel in rows read like text and the channels one below
	// the other, so that a chain of thousands of bundles is a block
	// that fits a screen rather than a line a hundred thousand points
	// long (and is laid out many times faster).
	rankdir := "LR"
	if longestPath(chans) > WrapAt {
		rankdir = "TB"
	}

	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	p("digraph catalog {\n")
	p("  rankdir=%s;\n  newrank=true;\n  compound=true;\n  fontname=\"Helvetica\";\n  fontsize=12;\n", rankdir)
	p("  node [shape=box, style=\"rounded,filled\", fillcolor=\"#FFFFFF\", fontname=\"Helvetica\", fontsize=10, margin=\"0.2,0.08\"];\n")
	p("  edge [fontname=\"Helvetica\", fontsize=9];\n")
	var (
		prevLast string   // drawn in rows: the start of the last row so far
		stack    []string // the invisible edges that stack channels
	)
	for i := 0; i < len(chans); {
		pkg := chans[i].Package
		j := i
		for j < len(chans) && chans[j].Package == pkg {
			j++
		}
		label := "package " + pkg
		attrs := ""
		if msg, ok := depPkg[pkg]; ok {
			label += " (deprecated)"
			attrs = fmt.Sprintf("    style=filled;\n    fillcolor=\"#FDEBD0\";\n    tooltip=%s;\n", dotQuote(msg))
		}
		p("  subgraph %s {\n    label=%s;\n%s", dotQuote("cluster_"+pkg), dotQuote(label), attrs)
		for _, c := range chans[i:j] {
			first, last := g.writeDOTChannel(bw, c, depCh, depBundle, rankdir == "TB")
			if first != "" {
				// Channels, and packages, one below the other.
				if prevLast != "" {
					stack = append(stack, fmt.Sprintf("  %s -> %s [style=invis];\n", prevLast, first))
				}
				prevLast = last
			}
		}
		p("  }\n")
		i = j
	}
	for _, e := range stack {
		p("%s", e)
	}
	writeDOTLegend(bw)
	p("}\n")
	return bw.Flush()
}

// writeDOTChannel writes one channel's cluster; drawn in rows, it
// returns the first node of its first and of its last row.
func (g *Graph) writeDOTChannel(bw *bufio.Writer, c *Channel, depCh, depBundle map[string]string, rows bool) (first, last string) {
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	id := func(bundle string) string { return dotQuote(c.Package + "/" + c.Name + "/" + bundle) }
	label := "channel " + c.Name
	style := "rounded"
	if g.DefaultChannels[c.Package] == c.Name {
		label += " (default)"
		style = "rounded,bold"
	}
	p("    subgraph %s {\n      label=%s;\n      style=%q;\n", dotQuote("cluster_"+c.Package+"/"+c.Name), dotQuote(label), style)
	if msg, ok := depCh[c.Package+"\x00"+c.Name]; ok {
		p("      style=\"rounded,filled\";\n      fillcolor=\"#FDEBD0\";\n      label=%s;\n      tooltip=%s;\n", dotQuote(label+" (deprecated)"), dotQuote(msg))
	}
	nodes := g.Nodes(c)
	entries := map[string]bool{}
	replaced := map[string]bool{} // a later entry replaces or skips it
	skipped := map[string]bool{}
	ranges := skipRanges(c)
	for _, e := range c.Entries {
		entries[e.Name] = true
		if e.Replaces != "" {
			replaced[e.Replaces] = true
		}
		for _, s := range e.Skips {
			replaced[s] = true
			skipped[s] = true
		}
	}
	for _, n := range nodes {
		text := n.Name
		if v, ok := g.Versions[n.Name]; ok {
			text += "\n" + v.String()
		}
		var attrs []string
		fill := ""
		if msg, ok := depBundle[c.Package+"\x00"+n.Name]; ok {
			fill = dotDeprecated
			text += "\n(deprecated)"
			attrs = append(attrs, "tooltip="+dotQuote(msg))
		}
		var styles []string
		switch {
		case !replaced[n.Name]:
			text += "\n(head)"
			attrs = append(attrs, "color=\""+dotHead+"\"", "penwidth=3")
		case skipped[n.Name]:
			styles = append(styles, "dashed")
			attrs = append(attrs, "color=\""+dotSkipped+"\"", "penwidth=2")
		}
		if fill != "" {
			attrs = append(attrs, "fillcolor=\""+fill+"\"")
		}
		if len(styles) > 0 {
			attrs = append(attrs, fmt.Sprintf("style=\"rounded,filled,%s\"", strings.Join(styles, ",")))
		}
		attrs = append([]string{"label=" + dotQuote(text)}, attrs...)
		p("      %s [%s];\n", id(n.Name), strings.Join(attrs, ", "))
	}
	// Names the entries point at that are not entries themselves.
	var missing []string
	for _, n := range nodes {
		for _, e := range n.Edges {
			if !entries[e.From] && !slices.Contains(missing, e.From) {
				missing = append(missing, e.From)
			}
		}
	}
	for _, m := range missing {
		p("      %s [label=%s, style=\"rounded,dotted\", color=%q, fontcolor=%q];\n", id(m), dotQuote(m+"\n(not in channel)"), dotMissing, dotMissing)
	}
	for _, n := range nodes {
		// A skipRange is drawn once, as a node holding the range with one
		// edge to its entry, rather than an edge from every entry it
		// covers: ranges often cover most of a channel, and an edge per
		// covered entry makes the drawing (and its layout) grow with the
		// square of the channel.
		var covered []string
		for _, e := range n.Edges {
			switch e.Kind {
			case Replaces:
				p("      %s -> %s [tooltip=\"replaces\"];\n", id(e.From), id(e.To))
			case Skips:
				p("      %s -> %s [style=dashed, tooltip=\"skips\"];\n", id(e.From), id(e.To))
			case SkipRange:
				covered = append(covered, e.From)
			}
		}
		if r := ranges[n.Name]; r != "" {
			rid := id(n.Name + "/skipRange")
			what := fmt.Sprintf("covers %d entries", len(covered))
			switch len(covered) {
			case 0:
				what = "covers no entry here"
			case 1:
				what = "covers 1 entry"
			}
			p("      %s [label=%s, shape=note, style=\"filled,dotted\", fillcolor=\"#F5F5F5\", tooltip=%s];\n",
				rid, dotQuote("skipRange "+r+"\n"+what), dotQuote(strings.Join(covered, "\n")))
			p("      %s -> %s [style=dotted, tooltip=%s];\n", rid, id(n.Name), dotQuote("skipRange "+r))
		}
	}
	if rows {
		// Rows of entries, oldest first, the head last: each row one
		// rank, its nodes side by side, and an invisible edge from the
		// start of each row to the start of the next keeps them in
		// order when no edge of the graph does.
		var row []string
		per := rowLength(len(c.Entries))
		flush := func() {
			p("      { rank=same; %s; }\n", strings.Join(row, "; "))
			if last != "" {
				p("      %s -> %s [style=invis];\n", last, row[0])
			}
			if first == "" {
				first = row[0]
			}
			last = row[0]
			row = row[:0]
		}
		for i := len(nodes) - 1; i >= 0; i-- {
			if !entries[nodes[i].Name] {
				continue
			}
			row = append(row, id(nodes[i].Name))
			if len(row) == per {
				flush()
			}
		}
		if len(row) > 0 {
			flush()
		}
	}
	p("    }\n")
	return first, last
}

// WrapAt is the longest chain of upgrades (replaces and skips edges one
// after the other) of a drawing that flows left to right; past it, the
// drawing goes top to bottom, each channel in rows (rowLength).
const WrapAt = 20

// rowLength is the number of entries per row of a channel of n entries
// drawn in rows: at least 10, and about sqrt(0.85 n), so that rows of
// nodes about 150 points wide and 80 apart make a block about 1.6 times
// as wide as it is tall, a screen's shape (10,000 entries: 93 per row,
// 13,200 by 8,000 points).
func rowLength(n int) int {
	r := 10
	for r*r*100 < 85*n {
		r++
	}
	return r
}

// longestPath is the most replaces and skips edges one after the other
// in a channel of chans (an edge that closes a cycle is not followed).
func longestPath(chans []*Channel) int {
	longest := 0
	for _, c := range chans {
		preds := map[string][]string{}
		for _, e := range c.Entries {
			if e.Replaces != "" {
				preds[e.Name] = append(preds[e.Name], e.Replaces)
			}
			preds[e.Name] = append(preds[e.Name], e.Skips...)
		}
		depth := map[string]int{} // -1 while being computed
		var walk func(string) int
		walk = func(name string) int {
			if d, ok := depth[name]; ok {
				return max(d, 0)
			}
			depth[name] = -1
			d := 0
			for _, p := range preds[name] {
				d = max(d, walk(p)+1)
			}
			depth[name] = d
			return d
		}
		for _, e := range c.Entries {
			longest = max(longest, walk(e.Name))
		}
	}
	return longest
}

// DrawingSize is what WriteDOT draws: Graphviz's work grows with the
// clusters (a box per package and per channel), the nodes and the edges.
type DrawingSize struct {
	Packages, Channels int
	// Nodes are the channel entries, the names they point at that are
	// not entries, and the skipRange notes; Edges the arrows between.
	Nodes, Edges int
	// Longest is the most entries of one channel.
	Longest int
}

// DrawingSize counts what WriteDOT would draw of the selection, without
// drawing it.
func (g *Graph) DrawingSize(s Selection) (DrawingSize, error) {
	chans, err := g.Select(s)
	if err != nil {
		return DrawingSize{}, err
	}
	var size DrawingSize
	pkgs := map[string]bool{}
	for _, c := range chans {
		pkgs[c.Package] = true
		size.Channels++
		size.Longest = max(size.Longest, len(c.Entries))
		entries := map[string]bool{}
		for _, e := range c.Entries {
			entries[e.Name] = true
		}
		nodes := g.Nodes(c)
		ranges := skipRanges(c)
		size.Nodes += len(nodes)
		missing := map[string]bool{}
		for _, n := range nodes {
			for _, e := range n.Edges {
				if !entries[e.From] && !missing[e.From] {
					missing[e.From] = true
					size.Nodes++
				}
				if e.Kind != SkipRange {
					size.Edges++
				}
			}
			if ranges[n.Name] != "" {
				size.Nodes++
				size.Edges++
			}
		}
	}
	size.Packages = len(pkgs)
	return size, nil
}

func writeDOTLegend(bw *bufio.Writer) {
	fmt.Fprintf(bw, `  subgraph cluster_legend {
    label="legend";
    style="rounded,dashed";
    "legend/head" [label="channel head", color=%q, penwidth=3];
    "legend/bundle" [label="bundle\nversion"];
    "legend/skipped" [label="skipped:\nOLM never installs it", style="rounded,filled,dashed", color=%q, penwidth=2];
    "legend/deprecated" [label="deprecated", fillcolor=%q];
    "legend/missing" [label="not in channel", style="rounded,dotted", color=%q, fontcolor=%q];
    "legend/bundle" -> "legend/head" [label="replaces"];
    "legend/skipped" -> "legend/head" [label="skips", style=dashed];
    "legend/range" [label="skipRange >=1.0.0 <1.2.0\ncovers 2 entries", shape=note, style="filled,dotted", fillcolor="#F5F5F5"];
    "legend/range" -> "legend/deprecated" [style=dotted];
    "legend/missing" -> "legend/deprecated" [label="replaces"];
  }
`, dotHead, dotSkipped, dotDeprecated, dotMissing, dotMissing)
}

// skipRanges maps the channel's entries to their skipRange (the first
// entry of a name, as a lookup in entry order finds it).
func skipRanges(c *Channel) map[string]string {
	m := make(map[string]string, len(c.Entries))
	for _, e := range c.Entries {
		if _, ok := m[e.Name]; !ok {
			m[e.Name] = e.SkipRange
		}
	}
	return m
}

// dotQuote quotes s as a DOT string.
func dotQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
