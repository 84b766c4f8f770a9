package olmv1

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/model"
	"github.com/fastopm/fastopm/alpha/property"
)

// NameLabel is the label catalogd sets on every ClusterCatalog: its name.
// A ClusterExtension's catalog selector can always match it.
const NameLabel = "olm.operatorframework.io/metadata.name"

// Catalog is one ClusterCatalog as OLM v1's resolver reads it from
// catalogd: a name, a priority, labels, and each package's channels,
// bundles and deprecations.
type Catalog struct {
	Name     string
	Priority int
	// Labels are the ClusterCatalog's labels; NameLabel is always there.
	Labels   map[string]string
	packages map[string]*Package
}

// Package is a package of a catalog.
type Package struct {
	Name           string
	DefaultChannel string
	// Channels are sorted by name.
	Channels []*Channel
	// Bundles are sorted by name, as catalogd serves them.
	Bundles []*Bundle
	// Deprecation is the package's olm.deprecations message, if any.
	Deprecation string
	byName      map[string]*Bundle
}

// Channel is a channel of a package: its entries, sorted by name.
type Channel struct {
	Name        string
	Entries     []Entry
	Deprecation string
}

// Entry is a channel entry: a bundle and its upgrade edges.
type Entry struct {
	Name, Replaces string
	Skips          []string
	SkipRange      string
}

// Bundle is an olm.bundle of a catalog, with what OLM v1 reads of it.
type Bundle struct {
	Name, Package, Image string
	// Version is the version of the bundle's first olm.package property
	// and Release its release field (nil when it has none).
	Version string
	Release *string
	// Dependencies are the types of the properties OLM v1 refuses as
	// dependencies (olm.package.required, olm.gvk.required,
	// olm.constraint), in the bundle's order, each once.
	Dependencies []string
	// Manifest is read from the bundle's olm.bundle.object properties; nil
	// when the catalog carries none (then, perhaps, csvMeta).
	Manifest *Manifest
	// Deprecation is the bundle's olm.deprecations message, if any.
	Deprecation string
	// Channels are the package's channels that hold the bundle, sorted.
	Channels []string
	Source   model.Source

	csvMeta *csvMetadata
}

// Deprecated reports whether olm.deprecations deprecates the bundle.
func (b *Bundle) Deprecated() bool { return b.Deprecation != "" }

// HasObjects reports whether the catalog carries the bundle's manifests.
func (b *Bundle) HasObjects() bool { return b.Manifest != nil }

