package install

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/blang/semver/v4"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/model"
	"github.com/fastopm/fastopm/alpha/property"
)

// Property is a bundle property as OLM's resolver sees it: its type and
// its JSON value.
type Property struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// GVK is an API: group, version and kind.
type GVK struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

func (g GVK) String() string { return g.Group + "/" + g.Version + "/" + g.Kind }

// Bundle is an olm.bundle as OLM's resolver reads it from a catalog's gRPC
// API (ListBundles): its properties but olm.bundle.object and
// olm.csv.metadata, which the API leaves out, followed by the
// olm.gvk.required and olm.package.required properties again, as OLM
// turns the API's dependencies back into properties.
type Bundle struct {
	Name, Package, Image string
	// Version is the version of its olm.package property.
	Version    string
	Properties []Property
	Source     model.Source

	version    *semver.Version // Version read tolerantly; nil when it does not parse
	own        int             // Properties[:own] are the bundle's own
	gvks       []GVK           // olm.gvk
	packages   []pkgProperty   // olm.package
	labels     []string        // olm.label
	deprecated bool            // an olm.deprecated property

	celOnce  sync.Once
	celProps []any
}

type pkgProperty struct {
	PackageName string `json:"packageName"`
	Version     string `json:"version"`
}

// cel returns the bundle's properties as CEL rules see them.
func (b *Bundle) cel() []any {
	b.celOnce.Do(func() { b.celProps = celProperties(b.Properties) })
	return b.celProps
}

// Entry is a bundle in one channel of one catalog: what OLM's resolver
// calls an operator (cache.Entry), and a solver variable.
type Entry struct {
	Bundle  *Bundle
	Catalog *Catalog
	Channel string
	// Default is true in the package's default channel.
	Default   bool
	Replaces  string
	Skips     []string
	SkipRange string

	skipRange semver.Range
	ident     string // id(), made once: a problem names an entry once per constraint it is in
	// subscription names the Subscription of an installed CSV (an entry
	// of a namespace's installed catalog); "" when none names it.
	subscription string
}

// Package is the bundle's package.
func (e *Entry) Package() string { return e.Bundle.Package }

// Name is the bundle's name.
func (e *Entry) Name() string { return e.Bundle.Name }

// id is OLM's identifier of the entry (catalog/channel/bundle; OLM puts
// the catalog's namespace after its name).
func (e *Entry) id() string { return e.ident }

// Catalog is one CatalogSource: a name, a priority and its bundles, by
// package and channel.
type Catalog struct {
	Name     string
	Priority int
	// Namespace is the CatalogSource's namespace when the catalog is
	// resolved as a cluster's (ResolveNamespace); "" otherwise. OLM names
	// a catalog's bundles name/namespace/channel/bundle.
	Namespace string
	// virtual marks the catalog of a namespace's installed CSVs (OLM's
	// "@existing" source): its entries have no channel, and each is a
	// source of its own.
	virtual bool

	packages map[string]*pkgInfo
	// entries are in the order of the catalog's ListBundles: by package,
	// channel and bundle name.
	entries []*Entry
	// named counts the entries of each channel name and bundle name across
	// packages: OLM tells bundles apart by catalog, channel and name only.
	named map[[2]string]int
}

type pkgInfo struct {
	name, defaultChannel string
	channels             []string            // sorted
	byChannel            map[string][]*Entry // in ListBundles order
}

// Key names the catalog among a resolver's: its name, or name/namespace
// for a CatalogSource of a cluster (OLM's SourceKey).
func (c *Catalog) Key() string {
	if c.Namespace == "" {
		return c.Name
	}
	return c.Name + "/" + c.Namespace
}

// Display names the catalog for people: its name, or namespace/name for
// a CatalogSource of a cluster.
func (c *Catalog) Display() string {
	if c.Namespace == "" {
		return c.Name
	}
	return c.Namespace + "/" + c.Name
}

// SetNamespace makes the catalog the CatalogSource of that namespace, as
// a cluster's resolution names it. Call it before the catalog is given to
// a resolver.
func (c *Catalog) SetNamespace(ns string) {
	c.Namespace = ns
	for _, e := range c.entries {
		e.ident = c.Key() + "/" + e.Channel + "/" + e.Bundle.Name
	}
}

