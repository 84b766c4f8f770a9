// Package graph is the upgrade graph of file-based catalogs as upstream
// opm's `alpha render-graph` reads it: the channels of every package with
// their entries, the version of every bundle (by bundle name), and the
// deprecations. It builds the graph from catalog blobs (Builder), selects
// the channels to draw (Select: a package, a minimum edge), lists each
// channel's nodes and upgrade edges in upstream's drawing order (Nodes),
// and writes upstream's mermaid text (WriteMermaid).
//
// Unlike alpha/model, the graph is not validated: render-graph draws what
// the catalog says, including channels whose entries name no bundle.
package graph

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"

	"github.com/blang/semver/v4"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
	"github.com/fastopm/fastopm/pkg/suggest"
)

// Graph is the upgrade graph of one or more catalogs.
type Graph struct {
	// Channels are every olm.channel blob, in load order (catalog, then
	// file walk order, then position in the file). Duplicates are kept.
	Channels []*Channel
	// Versions maps bundle names to the version of the first olm.bundle
	// blob of that name, in load order. Upstream keys versions by bundle
	// name alone, across packages; so does the graph.
	Versions map[string]semver.Version
	// Deprecations are every olm.deprecations blob, in load order.
	Deprecations []declcfg.Deprecation
	// DefaultChannels maps each package to the default channel of its
	// first olm.package blob (for drawings that mark it; mermaid does not).
	DefaultChannels map[string]string
}

// Channel is one olm.channel blob: its package, name and entries (in the
// blob's order).
type Channel struct {
	Package string
	Name    string
	Entries []declcfg.ChannelEntry
	// Source is where the blob is: "path:line" in its catalog.
	Source string
}

// ID is the channel's node identifier in the drawing: "package-channel".
func (c *Channel) ID() string { return c.Package + "-" + c.Name }

// Version returns the version of the bundle named name, or 0.0.0 when the
// catalog has no olm.bundle blob of that name (as upstream's map lookup
// gives).
func (g *Graph) Version(name string) semver.Version { return g.Versions[name] }

// Builder makes a Graph out of catalog blobs. AddBlob may be called from
// several goroutines at once; NextCatalog between catalogs, Build once at
// the end.
type Builder struct {
	props   property.Checker
	scratch sync.Pool

	mu      sync.Mutex
	catalog int
	chans   []rec[*Channel]
	pkgs    []rec[declcfg.Package]
	bundles []rec[bundleVersion]
	deps    []rec[declcfg.Deprecation]
}

// rec is a blob's value with its place in load order.
type rec[T any] struct {
	v                    T
	catalog, file, index int
}

func less[T any](a, b rec[T]) int {
	switch {
	case a.catalog != b.catalog:
		return a.catalog - b.catalog
	case a.file != b.file:
		return a.file - b.file
	}
	return a.index - b.index
}

