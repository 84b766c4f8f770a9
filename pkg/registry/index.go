// Package registry is the query side of `opm serve`: an Index built once
// from a catalog, holding everything the Registry API's queries need
// (packages, channels and their heads, channel entries with their upgrade
// edges, deprecations, provided APIs), and the queries themselves, with
// upstream opm's semantics and error texts.
//
// The Index holds no bundle payloads. While the catalog is read, each
// bundle's invariant answer (csvJson, objects, properties, dependencies...)
// is handed to a Sink, which encodes and stores it and returns a BodyRef;
// the Index keeps only that reference. Package registry knows nothing of
// gRPC or protobuf: pkg/cache encodes and stores the answers, pkg/server
// serves them.
package registry

import (
	"fmt"
	"sort"
	"sync"

	"github.com/fastopm/fastopm/alpha/model"
)

// GVK is a Kubernetes API group, version and kind.
type GVK struct {
	Group   string
	Version string
	Kind    string
}

// Property is a bundle property or dependency: a type and its JSON value.
type Property struct {
	Type  string
	Value []byte
}

// BundleAnswer is the part of a Bundle answer that is the same in every
// channel of the bundle. Byte slices are only valid during Sink.PutBundle.
type BundleAnswer struct {
	CsvName      string
	PackageName  string
	CsvJSON      []byte
	Objects      [][]byte
	BundlePath   string
	ProvidedAPIs []GVK
	RequiredAPIs []GVK
	Version      string
	Dependencies []Property
	Properties   []Property
}

// BodyRef locates a stored answer. Its meaning belongs to the Sink that
// returned it: Off and Len usually give the byte range of the stored
// record, Prefix the length of a part of it that some queries read alone
// (pkg/cache: the part ListBundles reads).
type BodyRef struct {
	Off    uint64
	Len    uint32
	Prefix uint32
}

// Sink stores answers while a catalog is read. Its methods are called from
// several goroutines at once.
type Sink interface {
	// PutBundle stores a bundle's invariant answer.
	PutBundle(a *BundleAnswer) (BodyRef, error)
	// PutMeta stores the canonical JSON of a blob of a custom schema.
	PutMeta(blob []byte) (BodyRef, error)
}

// Stash keeps bytes the load may need again but does not serve (a
// package's icon and description, needed only by bundles whose CSV is
// synthesized): out of memory, they do not add to the load's peak.
// pkg/cache's Writer is one; stashed bytes are not part of a saved cache.
type Stash interface {
	Stash(b []byte) (BodyRef, error)
	ReadStash(r BodyRef) ([]byte, error)
}

// Index is a loaded catalog, ready for queries. Its exported fields are
// what pkg/cache persists; the query methods are safe for concurrent use
// once the Index is built or decoded (call nothing that modifies it then).
type Index struct {
	// Packages sorted by name.
	Packages []Package
	// Bundles sorted by package, then name: one per bundle, shared by the
	// channels that list it.
	Bundles []Bundle
	// Metas are the blobs of custom schemas, sorted by schema, package,
	// name and content hash, without duplicates.
	Metas []Meta

	once sync.Once
	lazy *lazyIndex
}

// Package is an operator package.
type Package struct {
	Name           string
	DefaultChannel string
	Deprecation    *model.Deprecation
	// Channels sorted by name.
	Channels []Channel
}

// Channel is a channel of a package.
type Channel struct {
	Name        string
	Deprecation *model.Deprecation
	// Head is the index in Entries of the channel head.
	Head int
	// Entries sorted by bundle name.
	Entries []Entry
}

// Entry is a bundle as listed by one channel, with its upgrade edges.
type Entry struct {
	// Bundle is the index of the bundle in Index.Bundles.
	Bundle    int
	Replaces  string
	Skips     []string
	SkipRange string
}

// Bundle is a bundle of a package.
type Bundle struct {
	// Package is the index of the bundle's package in Index.Packages.
	Package     int
	Name        string
	HasImage    bool
	Deprecation *model.Deprecation
	// Provides lists the APIs of the bundle's olm.gvk properties.
	Provides []GVK
	Body     BodyRef
}

// Meta is a stored blob of a custom (non-OLM) schema.
type Meta struct {
	Schema  string
	Package string
	Name    string
	// Hash identifies the blob's content (for ordering and deduplication).
	Hash uint64
	Body BodyRef
}