// Renamed returns a copy of the catalog under another name: the same
// priority, namespace, bundles and upgrade edges, with entries of its own
// (an entry names its catalog, and OLM's identifier of it holds the
// name). c is only read: a catalog already given to resolvers can be
// renamed. The hub gives its cluster answers a catalog it serves under a
// name of its own under its CatalogSource's name.
func (c *Catalog) Renamed(name string) *Catalog {
	n := &Catalog{Name: name, Priority: c.Priority, Namespace: c.Namespace, virtual: c.virtual, named: c.named,
		packages: make(map[string]*pkgInfo, len(c.packages)), entries: make([]*Entry, len(c.entries))}
	copies := make([]Entry, len(c.entries))
	of := make(map[*Entry]*Entry, len(c.entries))
	for i, e := range c.entries {
		copies[i] = *e
		ne := &copies[i]
		ne.Catalog = n
		ne.ident = n.Key() + "/" + e.Channel + "/" + e.Bundle.Name
		n.entries[i], of[e] = ne, ne
	}
	for pn, p := range c.packages {
		np := &pkgInfo{name: p.name, defaultChannel: p.defaultChannel, channels: p.channels, byChannel: make(map[string][]*Entry, len(p.byChannel))}
		for ch, es := range p.byChannel {
			nes := make([]*Entry, len(es))
			for i, e := range es {
				nes[i] = of[e]
			}
			np.byChannel[ch] = nes
		}
		n.packages[pn] = np
	}
	return n
}

// Packages returns the catalog's package names, sorted.
func (c *Catalog) Packages() []string { return slices.Sorted(maps.Keys(c.packages)) }

// Channels returns a package's channel names, sorted, and its default
// channel.
func (c *Catalog) Channels(pkg string) (channels []string, defaultChannel string) {
	p := c.packages[pkg]
	if p == nil {
		return nil, ""
	}
	return p.channels, p.defaultChannel
}

// Entries returns the entries of a channel, in ListBundles order.
func (c *Catalog) Entries(pkg, channel string) []*Entry {
	if p := c.packages[pkg]; p != nil {
		return p.byChannel[channel]
	}
	return nil
}

// Collector keeps, from a catalog's blobs, what the resolver needs of its
// bundles. AddBlob may be called from several goroutines at once.
type Collector struct {
	mu      sync.Mutex
	bundles map[[2]string]*Bundle // by package and name
}

// NewCollector returns an empty Collector.
func NewCollector() *Collector { return &Collector{bundles: map[[2]string]*Bundle{}} }

// AddBlob keeps the bundle of an olm.bundle blob; other blobs are ignored.
// A blob that does not decode is left out (the model reports it).
func (c *Collector) AddBlob(b *declcfg.Blob) {
	if b.Schema != declcfg.SchemaBundle {
		return
	}
	bd, err := declcfg.DecodeBundle(b.JSON)
	if err != nil {
		return
	}
	bn := newBundle(&bd)
	bn.Source = model.Source{Path: b.Path, Line: b.Line}
	c.mu.Lock()
	c.bundles[[2]string{bn.Package, bn.Name}] = bn
	c.mu.Unlock()
}

// newBundle reads what the resolver needs of a bundle blob. Property
// values are copied: the blob's bytes may be reused.
func newBundle(bd *declcfg.Bundle) *Bundle {
	b := &Bundle{Name: bd.Name, Package: bd.Package, Image: bd.Image}
	var deps []Property
	for _, p := range bd.Properties {
		switch p.Type {
		case property.TypeBundleObject, property.TypeCSVMetadata:
			continue
		}
		prop := Property{Type: p.Type, Value: slices.Clone(p.Value)}
		b.Properties = append(b.Properties, prop)
		if b.addProvided(p.Type, p.Value) && p.Type == property.TypePackage && len(b.packages) == 1 {
			b.Version = b.packages[0].Version
		}
		switch p.Type {
		case property.TypeGVKRequired:
			// The API's dependency of type olm.gvk, read back.
			var v GVK
			if json.Unmarshal(p.Value, &v) == nil {
				val, _ := json.Marshal(struct {
					Group   string `json:"group"`
					Version string `json:"version"`
					Kind    string `json:"kind"`
				}{v.Group, v.Version, v.Kind})
				deps = append(deps, Property{Type: property.TypeGVKRequired, Value: val})
			}
		case property.TypePackageRequired:
			var v struct {
				PackageName  string `json:"packageName"`
				VersionRange string `json:"versionRange"`
			}
			if json.Unmarshal(p.Value, &v) == nil {
				val, _ := json.Marshal(v)
				deps = append(deps, Property{Type: property.TypePackageRequired, Value: val})
			}
		}
	}
	b.own = len(b.Properties)
	b.Properties = append(b.Properties, deps...)
	if v, err := semver.ParseTolerant(b.Version); err == nil {
		b.version = &v
	}
	return b
}

