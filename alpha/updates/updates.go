// Package updates answers where OLM v0 moves an installed bundle: the next
// bundle of a channel, and the whole path from there to the channel head,
// with the edge that allows each step.
//
// The rules are OLM v0's resolver's (operator-lifecycle-manager,
// pkg/controller/registry/resolver): the entries of the channel are put in
// the order of the replaces chain from its head, leaving out every entry
// that another skips; an entry is a candidate when its skipRange includes
// the installed version, its replaces names the installed bundle, or its
// skips do; the first candidate in chain order, the one nearest the head,
// is the update. So the head wins when its skipRange covers the installed
// version, skipped bundles are never installed on the way, and a bundle the
// catalog does not hold (a "virtual" node) still gets an answer when
// something replaces or skips it, or a skipRange covers its version.
package updates

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/fastopm/fastopm/alpha/model"
)

// EdgeKind is the kind of channel edge that allows a step.
type EdgeKind string

// The edge kinds, in the order they are reported.
const (
	Replaces  EdgeKind = "replaces"
	Skips     EdgeKind = "skips"
	SkipRange EdgeKind = "skipRange"
)

// Installed is the bundle a cluster runs: its name (a CSV name), and its
// version when known. Version matters only for skipRange edges.
type Installed struct {
	Name    string
	Version *semver.Version
}

func (i Installed) String() string {
	if i.Name == "" && i.Version != nil {
		return "version " + i.Version.String()
	}
	return i.Name
}

// Step is one update: from the installed bundle to To, through Edges (each
// edge of To's channel entry that points at the installed bundle).
type Step struct {
	From  Installed
	To    *model.Bundle
	Edges []EdgeKind
	// Others are the other candidates, in OLM's order of preference, that
	// OLM does not choose because To comes first.
	Others []*model.Bundle
}

// Graph is a channel as OLM v0's resolver orders it.
type Graph struct {
	Channel *model.Channel
	// Order is the replaces chain from the head, skipped entries left out:
	// the bundles OLM may install, most preferred first. Order[0] is the
	// head.
	Order []*model.Bundle
}

// ChainError is a channel that has no single replaces chain, so OLM v0
// cannot order it and refuses to resolve any update in it.
type ChainError struct {
	Package, Channel string
	// Heads are the entries that nothing replaces or skips; empty when the
	// chain has a cycle.
	Heads []string
	Cycle string
}

func (e *ChainError) Error() string {
	switch {
	case e.Cycle != "":
		return fmt.Sprintf("a cycle exists in the chain of replacement beginning with %q in channel %q of package %q", e.Cycle, e.Channel, e.Package)
	case len(e.Heads) == 0:
		return fmt.Sprintf("no channel heads (entries not replaced by another entry) found in channel %q of package %q", e.Channel, e.Package)
	}
	return fmt.Sprintf("channel %q of package %q has %d heads (%s): OLM needs a single replacement chain to order its entries and resolves no update in it",
		e.Channel, e.Package, len(e.Heads), strings.Join(e.Heads, ", "))
}

// NewGraph orders a channel as OLM v0's resolver does (its sortChannel).
func NewGraph(ch *model.Channel) (*Graph, error) {
	replacedBy := map[string]bool{}
	skipped := map[string]bool{}
	for _, b := range ch.Bundles {
		if _, ok := ch.Bundles[b.Replaces]; ok {
			replacedBy[b.Replaces] = true
		}
		for _, s := range b.Skips {
			if _, ok := ch.Bundles[s]; ok {
				replacedBy[s] = true
				skipped[s] = true
			}
		}
	}
	var heads []string
	for name := range ch.Bundles {
		if !replacedBy[name] {
			heads = append(heads, name)
		}
	}
	slices.Sort(heads)
	if len(heads) != 1 {
		return nil, &ChainError{Package: ch.Package.Name, Channel: ch.Name, Heads: heads}
	}
	g := &Graph{Channel: ch}
	seen := map[string]bool{}
	for b := ch.Bundles[heads[0]]; b != nil; b = ch.Bundles[b.Replaces] {
		if seen[b.Name] {
			return nil, &ChainError{Package: ch.Package.Name, Channel: ch.Name, Cycle: heads[0]}
		}
		seen[b.Name] = true
		if !skipped[b.Name] {
			g.Order = append(g.Order, b)
		}
	}
	return g, nil
}

// Head is the channel head.
func (g *Graph) Head() *model.Bundle { return g.Order[0] }