// lazyIndex holds lookup tables built on the first query that needs them.
type lazyIndex struct {
	listOrder []EntryRef
	providers map[GVK][]EntryRef
	replacers map[string][]Edge
}

// EntryRef names one channel entry of the Index.
type EntryRef struct {
	Package, Channel, Entry int
}

// Edge is an upgrade edge as the API's ChannelEntry messages tell it:
// bundle BundleName of a package's channel replaces Replaces.
// (declcfg.ChannelEntry is an entry of an olm.channel blob.)
type Edge struct {
	PackageName string
	ChannelName string
	BundleName  string
	Replaces    string
}

// Hit is a bundle found by a query, in the channel it was found in.
type Hit struct {
	Package *Package
	Channel *Channel
	Entry   *Entry
	Bundle  *Bundle
}

// Hit returns the entry ref points at.
func (x *Index) Hit(ref EntryRef) Hit {
	p := &x.Packages[ref.Package]
	ch := &p.Channels[ref.Channel]
	e := &ch.Entries[ref.Entry]
	return Hit{Package: p, Channel: ch, Entry: e, Bundle: &x.Bundles[e.Bundle]}
}

// PackageIndex returns the position of the named package in Packages.
func (x *Index) PackageIndex(name string) (int, bool) {
	i := sort.Search(len(x.Packages), func(i int) bool { return x.Packages[i].Name >= name })
	return i, i < len(x.Packages) && x.Packages[i].Name == name
}

// ChannelIndex returns the position of the named channel in p.Channels.
func (p *Package) ChannelIndex(name string) (int, bool) {
	i := sort.Search(len(p.Channels), func(i int) bool { return p.Channels[i].Name >= name })
	return i, i < len(p.Channels) && p.Channels[i].Name == name
}

// Channel returns the named channel, or nil.
func (p *Package) Channel(name string) *Channel {
	if i, ok := p.ChannelIndex(name); ok {
		return &p.Channels[i]
	}
	return nil
}

// EntryIndex returns the position in c.Entries of the named bundle.
func (x *Index) EntryIndex(c *Channel, bundle string) (int, bool) {
	i := sort.Search(len(c.Entries), func(i int) bool { return x.Bundles[c.Entries[i].Bundle].Name >= bundle })
	return i, i < len(c.Entries) && x.Bundles[c.Entries[i].Bundle].Name == bundle
}

// BundleName returns the name of the bundle of an entry.
func (x *Index) BundleName(e *Entry) string { return x.Bundles[e.Bundle].Name }

// Validate checks the internal consistency of an Index (references in
// range, sorted lists, a head in every channel), so that a decoded Index
// from a damaged cache is refused rather than served.
func (x *Index) Validate() error {
	for i := range x.Packages {
		p := &x.Packages[i]
		if i > 0 && x.Packages[i-1].Name >= p.Name {
			return errorf("packages are not sorted at %q", p.Name)
		}
		for j := range p.Channels {
			c := &p.Channels[j]
			if j > 0 && p.Channels[j-1].Name >= c.Name {
				return errorf("channels of package %q are not sorted at %q", p.Name, c.Name)
			}
			if c.Head < 0 || c.Head >= len(c.Entries) {
				return errorf("package %q channel %q: head out of range", p.Name, c.Name)
			}
			for k := range c.Entries {
				e := &c.Entries[k]
				if e.Bundle < 0 || e.Bundle >= len(x.Bundles) || x.Bundles[e.Bundle].Package != i {
					return errorf("package %q channel %q: bad bundle reference", p.Name, c.Name)
				}
				if k > 0 && x.Bundles[c.Entries[k-1].Bundle].Name >= x.Bundles[e.Bundle].Name {
					return errorf("entries of package %q channel %q are not sorted", p.Name, c.Name)
				}
			}
		}
	}
	for i := range x.Bundles {
		if b := &x.Bundles[i]; b.Package < 0 || b.Package >= len(x.Packages) {
			return errorf("bundle %q: package out of range", b.Name)
		}
	}
	return nil
}

func errorf(format string, args ...any) error {
	return fmt.Errorf("invalid index: "+format, args...)
}
