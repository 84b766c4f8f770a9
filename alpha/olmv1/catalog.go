package olmv1

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/model"
	"github.com/fastopm/fastopm/alpha/property"
	"github.com/fastopm/fastopm/pkg/canonjson"
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
	// Bundles are in the order operator-controller's catalog client reads
	// them on one CPU: by the name of the file its cache keeps each in
	// (cacheFileOrder).
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
	// Deprecation is the bundle's olm.deprecations message, if any.
	Deprecation string
	// Channels are the package's channels that hold the bundle, sorted.
	Channels []string
	// LegacyDeprecated is true when the bundle has the olm.deprecated
	// property, which OLM v0 never installs and OLM v1 ignores.
	LegacyDeprecated bool
	Source           model.Source

	csvMeta *csvMetadata
	// objects: the catalog carries the bundle's manifests (olm.bundle.object
	// properties, or the objects of a bundle rendered from an image).
	objects bool
	// manifest is read from them, at once (NewBundle) or when first asked
	// for (reread, then set to nil).
	manifest     *Manifest
	manifestOnce sync.Once
	reread       func() ([]byte, error)
}

// Deprecated reports whether olm.deprecations deprecates the bundle.
func (b *Bundle) Deprecated() bool { return b.Deprecation != "" }

// HasObjects reports whether the catalog carries the bundle's manifests.
func (b *Bundle) HasObjects() bool { return b.objects }

// Manifest is what OLM v1's checks read of the bundle's manifests; nil
// when the catalog carries none (HasObjects is false). A bundle collected
// with a way to read its blob again (Collector.AddBlobAt) reads them now,
// once; when the blob cannot be read again, the Manifest's Errors say so.
func (b *Bundle) Manifest() *Manifest {
	b.manifestOnce.Do(func() {
		if b.reread == nil {
			return
		}
		b.manifest = b.readManifest()
		b.reread = nil
	})
	return b.manifest
}

func (b *Bundle) readManifest() *Manifest {
	data, err := b.reread()
	if err != nil {
		return &Manifest{Errors: []string{fmt.Sprintf("the bundle's blob cannot be read again: %v", err)}, unreadable: true}
	}
	bd, err := declcfg.DecodeBundle(data)
	if err != nil || bd.Name != b.Name || bd.Package != b.Package {
		return &Manifest{Errors: []string{"the bundle's blob cannot be read again: the catalog changed while it was read"}, unreadable: true}
	}
	return manifestOf(&bd)
}

// Packages returns the catalog's package names, sorted.
func (c *Catalog) Packages() []string { return slices.Sorted(maps.Keys(c.packages)) }

// Bundle returns a bundle of a package by name, or nil.
func (c *Catalog) Bundle(pkg, name string) *Bundle {
	if p := c.packages[pkg]; p != nil {
		return p.byName[name]
	}
	return nil
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

// Collector keeps, from a catalog's blobs, what OLM v1 reads of them:
// packages, channels, bundles and deprecations, as catalogd serves them
// to operator-controller. It does not validate (the model does); a blob
// that does not decode is left out. AddBlob may be called from several
// goroutines at once.
type Collector struct {
	mu           sync.Mutex
	packages     map[string]string // name -> default channel
	channels     []declcfg.Channel
	bundles      []*Bundle
	deprecations []declcfg.Deprecation
}

// NewCollector returns an empty Collector.
func NewCollector() *Collector { return &Collector{packages: map[string]string{}} }

// AddBlob keeps what OLM v1 reads of a blob.
func (c *Collector) AddBlob(b *declcfg.Blob) { c.AddBlobAt(b, nil) }

// AddBlobAt is AddBlob with a way to read the blob's bytes again later
// (nil: none). A bundle's manifests are then read only when its
// installability is first asked for (most bundles of a catalog never
// are), not now.
func (c *Collector) AddBlobAt(b *declcfg.Blob, reread func() ([]byte, error)) {
	switch b.Schema {
	case declcfg.SchemaPackage:
		p, err := declcfg.DecodePackage(b.JSON)
		if err != nil {
			return
		}
		c.mu.Lock()
		c.packages[p.Name] = p.DefaultChannel
		c.mu.Unlock()
	case declcfg.SchemaChannel:
		ch, err := declcfg.DecodeChannel(b.JSON)
		if err != nil {
			return
		}
		ch.Properties = nil
		c.mu.Lock()
		c.channels = append(c.channels, ch)
		c.mu.Unlock()
	case declcfg.SchemaBundle:
		bd, err := declcfg.DecodeBundle(b.JSON)
		if err != nil {
			return
		}
		var bn *Bundle
		if reread != nil {
			bn = newBundle(&bd)
			if bn.objects {
				bn.reread = reread
			}
		} else {
			bn = NewBundle(&bd)
		}
		bn.Source = model.Source{Path: b.Path, Line: b.Line}
		c.mu.Lock()
		c.bundles = append(c.bundles, bn)
		c.mu.Unlock()
	case declcfg.SchemaDeprecations:
		d, err := declcfg.DecodeDeprecation(b.JSON)
		if err != nil {
			return
		}
		c.mu.Lock()
		c.deprecations = append(c.deprecations, d)
		c.mu.Unlock()
	}
}

// NewBundle reads what OLM v1 reads of a bundle blob (or of a bundle
// rendered from an image), its manifests too; nothing of bd is kept.
func NewBundle(bd *declcfg.Bundle) *Bundle {
	b := newBundle(bd)
	if b.objects {
		b.manifest = manifestOf(bd)
	}
	return b
}

// newBundle is NewBundle but the manifests: objects says whether there
// are some.
func newBundle(bd *declcfg.Bundle) *Bundle {
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
		case property.TypeDeprecated:
			b.LegacyDeprecated = true
		case property.TypePackageRequired, property.TypeGVKRequired, property.TypeConstraint:
			if !slices.Contains(b.Dependencies, p.Type) {
				b.Dependencies = append(b.Dependencies, p.Type)
			}
		case property.TypeCSVMetadata:
			if b.csvMeta == nil {
				b.csvMeta = readCSVMetadata(p.Value)
			}
		}
	}
	b.objects = len(bd.Objects) > 0 || hasObjectProperty(bd.Properties)
	return b
}