// edges returns the edges of b's entry that point at from.
func edges(b *model.Bundle, from Installed) []EdgeKind {
	var out []EdgeKind
	if from.Name != "" && b.Replaces == from.Name {
		out = append(out, Replaces)
	}
	if from.Name != "" && slices.Contains(b.Skips, from.Name) {
		out = append(out, Skips)
	}
	if from.Version != nil && b.SkipRange != "" {
		if r, err := semver.ParseRange(b.SkipRange); err == nil && r(*from.Version) {
			out = append(out, SkipRange)
		}
	}
	return out
}

// Next returns OLM's update for from, or nil when nothing in the channel
// replaces, skips or covers it (it is the head, or it is stranded).
func (g *Graph) Next(from Installed) *Step {
	var st *Step
	for _, b := range g.Order {
		if b.Name == from.Name {
			continue
		}
		e := edges(b, from)
		if len(e) == 0 {
			continue
		}
		if st == nil {
			st = &Step{From: from, To: b, Edges: e}
		} else {
			st.Others = append(st.Others, b)
		}
	}
	return st
}

// ErrLoop is a path that comes back to a bundle it has passed (possible
// only through skipRange edges that point back up the chain).
var ErrLoop = errors.New("the updates loop")

// Path returns every step from from to the end of its updates: the head,
// or a bundle nothing updates (a step list that does not end at the head
// means the installed bundle cannot reach it).
func (g *Graph) Path(from Installed) ([]Step, error) {
	var path []Step
	seen := map[string]bool{from.Name: true}
	for {
		st := g.Next(from)
		if st == nil {
			return path, nil
		}
		path = append(path, *st)
		if seen[st.To.Name] {
			return path, fmt.Errorf("%w: %s comes back to %s", ErrLoop, from, st.To.Name)
		}
		seen[st.To.Name] = true
		from = InstalledBundle(st.To)
	}
}

// InstalledBundle is b as an installed bundle: its name, and its version
// when its blob gives one.
func InstalledBundle(b *model.Bundle) Installed {
	in := Installed{Name: b.Name}
	if b.HasBlob {
		v := b.Version
		in.Version = &v
	}
	return in
}

// ResolveFrom finds the installed bundle that --from names in a package:
// a bundle of the channel by name, else a bundle of another channel of the
// package by name (a cluster that switches channel), else, when from is a
// version, the package's one bundle of that version. Anything else is a
// bundle the catalog does not hold, a virtual node: its version is read
// from a "vX.Y.Z" or "X.Y.Z" suffix of its name when there is one, so that
// skipRange edges can cover it.
func ResolveFrom(pkg *model.Package, ch *model.Channel, from string) (Installed, error) {
	if b, ok := ch.Bundles[from]; ok {
		return InstalledBundle(b), nil
	}
	names := make([]string, 0, len(pkg.Channels))
	for name := range pkg.Channels {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if b, ok := pkg.Channels[name].Bundles[from]; ok {
			return InstalledBundle(b), nil
		}
	}
	if v, err := semver.ParseTolerant(from); err == nil && !strings.ContainsAny(from, "/ ") {
		var found []*model.Bundle
		seen := map[string]bool{}
		for _, name := range names {
			for _, b := range pkg.Channels[name].Bundles {
				if b.HasBlob && b.Version.Equals(v) && !seen[b.Name] {
					seen[b.Name] = true
					found = append(found, b)
				}
			}
		}
		switch len(found) {
		case 0:
			return Installed{Version: &v}, nil
		case 1:
			return InstalledBundle(found[0]), nil
		}
		var ns []string
		for _, b := range found {
			ns = append(ns, b.Name)
		}
		slices.Sort(ns)
		return Installed{}, fmt.Errorf("version %s names %d bundles of package %q (%s): give a bundle name", v, len(found), pkg.Name, strings.Join(ns, ", "))
	}
	in := Installed{Name: from}
	if i := versionSuffix(from); i >= 0 {
		if v, err := semver.ParseTolerant(from[i:]); err == nil {
			in.Version = &v
		}
	}
	return in, nil
}

// versionSuffix returns where a version begins in a bundle name such as
// "etcdoperator.v0.9.2" or "foo-1.2.3", or -1.
func versionSuffix(name string) int {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if (c == '.' || c == '-') && i+1 < len(name) {
			rest := name[i+1:]
			if rest[0] == 'v' && len(rest) > 1 {
				rest = rest[1:]
			}
			if rest[0] >= '0' && rest[0] <= '9' {
				if _, err := semver.ParseTolerant(rest); err == nil {
					return len(name) - len(rest)
				}
			}
		}
	}
	return -1
}