// addProvided reads a property of what the bundle is or provides (its
// packages, GVKs, labels, deprecation) into b, and says whether it read
// one.
func (b *Bundle) addProvided(typ string, value []byte) bool {
	switch typ {
	case property.TypePackage:
		var v pkgProperty
		if json.Unmarshal(value, &v) != nil {
			return false
		}
		b.packages = append(b.packages, v)
	case property.TypeGVK:
		var v GVK
		if json.Unmarshal(value, &v) != nil {
			return false
		}
		b.gvks = append(b.gvks, v)
	case typeLabel:
		var v struct {
			Label string `json:"label"`
		}
		if json.Unmarshal(value, &v) != nil {
			return false
		}
		b.labels = append(b.labels, v.Label)
	case typeDeprecated:
		b.deprecated = true
	default:
		return false
	}
	return true
}

// Property types the resolver reads that alpha/property does not name.
const (
	typeLabel         = "olm.label"
	typeLabelRequired = "olm.label.required"
	typeDeprecated    = "olm.deprecated"
)

// NewCatalog makes the catalog name (with priority) out of a valid
// catalog's model and the bundles collected from the same blobs.
func NewCatalog(name string, priority int, m model.Model, c *Collector) (*Catalog, error) {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	var l layout
	for _, pn := range names {
		mp := m[pn]
		lp := layoutPackage{name: pn}
		if mp.DefaultChannel != nil {
			lp.defaultChannel = mp.DefaultChannel.Name
		}
		for cn := range mp.Channels {
			lp.channels = append(lp.channels, layoutChannel{name: cn})
		}
		slices.SortFunc(lp.channels, func(a, b layoutChannel) int { return strings.Compare(a.name, b.name) })
		for i := range lp.channels {
			lc := &lp.channels[i]
			ch := mp.Channels[lc.name]
			bnames := make([]string, 0, len(ch.Bundles))
			for bn := range ch.Bundles {
				bnames = append(bnames, bn)
			}
			slices.Sort(bnames)
			for _, bn := range bnames {
				mb := ch.Bundles[bn]
				b := c.bundles[[2]string{pn, bn}]
				if b == nil {
					return nil, fmt.Errorf("package %q, channel %q: bundle %q has no olm.bundle blob", pn, lc.name, bn)
				}
				lc.entries = append(lc.entries, layoutEntry{bundle: b, replaces: mb.Replaces, skips: mb.Skips, skipRange: mb.SkipRange})
			}
		}
		l = append(l, lp)
	}
	return l.catalog(name, priority), nil
}

// layout is what a catalog holds, but its name and priority: its
// packages, sorted by name, their channels, sorted by name, and each
// channel's bundles, sorted by name, with their upgrade edges. NewCatalog
// reads it from a model, DecodeSnapshot from a snapshot.
type layout []layoutPackage

type layoutPackage struct {
	name, defaultChannel string
	channels             []layoutChannel
}

type layoutChannel struct {
	name    string
	entries []layoutEntry
}

type layoutEntry struct {
	bundle              *Bundle
	replaces, skipRange string
	skips               []string
}

// catalog makes the catalog name (with priority) of the layout.
func (l layout) catalog(name string, priority int) *Catalog {
	cat := &Catalog{Name: name, Priority: priority, packages: map[string]*pkgInfo{}, named: map[[2]string]int{}}
	for _, lp := range l {
		p := &pkgInfo{name: lp.name, defaultChannel: lp.defaultChannel, byChannel: map[string][]*Entry{}}
		for _, lc := range lp.channels {
			p.channels = append(p.channels, lc.name)
			for _, le := range lc.entries {
				b := le.bundle
				e := &Entry{Bundle: b, Catalog: cat, Channel: lc.name, Default: lc.name == p.defaultChannel,
					Replaces: le.replaces, Skips: le.skips, SkipRange: le.skipRange, ident: cat.Key() + "/" + lc.name + "/" + b.Name}
				if r, err := semver.ParseRange(le.skipRange); err == nil {
					e.skipRange = r
				}
				p.byChannel[lc.name] = append(p.byChannel[lc.name], e)
				cat.entries = append(cat.entries, e)
				cat.named[[2]string{lc.name, b.Name}]++
			}
		}
		cat.packages[lp.name] = p
	}
	return cat
}
