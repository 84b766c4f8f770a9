package registry

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
)

// Code classifies a query error.
type Code int

// Query error codes.
const (
	// NotFound: the request is well formed but names nothing in the
	// catalog.
	NotFound Code = iota + 1
	// InvalidArgument: a field the query needs is empty.
	InvalidArgument
)

// Error is a failed query. Its text is upstream opm's, word for word.
type Error struct {
	Code Code
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// notFound returns upstream's message with code NotFound, or
// InvalidArgument when the request left a required field empty (upstream
// answers both with the same text).
func notFound(invalid bool, format string, args ...any) *Error {
	code := NotFound
	if invalid {
		code = InvalidArgument
	}
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

func anyEmpty(ss ...string) bool {
	return slices.Contains(ss, "")
}

// ListPackages returns the package names, sorted.
func (x *Index) ListPackages() []string {
	out := make([]string, len(x.Packages))
	for i := range x.Packages {
		out[i] = x.Packages[i].Name
	}
	return out
}

// GetPackage returns the named package.
func (x *Index) GetPackage(name string) (*Package, error) {
	i, ok := x.PackageIndex(name)
	if !ok {
		return nil, notFound(name == "", "package %q not found", name)
	}
	return &x.Packages[i], nil
}

// channel finds a package's channel with upstream's messages.
func (x *Index) channel(pkgName, chName string, pkgQuoted, invalid bool) (*Package, *Channel, error) {
	i, ok := x.PackageIndex(pkgName)
	if !ok {
		if pkgQuoted {
			return nil, nil, notFound(invalid, "package %q not found", pkgName)
		}
		return nil, nil, notFound(invalid, "package %s not found", pkgName)
	}
	p := &x.Packages[i]
	ch := p.Channel(chName)
	if ch == nil {
		return nil, nil, notFound(invalid, "package %q, channel %q not found", pkgName, chName)
	}
	return p, ch, nil
}

// GetBundle returns a bundle of a package's channel.
func (x *Index) GetBundle(pkgName, chName, csvName string) (Hit, error) {
	invalid := anyEmpty(pkgName, chName, csvName)
	p, ch, err := x.channel(pkgName, chName, true, invalid)
	if err != nil {
		return Hit{}, err
	}
	j, ok := x.EntryIndex(ch, csvName)
	if !ok {
		return Hit{}, notFound(invalid, "package %q, channel %q, bundle %q not found", pkgName, chName, csvName)
	}
	e := &ch.Entries[j]
	return Hit{Package: p, Channel: ch, Entry: e, Bundle: &x.Bundles[e.Bundle]}, nil
}

// GetBundleForChannel returns the head of a package's channel.
func (x *Index) GetBundleForChannel(pkgName, chName string) (Hit, error) {
	p, ch, err := x.channel(pkgName, chName, true, anyEmpty(pkgName, chName))
	if err != nil {
		return Hit{}, err
	}
	e := &ch.Entries[ch.Head]
	return Hit{Package: p, Channel: ch, Entry: e, Bundle: &x.Bundles[e.Bundle]}, nil
}

// GetBundleThatReplaces returns the bundle of a package's channel that
// replaces or skips csvName. When several do, upstream picks one at
// random; this picks the first by name.
func (x *Index) GetBundleThatReplaces(csvName, pkgName, chName string) (Hit, error) {
	invalid := anyEmpty(csvName, pkgName, chName)
	p, ch, err := x.channel(pkgName, chName, false, invalid)
	if err != nil {
		return Hit{}, err
	}
	for j := range ch.Entries {
		e := &ch.Entries[j]
		if e.Replaces == csvName || slices.Contains(e.Skips, csvName) {
			return Hit{Package: p, Channel: ch, Entry: e, Bundle: &x.Bundles[e.Bundle]}, nil
		}
	}
	return Hit{}, notFound(invalid, "no entry found for package %q, channel %q", pkgName, chName)
}

// GetChannelEntriesThatReplace returns, sorted, an entry for each bundle
// whose replaces is csvName and one for each time a bundle skips it (with
// the bundle's own replaces).
func (x *Index) GetChannelEntriesThatReplace(csvName string) ([]Edge, error) {
	l := x.lazyTables()
	out := l.replacers[csvName]
	if len(out) == 0 {
		return nil, notFound(csvName == "", "no channel entries found that replace %s", csvName)
	}
	return out, nil
}

// GetChannelEntriesThatProvide returns, sorted, the entries of every
// bundle that provides the API (plural is not part of the match), plus one
// entry per skipped bundle with replaces set to the skipped name.
func (x *Index) GetChannelEntriesThatProvide(group, version, kind string) ([]Edge, error) {
	var out []Edge
	for _, ref := range x.lazyTables().providers[GVK{group, version, kind}] {
		h := x.Hit(ref)
		out = appendProvideEntries(out, x, h, false)
	}
	if len(out) == 0 {
		return nil, notFound(anyEmpty(version, kind), "no channel entries found that provide group:%q version:%q kind:%q", group, version, kind)
	}
	sortEntries(out)
	return out, nil
}

// GetLatestChannelEntriesThatProvide is GetChannelEntriesThatProvide for
// channel heads only; a head's skips count only for bundles of the same
// channel.
func (x *Index) GetLatestChannelEntriesThatProvide(group, version, kind string) ([]Edge, error) {
	var out []Edge
	for _, ref := range x.lazyTables().providers[GVK{group, version, kind}] {
		h := x.Hit(ref)
		if h.Entry != &h.Channel.Entries[h.Channel.Head] {
			continue
		}
		out = appendProvideEntries(out, x, h, true)
	}
	if len(out) == 0 {
		return nil, notFound(anyEmpty(version, kind), "no channel entries found that provide group:%q version:%q kind:%q", group, version, kind)
	}
	sortEntries(out)
	return out, nil
}

func appendProvideEntries(out []Edge, x *Index, h Hit, sameChannel bool) []Edge {
	ce := Edge{PackageName: h.Package.Name, ChannelName: h.Channel.Name, BundleName: h.Bundle.Name, Replaces: h.Entry.Replaces}
	out = append(out, ce)
	for _, s := range h.Entry.Skips {
		if s == h.Entry.Replaces {
			continue
		}
		if sameChannel {
			if _, ok := x.EntryIndex(h.Channel, s); !ok {
				continue
			}
		}
		ce.Replaces = s
		out = append(out, ce)
	}
	return out
}

// GetDefaultBundleThatProvides returns, among the channel heads that
// provide the API, the head of the default channel of the first package by
// name.
func (x *Index) GetDefaultBundleThatProvides(group, version, kind string) (Hit, error) {
	latest, err := x.GetLatestChannelEntriesThatProvide(group, version, kind)
	if err != nil {
		return Hit{}, err
	}
	// latest is sorted by package name first.
	for _, e := range latest {
		i, _ := x.PackageIndex(e.PackageName)
		p := &x.Packages[i]
		if e.ChannelName == p.DefaultChannel {
			return x.GetBundle(e.PackageName, e.ChannelName, e.BundleName)
		}
	}
	return Hit{}, notFound(anyEmpty(version, kind), "no entry found that provides group:%q version:%q kind:%q", group, version, kind)
}

// ListBundles returns every channel entry, ordered as upstream streams
// them: by channel name, then package name, then bundle name.
func (x *Index) ListBundles() []EntryRef {
	return x.lazyTables().listOrder
}

// CustomMetas returns the stored blobs of a custom schema for a package
// ("" for blobs without a package).
func (x *Index) CustomMetas(schema, pkg string) []Meta {
	lo := sort.Search(len(x.Metas), func(i int) bool {
		m := &x.Metas[i]
		return m.Schema > schema || (m.Schema == schema && m.Package >= pkg)
	})
	hi := lo
	for hi < len(x.Metas) && x.Metas[hi].Schema == schema && x.Metas[hi].Package == pkg {
		hi++
	}
	return x.Metas[lo:hi]
}

// lazyTables builds the lookup tables on first use.
func (x *Index) lazyTables() *lazyIndex {
	x.once.Do(func() {
		l := &lazyIndex{providers: map[GVK][]EntryRef{}, replacers: map[string][]Edge{}}
		for pi := range x.Packages {
			p := &x.Packages[pi]
			for ci := range p.Channels {
				ch := &p.Channels[ci]
				for ei := range ch.Entries {
					ref := EntryRef{pi, ci, ei}
					l.listOrder = append(l.listOrder, ref)
					e := &ch.Entries[ei]
					b := &x.Bundles[e.Bundle]
					for _, g := range b.Provides {
						if refs := l.providers[g]; len(refs) == 0 || refs[len(refs)-1] != ref {
							l.providers[g] = append(refs, ref)
						}
					}
					ce := Edge{PackageName: p.Name, ChannelName: ch.Name, BundleName: b.Name, Replaces: e.Replaces}
					// Entries that replace nothing are listed under "": upstream
					// answers an empty csvName with them.
					l.replacers[e.Replaces] = append(l.replacers[e.Replaces], ce)
					for _, s := range e.Skips {
						if s != e.Replaces {
							l.replacers[s] = append(l.replacers[s], ce)
						}
					}
				}
			}
		}
		for _, es := range l.replacers {
			sortEntries(es)
		}
		slices.SortStableFunc(l.listOrder, func(a, b EntryRef) int {
			pa, pb := &x.Packages[a.Package], &x.Packages[b.Package]
			if c := cmp.Compare(pa.Channels[a.Channel].Name, pb.Channels[b.Channel].Name); c != 0 {
				return c
			}
			if c := cmp.Compare(pa.Name, pb.Name); c != 0 {
				return c
			}
			return cmp.Compare(x.Bundles[pa.Channels[a.Channel].Entries[a.Entry].Bundle].Name,
				x.Bundles[pb.Channels[b.Channel].Entries[b.Entry].Bundle].Name)
		})
		x.lazy = l
	})
	return x.lazy
}

func sortEntries(es []Edge) {
	slices.SortStableFunc(es, func(a, b Edge) int {
		return cmp.Or(cmp.Compare(a.PackageName, b.PackageName), cmp.Compare(a.ChannelName, b.ChannelName),
			cmp.Compare(a.BundleName, b.BundleName), cmp.Compare(a.Replaces, b.Replaces))
	})
}

// metaKeyRE is what the schema and package of a custom-schema blob must
// match to be stored and queried, as upstream requires.
var metaKeyRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]*$`)

// ValidateMetaKey checks the schema and (when not empty) the package of a
// custom-schema blob or query, with upstream's messages.
func ValidateMetaKey(schema, pkg string) error {
	if schema == "" {
		return errors.New("invalid schema: must not be empty")
	}
	if !metaKeyRE.MatchString(schema) {
		return fmt.Errorf("invalid schema %q: must match %s", schema, metaKeyRE)
	}
	if pkg != "" && !metaKeyRE.MatchString(pkg) {
		return fmt.Errorf("invalid packageName %q: must match %s", pkg, metaKeyRE)
	}
	return nil
}