// Packages returns the catalog's package names, sorted.
func (c *Catalog) Packages() []string {
	out := make([]string, 0, len(c.packages))
	for n := range c.packages {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Package returns a package, or nil.
func (c *Catalog) Package(name string) *Package { return c.packages[name] }

// Bundle returns a bundle of the package by name, or nil.
func (p *Package) Bundle(name string) *Bundle { return p.byName[name] }

// Channel returns a channel by name, or nil.
func (p *Package) Channel(name string) *Channel {
	for _, c := range p.Channels {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Collector keeps, from a catalog's blobs, what OLM v1 reads of its
// bundles. AddBlob may be called from several goroutines at once.
type Collector struct {
	mu      sync.Mutex
	bundles map[[2]string]*Bundle
}

// NewCollector returns an empty Collector.
func NewCollector() *Collector { return &Collector{bundles: map[[2]string]*Bundle{}} }

// AddBlob keeps the bundle of an olm.bundle blob; other blobs are ignored
// (the model has them). A blob that does not decode is left out (the
// model reports it).
func (c *Collector) AddBlob(b *declcfg.Blob) {
	if b.Schema != declcfg.SchemaBundle {
		return
	}
	bd, err := declcfg.DecodeBundle(b.JSON)
	if err != nil {
		return
	}
	bn := NewBundle(&bd)
	bn.Source = model.Source{Path: b.Path, Line: b.Line}
	c.mu.Lock()
	c.bundles[[2]string{bn.Package, bn.Name}] = bn
	c.mu.Unlock()
}

// NewBundle reads what OLM v1 reads of a bundle blob (or of a bundle
// rendered from an image); nothing of bd is kept.
func NewBundle(bd *declcfg.Bundle) *Bundle {
	b := &Bundle{Name: bd.Name, Package: bd.Package, Image: bd.Image}
	seenPkg := false
	for _, p := range bd.Properties {
		switch p.Type {
		case property.TypePackage:
			if seenPkg {
				continue
			}
			seenPkg = true
			var v struct {
				Version string  `json:"version"`
				Release *string `json:"release"`
			}
			if json.Unmarshal(p.Value, &v) == nil {
				b.Version, b.Release = v.Version, v.Release
			}
		case property.TypePackageRequired, property.TypeGVKRequired, property.TypeConstraint:
			if !slices.Contains(b.Dependencies, p.Type) {
				b.Dependencies = append(b.Dependencies, p.Type)
			}
		case property.TypeCSVMetadata:
			if b.csvMeta == nil {
				var m csvMetadata
				if json.Unmarshal(p.Value, &m) == nil {
					b.csvMeta = &m
				}
			}
		}
	}
	if len(bd.Objects) > 0 && !hasObjectProperty(bd.Properties) {
		b.Manifest = &Manifest{}
		for _, o := range bd.Objects {
			b.Manifest.AddObject([]byte(o))
		}
	} else {
		b.Manifest = ManifestOfProperties(bd.Properties)
	}
	return b
}

func hasObjectProperty(props []property.Property) bool {
	for _, p := range props {
		if p.Type == property.TypeBundleObject {
			return true
		}
	}
	return false
}

// NewCatalog makes a catalog out of a valid catalog's model and the
// bundles collected from the same blobs. labels are the ClusterCatalog's
// (NameLabel is added).
func NewCatalog(name string, priority int, labels map[string]string, m model.Model, c *Collector) (*Catalog, error) {
	cat := &Catalog{Name: name, Priority: priority, Labels: map[string]string{}, packages: map[string]*Package{}}
	for k, v := range labels {
		cat.Labels[k] = v
	}
	cat.Labels[NameLabel] = name
	for pn, mp := range m {
		p := &Package{Name: pn, byName: map[string]*Bundle{}}
		if mp.DefaultChannel != nil {
			p.DefaultChannel = mp.DefaultChannel.Name
		}
		if mp.Deprecation != nil {
			p.Deprecation = mp.Deprecation.Message
		}
		for cn, mc := range mp.Channels {
			ch := &Channel{Name: cn}
			if mc.Deprecation != nil {
				ch.Deprecation = mc.Deprecation.Message
			}
			for bn, mb := range mc.Bundles {
				ch.Entries = append(ch.Entries, Entry{Name: bn, Replaces: mb.Replaces, Skips: mb.Skips, SkipRange: mb.SkipRange})
				b := p.byName[bn]
				if b == nil {
					b = c.bundles[[2]string{pn, bn}]
					if b == nil {
						return nil, fmt.Errorf("package %q, channel %q: bundle %q has no olm.bundle blob", pn, cn, bn)
					}
					if mb.Deprecation != nil {
						b.Deprecation = mb.Deprecation.Message
					}
					p.byName[bn] = b
					p.Bundles = append(p.Bundles, b)
				}
				b.Channels = append(b.Channels, cn)
			}
			slices.SortFunc(ch.Entries, func(a, b Entry) int { return compareStrings(a.Name, b.Name) })
			p.Channels = append(p.Channels, ch)
		}
		slices.SortFunc(p.Channels, func(a, b *Channel) int { return compareStrings(a.Name, b.Name) })
		slices.SortFunc(p.Bundles, func(a, b *Bundle) int { return compareStrings(a.Name, b.Name) })
		for _, b := range p.Bundles {
			slices.Sort(b.Channels)
		}
		cat.packages[pn] = p
	}
	return cat, nil
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