// manifestOf reads a bundle's manifests: its olm.bundle.object
// properties, or its objects when it has none (a bundle rendered from an
// image).
func manifestOf(bd *declcfg.Bundle) *Manifest {
	if len(bd.Objects) > 0 && !hasObjectProperty(bd.Properties) {
		m := &Manifest{}
		for _, o := range bd.Objects {
			m.AddObject([]byte(o))
		}
		return m
	}
	return ManifestOfProperties(bd.Properties)
}

// readCSVMetadata reads the install modes and owned API services of an
// olm.csv.metadata value (canonical JSON, as a blob's property values
// are), skipping its descriptions; nil when it is not an object.
func readCSVMetadata(v []byte) *csvMetadata {
	if canonjson.Kind(v) != '{' {
		return nil
	}
	m := &csvMetadata{}
	canonjson.ForEachMember(v, func(k, val []byte) bool {
		switch string(k) {
		case "installModes":
			_ = json.Unmarshal(val, &m.InstallModes)
		case "apiServiceDefinitions":
			canonjson.ForEachMember(val, func(k, val []byte) bool {
				if string(k) == "owned" {
					canonjson.ForEachElement(val, func([]byte) bool { m.ownedAPIServices++; return true })
				}
				return true
			})
		}
		return true
	})
	return m
}

// cacheFileOrder orders two bundles of a package as operator-controller
// v1.11.0 reads them. Its catalog cache (catalogmetadata/cache, writeFS)
// keeps each blob of a package in a file of its own,
// PACKAGE/olm.bundle/NAME.json (filepath.Join, so a name with a slash is
// a file in a subdirectory), and its catalog client loads a package's
// directory with declcfg.LoadFS, which walks it with fs.WalkDir, each
// directory's entries in the order of their names, and appends bundles as
// its workers parse the files: one worker per CPU. On one CPU the bundles
// are therefore in the walk's order: the paths compared element by
// element (rel.v1.0.0+001.json before rel.v1.0.0.json, '+' being before
// '.'; a directory rel before rel.b.json). The resolver sorts its
// candidates stably, so among bundles of equal version and release this
// order picks. On several CPUs the order is whichever file a worker
// finished first, and changes from run to run.
func cacheFileOrder(a, b string) int {
	pa := strings.Split(path.Clean(declcfg.SchemaBundle+"/"+a+".json"), "/")
	pb := strings.Split(path.Clean(declcfg.SchemaBundle+"/"+b+".json"), "/")
	return slices.Compare(pa, pb)
}

func hasObjectProperty(props []property.Property) bool {
	for _, p := range props {
		if p.Type == property.TypeBundleObject {
			return true
		}
	}
	return false
}

// Catalog makes the catalog name (with priority and labels; NameLabel is
// added) of the blobs collected. Call it once.
func (c *Collector) Catalog(name string, priority int, labels map[string]string) *Catalog {
	cat := &Catalog{Name: name, Priority: priority, Labels: map[string]string{}, packages: map[string]*Package{}}
	for k, v := range labels {
		cat.Labels[k] = v
	}
	cat.Labels[NameLabel] = name
	pkg := func(n string) *Package {
		p := cat.packages[n]
		if p == nil {
			p = &Package{Name: n, byName: map[string]*Bundle{}}
			cat.packages[n] = p
		}
		return p
	}
	for n, def := range c.packages {
		pkg(n).DefaultChannel = def
	}
	for _, b := range c.bundles {
		p := pkg(b.Package)
		if p.byName[b.Name] == nil {
			p.byName[b.Name] = b
			p.Bundles = append(p.Bundles, b)
		}
	}
	for _, mc := range c.channels {
		p := pkg(mc.Package)
		ch := &Channel{Name: mc.Name}
		for _, e := range mc.Entries {
			ch.Entries = append(ch.Entries, Entry{Name: e.Name, Replaces: e.Replaces, Skips: e.Skips, SkipRange: e.SkipRange})
			if b := p.byName[e.Name]; b != nil && !slices.Contains(b.Channels, mc.Name) {
				b.Channels = append(b.Channels, mc.Name)
			}
		}
		slices.SortStableFunc(ch.Entries, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
		p.Channels = append(p.Channels, ch)
	}
	for _, d := range c.deprecations {
		p := pkg(d.Package)
		for _, e := range d.Entries {
			switch e.Reference.Schema {
			case declcfg.SchemaPackage:
				p.Deprecation = e.Message
			case declcfg.SchemaChannel:
				if ch := p.Channel(e.Reference.Name); ch != nil {
					ch.Deprecation = e.Message
				}
			case declcfg.SchemaBundle:
				if b := p.byName[e.Reference.Name]; b != nil {
					b.Deprecation = e.Message
				}
			}
		}
	}
	for _, p := range cat.packages {
		slices.SortStableFunc(p.Channels, func(a, b *Channel) int { return strings.Compare(a.Name, b.Name) })
		slices.SortStableFunc(p.Bundles, func(a, b *Bundle) int { return cacheFileOrder(a.Name, b.Name) })
		for _, b := range p.Bundles {
			slices.Sort(b.Channels)
		}
	}
	return cat
}
