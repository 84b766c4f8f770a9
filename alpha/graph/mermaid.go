package graph

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/fastopm/fastopm/alpha/declcfg"
)

// MermaidOptions are render-graph's options.
type MermaidOptions struct {
	Selection
	// V0Semantics marks what OLM v0 would not take: bundles skipped by a
	// later bundle of the channel (class "skipped") and the edges that
	// lead to or from them (a red linkStyle).
	V0Semantics bool
	// Warn receives upstream's warnings (a skipRange that does not
	// parse); nil drops them.
	Warn func(msg string)
}

// Mermaid's class and style lines, as upstream writes them.
const (
	mermaidHeader = "graph LR\n" +
		"  classDef deprecated fill:#E8960F\n" +
		"  classDef skipped stroke:#FF0000,stroke-width:4px\n" +
		"  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px\n"
	skippedLinkStyle = "stroke:#FF0000,stroke-width:3px,stroke-dasharray:5;"
)

// WriteMermaid writes the graph as upstream's render-graph does, byte for
// byte, with one difference under V0Semantics: the numbers of the
// linkStyle line are the positions of the marked edges in the text (the
// numbers mermaid gives links), counted in the order the text lists them
// (packages by name, channels by name, nodes by decreasing version).
// Upstream counts in its processing order (channels by name across all
// packages, ties in an order that varies from run to run), which is the
// text's order only when one package is drawn; then the two lines are
// equal. Nothing is written when the selection fails.
func (g *Graph) WriteMermaid(w io.Writer, o MermaidOptions) error {
	chans, err := g.Select(o.Selection)
	if err != nil {
		return err
	}

	// Upstream keys deprecations by name alone: a deprecated channel
	// "stable" marks every package's channel "stable", a deprecated
	// bundle every bundle of that name.
	depPackage, depChannel, depBundle := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, d := range g.Deprecations {
		for _, e := range d.Entries {
			switch e.Reference.Schema {
			case declcfg.SchemaPackage:
				depPackage[d.Package] = true
			case declcfg.SchemaChannel:
				depChannel[e.Reference.Name] = true
			case declcfg.SchemaBundle:
				depBundle[e.Reference.Name] = true
			}
		}
	}

	// Style lines follow upstream's processing order (chans' order); the
	// text is grouped by package.
	var (
		depPkg      string
		depChannels []string
	)
	for _, c := range chans {
		if depPackage[c.Package] {
			depPkg = c.Package
		}
		if depChannel[c.Name] {
			depChannels = append(depChannels, c.ID())
		}
	}
	byPackage := map[string][]*Channel{}
	var pkgNames []string
	for _, c := range chans {
		if _, ok := byPackage[c.Package]; !ok {
			pkgNames = append(pkgNames, c.Package)
		}
		byPackage[c.Package] = append(byPackage[c.Package], c)
	}
	slices.Sort(pkgNames)

	bw := bufio.NewWriterSize(w, 64<<10)
	decorated := map[string][]string{}
	var marked []string
	link := 0
	bw.WriteString(mermaidHeader)
	for _, pkg := range pkgNames {
		fmt.Fprintf(bw, "  %%%% package %s\n", strconv.Quote(pkg))
		fmt.Fprintf(bw, "  subgraph %s\n", strconv.Quote(pkg))
		for _, c := range byPackage[pkg] {
			chID := c.ID()
			fmt.Fprintf(bw, "    %%%% channel %s\n", strconv.Quote(c.Name))
			fmt.Fprintf(bw, "    subgraph %s[%s]\n", chID, strconv.Quote(c.Name))
			skipped := map[string]bool{}
			for _, nd := range g.Nodes(c) {
				id := chID + "-" + nd.Name
				label := strconv.Quote(nd.Name)
				fmt.Fprintf(bw, "      %s[%s]\n", id, label)
				switch dep, sk := depBundle[nd.Name], skipped[nd.Name]; {
				case dep && sk:
					decorated["deprecatedskipped"] = append(decorated["deprecatedskipped"], id)
				case dep:
					decorated["deprecated"] = append(decorated["deprecated"], id)
				case sk:
					decorated["skipped"] = append(decorated["skipped"], id)
				}
				if nd.RangeErr != nil && o.Warn != nil {
					o.Warn(fmt.Sprintf("warning: ignoring invalid SkipRange for package/edge %q/%q: %v", c.Package, nd.Name, nd.RangeErr))
				}
				for _, e := range nd.Edges {
					from := chID + "-" + e.From
					switch e.Kind {
					case SkipRange:
						fmt.Fprintf(bw, "      %s[%s]-- \"skipRange(%s)\" --> %s[%s]\n", from, strconv.Quote(e.From), e.Range, id, label)
					default:
						fmt.Fprintf(bw, "      %s[%s]-- %s --> %s[%s]\n", from, strconv.Quote(e.From), e.Kind, id, label)
					}
					if o.V0Semantics {
						// A skip marks its target as skipped; an edge is
						// red when it skips a bundle already skipped, or
						// leads to a bundle already skipped.
						switch {
						case e.Kind == Skips && skipped[e.From]:
							marked = append(marked, strconv.Itoa(link))
						case e.Kind == Skips:
							skipped[e.From] = true
						case skipped[nd.Name]:
							marked = append(marked, strconv.Itoa(link))
						}
					}
					link++
				}
			}
			bw.WriteString("    end\n")
		}
		bw.WriteString("  end\n")
	}
	if depPkg != "" {
		fmt.Fprintf(bw, "style %s fill:#989695\n", depPkg)
	}
	for _, id := range depChannels {
		fmt.Fprintf(bw, "style %s fill:#DCD0FF\n", id)
	}
	for _, class := range []string{"deprecated", "deprecatedskipped", "skipped"} {
		if ids := decorated[class]; len(ids) > 0 {
			slices.Sort(ids)
			fmt.Fprintf(bw, "class %s %s\n", strings.Join(ids, ","), class)
		}
	}
	if len(marked) > 0 {
		fmt.Fprintf(bw, "linkStyle %s %s\n", strings.Join(marked, ","), skippedLinkStyle)
	}
	return bw.Flush()
}