// bundleVersion is what the graph needs of an olm.bundle blob: its name
// and its version, or why the version cannot be read.
type bundleVersion struct {
	name string
	ver  semver.Version
	err  error
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder { return &Builder{} }

// NextCatalog starts the next catalog: its blobs come after every blob
// added so far, whatever their file and index.
func (bld *Builder) NextCatalog() {
	bld.mu.Lock()
	bld.catalog++
	bld.mu.Unlock()
}

// AddBlob adds one blob of the current catalog. It reports a blob of one
// of the four OLM schemas that does not decode (the error render reports
// for it); blobs of other schemas are ignored. The blob's bytes may be
// reused after the call.
func (bld *Builder) AddBlob(b *declcfg.Blob) error {
	bld.mu.Lock()
	cat := bld.catalog
	bld.mu.Unlock()
	switch b.Schema {
	case declcfg.SchemaPackage:
		p, err := declcfg.DecodePackage(b.JSON)
		if err != nil {
			return invalid(b.Schema, err)
		}
		bld.mu.Lock()
		bld.pkgs = append(bld.pkgs, rec[declcfg.Package]{declcfg.Package{Name: p.Name, DefaultChannel: p.DefaultChannel}, cat, b.File, b.Index})
		bld.mu.Unlock()
	case declcfg.SchemaChannel:
		c, err := declcfg.DecodeChannel(b.JSON)
		if err != nil {
			return invalid(b.Schema, err)
		}
		ch := &Channel{Package: c.Package, Name: c.Name, Entries: c.Entries, Source: fmt.Sprintf("%s:%d", b.Path, b.Line)}
		bld.mu.Lock()
		bld.chans = append(bld.chans, rec[*Channel]{ch, cat, b.File, b.Index})
		bld.mu.Unlock()
	case declcfg.SchemaBundle:
		bd, err := declcfg.DecodeBundle(b.JSON)
		if err != nil {
			return invalid(b.Schema, err)
		}
		v := bld.version(&bd, fmt.Sprintf("%s:%d", b.Path, b.Line))
		bld.mu.Lock()
		bld.bundles = append(bld.bundles, rec[bundleVersion]{v, cat, b.File, b.Index})
		bld.mu.Unlock()
	case declcfg.SchemaDeprecations:
		d, err := declcfg.DecodeDeprecation(b.JSON)
		if err != nil {
			return invalid(b.Schema, err)
		}
		bld.mu.Lock()
		bld.deps = append(bld.deps, rec[declcfg.Deprecation]{d, cat, b.File, b.Index})
		bld.mu.Unlock()
	}
	return nil
}

func invalid(schema string, err error) error {
	return fmt.Errorf("invalid %s blob: %w", schema, err)
}

// AddConfig adds the blobs of a catalog held in memory, in its order, as
// the next catalog.
func (bld *Builder) AddConfig(cfg *declcfg.DeclarativeConfig) {
	bld.NextCatalog()
	bld.mu.Lock()
	defer bld.NextCatalog()
	defer bld.mu.Unlock()
	cat := bld.catalog
	for i, p := range cfg.Packages {
		bld.pkgs = append(bld.pkgs, rec[declcfg.Package]{declcfg.Package{Name: p.Name, DefaultChannel: p.DefaultChannel}, cat, 0, i})
	}
	for i := range cfg.Channels {
		c := &cfg.Channels[i]
		bld.chans = append(bld.chans, rec[*Channel]{&Channel{Package: c.Package, Name: c.Name, Entries: c.Entries}, cat, 0, i})
	}
	for i := range cfg.Bundles {
		bld.bundles = append(bld.bundles, rec[bundleVersion]{bld.version(&cfg.Bundles[i], ""), cat, 0, i})
	}
	for i, d := range cfg.Deprecations {
		bld.deps = append(bld.deps, rec[declcfg.Deprecation]{d, cat, 0, i})
	}
}

// version reads a bundle's version as upstream's render-graph does: every
// property must decode for its type (property.Parse), there must be
// exactly one olm.package property, and its version must be semver. The
// messages are upstream's, after the blob's place (where, "path:line").
func (bld *Builder) version(b *declcfg.Bundle, where string) bundleVersion {
	bv := bundleVersion{name: b.Name}
	prefix := ""
	if where != "" {
		prefix = where + ": "
	}
	var pkgs []property.Package
	for i, p := range b.Properties {
		var err error
		switch p.Type {
		case property.TypePackage:
			var v property.Package
			if err = json.Unmarshal(p.Value, &v); err == nil {
				pkgs = append(pkgs, v)
			}
		case property.TypeBundleObject:
			buf, _ := bld.scratch.Get().(*[]byte)
			if buf == nil {
				buf = new([]byte)
			}
			*buf, err = property.BundleObjectData((*buf)[:0], p.Value)
			bld.scratch.Put(buf)
		default:
			err = bld.props.Check(p.Type, p.Value)
		}
		if err != nil {
			pe := property.ParseError{Idx: i, Typ: p.Type, Err: err}
			msg := fmt.Sprintf("%sparse properties for bundle %q: %v", prefix, b.Name, pe)
			if why := pe.Explain(); why != "" {
				msg += fmt.Sprintf(" (property %d of type %q: %s)", i, p.Type, why)
			}
			bv.err = &VersionError{Bundle: b.Name, msg: msg}
			return bv
		}
	}
	if len(pkgs) != 1 {
		bv.err = &VersionError{Bundle: b.Name, msg: fmt.Sprintf("%sbundle %q has multiple %q properties, expected exactly 1", prefix, b.Name, property.TypePackage)}
		return bv
	}
	v, err := semver.Parse(pkgs[0].Version)
	if err != nil {
		bv.err = &VersionError{Bundle: b.Name, msg: fmt.Sprintf("%sbundle %q has invalid version %q: %v", prefix, b.Name, pkgs[0].Version, err)}
		return bv
	}
	bv.ver = v
	return bv
}

// VersionError is a bundle whose version cannot be read.
type VersionError struct {
	Bundle string
	msg    string
}

func (e *VersionError) Error() string { return e.msg }

// Build makes the Graph. It fails, as upstream does, on the first bundle
// (in load order, the first blob of each name) whose version cannot be
// read, whichever package it belongs to.
func (bld *Builder) Build() (*Graph, error) {
	slices.SortStableFunc(bld.chans, less)
	slices.SortStableFunc(bld.bundles, less)
	slices.SortStableFunc(bld.deps, less)
	g := &Graph{Versions: make(map[string]semver.Version, len(bld.bundles))}
	for _, r := range bld.bundles {
		if _, ok := g.Versions[r.v.name]; ok {
			continue
		}
		if r.v.err != nil {
			return nil, r.v.err
		}
		g.Versions[r.v.name] = r.v.ver
	}
	g.Channels = make([]*Channel, len(bld.chans))
	for i, r := range bld.chans {
		g.Channels[i] = r.v
	}
	g.Deprecations = make([]declcfg.Deprecation, len(bld.deps))
	for i, r := range bld.deps {
		g.Deprecations[i] = r.v
	}
	slices.SortStableFunc(bld.pkgs, less)
	g.DefaultChannels = make(map[string]string, len(bld.pkgs))
	for _, r := range bld.pkgs {
		if _, ok := g.DefaultChannels[r.v.Name]; !ok {
			g.DefaultChannels[r.v.Name] = r.v.DefaultChannel
		}
	}
	return g, nil
}

// hasPackage fails, in the words of `opm alpha list` (upstream's) and
// with a suggestion, when the catalog has no package named pkg.
func (g *Graph) hasPackage(pkg string) error {
	if _, ok := g.DefaultChannels[pkg]; ok {
		return nil
	}
	names := slices.Collect(maps.Keys(g.DefaultChannels))
	for _, c := range g.Channels {
		if c.Package == pkg {
			return nil
		}
		names = append(names, c.Package)
	}
	return fmt.Errorf("package %q not found%s", pkg, suggest.Hint(pkg, names))
}

// Selection says which part of the graph to draw.
type Selection struct {
	// Package, when set, keeps that package's channels only.
	Package string
	// MinEdge, when set, names a bundle: the floor of the drawn edges.
	// Only edges from bundles of that version or later are kept, and
	// only the package of the first channel (by channel name) listing
	// the bundle is drawn.
	MinEdge string
}

// Select returns the channels to draw, in upstream's processing order
// (channel name, then package, then load order), each filtered as
// upstream's render-graph filters it. Channels left without entries are
// dropped. It fails when MinEdge names no bundle of the catalog, and
// (unlike upstream, which draws an empty graph) when Package names no
// package of it, suggesting a near name (pkg/suggest).
func (g *Graph) Select(s Selection) ([]*Channel, error) {
	if s.Package != "" {
		if err := g.hasPackage(s.Package); err != nil {
			return nil, err
		}
	}
	chans := slices.Clone(g.Channels)
	slices.SortStableFunc(chans, func(a, b *Channel) int {
		if a.Name != b.Name {
			return compare(a.Name, b.Name)
		}
		return compare(a.Package, b.Package)
	})
	var minVersion semver.Version
	minPackage := ""
	if s.MinEdge != "" {
		v, ok := g.Versions[s.MinEdge]
		if !ok {
			return nil, fmt.Errorf("unknown minimum edge name: %q", s.MinEdge)
		}
		minVersion = v
		for _, c := range chans {
			if slices.ContainsFunc(c.Entries, func(e declcfg.ChannelEntry) bool { return e.Name == s.MinEdge }) {
				minPackage = c.Package
				break
			}
		}
	}
	out := make([]*Channel, 0, len(chans))
	for _, c := range chans {
		if f := g.filter(c, s, minVersion, minPackage); f != nil {
			out = append(out, f)
		}
	}
	return out, nil
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// filter is upstream's filterChannel: nil when the channel is not drawn.
func (g *Graph) filter(c *Channel, s Selection, minVersion semver.Version, minPackage string) *Channel {
	if s.MinEdge == "" && s.Package == "" {
		return c
	}
	if s.Package != "" && c.Package != s.Package {
		return nil
	}
	if minPackage != "" && c.Package != minPackage {
		return nil
	}
	out := &Channel{Package: c.Package, Name: c.Name, Source: c.Source}
	hasEdges := func(e *declcfg.ChannelEntry) bool {
		return e.Replaces != "" || len(e.Skips) > 0 || e.SkipRange != ""
	}
	for _, ce := range c.Entries {
		f := declcfg.ChannelEntry{Name: ce.Name}
		switch {
		case s.MinEdge == "":
			f.Replaces, f.Skips, f.SkipRange = ce.Replaces, ce.Skips, ce.SkipRange
			out.Entries = append(out.Entries, f)
			continue
		case ce.Name == s.MinEdge:
			// The floor itself, without its edges: they all lead below it.
			out.Entries = append(out.Entries, f)
			continue
		}
		if ce.Replaces != "" && g.Version(ce.Replaces).GTE(minVersion) {
			f.Replaces = ce.Replaces
		}
		for _, sk := range ce.Skips {
			if g.Version(sk).GTE(minVersion) {
				f.Skips = append(f.Skips, sk)
			}
		}
		if ce.SkipRange != "" {
			// A range that does not parse is not filtered on.
			if r, err := semver.ParseRange(ce.SkipRange); err == nil && r(minVersion) {
				f.SkipRange = ce.SkipRange
			}
		}
		if hasEdges(&f) || !hasEdges(&ce) && g.Version(f.Name).GTE(minVersion) {
			out.Entries = append(out.Entries, f)
		}
	}
	if len(out.Entries) == 0 {
		return nil
	}
	return out
}

// EdgeKind is the kind of an upgrade edge.
type EdgeKind uint8

// The kinds of edges.
const (
	// Skips: the entry lists the bundle in its skips.
	Skips EdgeKind = iota
	// SkipRange: the bundle's version is in the entry's skipRange.
	SkipRange
	// Replaces: the entry replaces the bundle.
	Replaces
)

func (k EdgeKind) String() string {
	switch k {
	case Skips:
		return "skip"
	case SkipRange:
		return "skipRange"
	case Replaces:
		return "replace"
	}
	return fmt.Sprintf("EdgeKind(%d)", k)
}

// Edge is an upgrade edge of a channel: a cluster running bundle From may
// upgrade to bundle To.
type Edge struct {
	From, To string
	Kind     EdgeKind
	// Range is the skipRange of a SkipRange edge.
	Range string
}

// Node is a channel entry with the edges that lead to it.
type Node struct {
	Name string
	// Edges lead to the node, in upstream's drawing order: its skips (in
	// the entry's order), then the channel's entries its skipRange covers
	// (in the channel's order), then the bundle it replaces.
	Edges []Edge
	// RangeErr is set when the entry's skipRange does not parse; its
	// edges are then left out.
	RangeErr error
}

// Nodes returns the channel's entries by decreasing version, as upstream
// draws them (entries of equal versions in the order upstream's sort
// leaves them), each with its incoming edges.
func (g *Graph) Nodes(c *Channel) []Node {
	order := make([]int, len(c.Entries))
	for i := range order {
		order[i] = i
	}
	// sort.Slice, not a stable sort: the permutation it makes of equal
	// versions is upstream's.
	sort.Slice(order, func(i, j int) bool {
		return g.Version(c.Entries[order[i]].Name).GT(g.Version(c.Entries[order[j]].Name))
	})
	nodes := make([]Node, len(order))
	for n, i := range order {
		ce := &c.Entries[i]
		nd := Node{Name: ce.Name}
		for _, s := range ce.Skips {
			nd.Edges = append(nd.Edges, Edge{From: s, To: ce.Name, Kind: Skips})
		}
		if ce.SkipRange != "" {
			r, err := semver.ParseRange(ce.SkipRange)
			if err != nil {
				nd.RangeErr = err
			} else {
				for _, other := range c.Entries {
					if r(g.Version(other.Name)) {
						nd.Edges = append(nd.Edges, Edge{From: other.Name, To: ce.Name, Kind: SkipRange, Range: ce.SkipRange})
					}
				}
			}
		}
		if ce.Replaces != "" {
			nd.Edges = append(nd.Edges, Edge{From: ce.Replaces, To: ce.Name, Kind: Replaces})
		}
		nodes[n] = nd
	}
	return nodes
}
