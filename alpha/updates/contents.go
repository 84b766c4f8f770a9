package updates

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
	"github.com/fastopm/fastopm/pkg/canonjson"
)

// MaxShownValue is the longest property value, in bytes of canonical
// JSON, that a content change carries in Old and New; a longer one (an
// olm.csv.metadata, a whole description) is only said to have changed.
const MaxShownValue = 256

// Contents are where the olm.bundle blobs of a catalog are, with a
// fingerprint of each one's properties and related images, as a
// ContentCollector notes them while the catalog is walked: what the
// bundles carry besides what the model keeps (channel entries, image,
// olm.deprecated) is read back by CompareContents only for the bundles
// whose fingerprints differ between two catalogs, so that a diff of two
// versions of a catalog reads again only what changed.
type Contents struct {
	name    string // the catalog's reference, in errors
	fsys    fs.FS
	bundles map[bundleKey]blobLoc
}

type bundleKey struct{ pkg, name string }

// blobLoc is where a blob is in its catalog, and its fingerprint.
type blobLoc struct {
	sum      [2]uint64 // two maphashes of the blob's properties and related images
	path     string
	file     int // the file's index in walk order
	off, n   int
	verbatim bool // the blob is the file's bytes [off, off+n)
}

// seeds make the fingerprints; both catalogs of a diff are read in one
// process.
var seeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

// ContentCollector notes where a catalog's olm.bundle blobs are
// (declcfg.WalkFunc's work: AddBlob may be called from several goroutines
// at once, and keeps nothing of the blob's bytes).
type ContentCollector struct {
	mu      sync.Mutex
	bundles map[bundleKey]blobLoc
}

// NewContentCollector returns an empty collector.
func NewContentCollector() *ContentCollector {
	return &ContentCollector{bundles: map[bundleKey]blobLoc{}}
}

// Contents returns what was collected, to be read back from fsys, the
// catalog walked (which must stay readable until CompareContents returns);
// name is the catalog's reference, which an error reading it back names
// (both catalogs of a diff often have a catalog.yaml).
func (cc *ContentCollector) Contents(name string, fsys fs.FS) *Contents {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return &Contents{name: name, fsys: fsys, bundles: cc.bundles}
}

// AddBlob notes an olm.bundle blob; others are ignored.
func (cc *ContentCollector) AddBlob(b *declcfg.Blob) {
	if b.Schema != declcfg.SchemaBundle {
		return
	}
	// The fingerprint covers what the contents are read from, the
	// properties and related images: a bundle whose image alone changes
	// (the model's part) is not read back.
	var h [2]maphash.Hash
	h[0].SetSeed(seeds[0])
	h[1].SetSeed(seeds[1])
	canonjson.ForEachMember(b.JSON, func(k, v []byte) bool {
		if string(k) == "properties" || string(k) == "relatedImages" {
			for i := range h {
				h[i].Write(k)
				h[i].Write(v)
			}
		}
		return true
	})
	loc := blobLoc{sum: [2]uint64{h[0].Sum64(), h[1].Sum64()},
		path: b.Path, file: b.File, off: b.Offset, n: len(b.JSON), verbatim: b.Verbatim}
	cc.mu.Lock()
	cc.bundles[bundleKey{b.Package, b.Name}] = loc
	cc.mu.Unlock()
}

// ContentDiff is what changed in the contents of the bundles two catalogs
// both hold, by package.
type ContentDiff struct {
	changes map[string][]Change // by package, sorted by bundle
}

// ObjectsChanged reports whether bundle name of package pkg, in both
// catalogs, carries other objects (olm.bundle.object) in the new one: a
// bundle changed in place, under the same name (and image reference, when
// a tag is reused).
func (cd *ContentDiff) ObjectsChanged(pkg, name string) bool {
	if cd == nil {
		return false
	}
	for _, c := range cd.changes[pkg] {
		if c.Bundle == name && (c.Kind == ObjectAdded || c.Kind == ObjectRemoved || c.Kind == ObjectChanged) {
			return true
		}
	}
	return false
}

// CompareContents reads back, from both catalogs, the bundles both hold
// whose blobs differ, and lists what changed in what they carry
// (contentChanges). Either nil gives an empty diff.
func CompareContents(ctx context.Context, old, new *Contents) (*ContentDiff, error) {
	cd := &ContentDiff{changes: map[string][]Change{}}
	if old == nil || new == nil {
		return cd, nil
	}
	var keys []bundleKey
	for k, ol := range old.bundles {
		if nl, ok := new.bundles[k]; ok && nl.sum != ol.sum {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return cd, nil
	}
	slices.SortFunc(keys, func(a, b bundleKey) int { return cmp.Or(cmp.Compare(a.pkg, b.pkg), cmp.Compare(a.name, b.name)) })
	var read [2]map[bundleKey]*bundleContents
	g, gctx := errgroup.WithContext(ctx)
	for i, c := range []*Contents{old, new} {
		g.Go(func() (err error) {
			read[i], err = c.read(gctx, keys)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for _, k := range keys {
		cd.changes[k.pkg] = append(cd.changes[k.pkg], contentChanges(read[0][k], read[1][k], k.pkg, k.name)...)
	}
	return cd, nil
}

// read reads the contents of the bundles keys back from the catalog: a
// blob that is the file's bytes at its position, the others by parsing
// their files again.
func (c *Contents) read(ctx context.Context, keys []bundleKey) (map[bundleKey]*bundleContents, error) {
	byPath := map[string][]bundleKey{}
	for _, k := range keys {
		loc := c.bundles[k]
		byPath[loc.path] = append(byPath[loc.path], k)
	}
	out := make(map[bundleKey]*bundleContents, len(keys))
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, path := range slices.Sorted(maps.Keys(byPath)) {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			got, err := c.readFile(path, byPath[path])
			if err != nil {
				if c.name != "" {
					return fmt.Errorf("%s: %s: reading the bundles back: %w", c.name, path, err)
				}
				return fmt.Errorf("%s: reading the bundles back: %w", path, err)
			}
			mu.Lock()
			maps.Copy(out, got)
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// readFile reads the bundles keys of one file.
func (c *Contents) readFile(path string, keys []bundleKey) (map[bundleKey]*bundleContents, error) {
	data, err := fs.ReadFile(c.fsys, path)
	if err != nil {
		return nil, err
	}
	out := map[bundleKey]*bundleContents{}
	want := map[bundleKey]bool{}
	for _, k := range keys {
		loc := c.bundles[k]
		if !loc.verbatim || loc.off+loc.n > len(data) {
			want[k] = true
			continue
		}
		if bc := bundleContentsOf(data[loc.off:loc.off+loc.n], k); bc != nil {
			out[k] = bc
		} else {
			want[k] = true
		}
	}
	if len(want) == 0 {
		return out, nil
	}
	_, _, err = declcfg.ParseFile(path, data, c.bundles[keys[0]].file, func(b *declcfg.Blob) error {
		k := bundleKey{b.Package, b.Name}
		if b.Schema == declcfg.SchemaBundle && want[k] {
			if bc := bundleContentsOf(b.JSON, k); bc != nil {
				out[k] = bc
				delete(want, k)
			}
		}
		return nil
	}, declcfg.WithMaxFileSize(-1))
	if err != nil {
		return nil, err
	}
	if len(want) > 0 {
		return nil, errors.New("the file changed while it was read")
	}
	return out, nil
}

// bundleContents is what one bundle carries, each list sorted.
type bundleContents struct {
	props   []propContent
	objects []objContent
	related []string
}

type propContent struct {
	typ    string
	digest [sha256.Size]byte
	value  string // the canonical JSON, when at most MaxShownValue bytes
}

type objContent struct {
	id     string // "Kind name" or "Kind namespace/name"
	digest [sha256.Size]byte
}

// bundleContentsOf reads what the olm.bundle blob js carries, or nil when
// it is not the blob of the bundle k.
func bundleContentsOf(js []byte, k bundleKey) *bundleContents {
	bd, err := declcfg.DecodeBundle(js)
	if err != nil || bd.Package != k.pkg || bd.Name != k.name {
		return nil
	}
	bc := &bundleContents{}
	var (
		buf []byte
		c   canonjson.Canonicalizer
	)
	for i, p := range bd.Properties {
		switch p.Type {
		case property.TypeDeprecated:
			// The model has it: Diff says olm-deprecated-added/removed.
		case property.TypeBundleObject:
			buf, _ = property.BundleObjectData(buf[:0], p.Value)
			bc.objects = append(bc.objects, objectContent(buf, p.Value, i, &c))
		default:
			pc := propContent{typ: p.Type, digest: sha256.Sum256(p.Value)}
			if len(p.Value) <= MaxShownValue {
				pc.value = string(p.Value)
			}
			bc.props = append(bc.props, pc)
		}
	}
	for _, r := range bd.RelatedImages {
		s := r.Image
		if r.Name != "" {
			s = r.Name + "=" + r.Image
		}
		bc.related = append(bc.related, s)
	}
	slices.SortFunc(bc.props, func(a, b propContent) int {
		return cmp.Or(cmp.Compare(a.typ, b.typ), cmp.Compare(a.value, b.value), compareDigest(a.digest, b.digest))
	})
	slices.SortFunc(bc.objects, func(a, b objContent) int {
		return cmp.Or(cmp.Compare(a.id, b.id), compareDigest(a.digest, b.digest))
	})
	slices.Sort(bc.related)
	bc.related = slices.Compact(bc.related)
	return bc
}

func compareDigest(a, b [sha256.Size]byte) int { return strings.Compare(string(a[:]), string(b[:])) }

// objectContent names a bundle object by its kind and name and digests
// its manifest in canonical JSON, so that the same object written another
// way (YAML or JSON, keys in another order) is the same. An object that
// cannot be read is named by its position and digested as it is.
func objectContent(manifest, value []byte, i int, c *canonjson.Canonicalizer) objContent {
	unreadable := objContent{id: fmt.Sprintf("object %d (unreadable)", i), digest: sha256.Sum256(value)}
	js, err := property.ManifestJSON(manifest)
	if err != nil {
		return unreadable
	}
	canon, _, _, err := c.Value(js, 0)
	if err != nil || len(canon) == 0 || canon[0] != '{' {
		return unreadable
	}
	var kind, name, namespace string
	canonjson.ForEachMember(canon, func(k, v []byte) bool {
		switch string(k) {
		case "kind":
			kind, _ = canonjson.String(v)
		case "metadata":
			canonjson.ForEachMember(v, func(k, v []byte) bool {
				switch string(k) {
				case "name":
					name, _ = canonjson.String(v)
				case "namespace":
					namespace, _ = canonjson.String(v)
				}
				return true
			})
		}
		return true
	})
	if namespace != "" {
		name = namespace + "/" + name
	}
	if kind == "" {
		kind = "object"
	}
	if name == "" {
		name = fmt.Sprintf("(no name, property %d)", i)
	}
	return objContent{id: kind + " " + name, digest: sha256.Sum256(canon)}
}

// The kinds of content changes (Change.Kind).
const (
	PropertyAdded       = "property-added"
	PropertyRemoved     = "property-removed"
	PropertyChanged     = "property-changed"
	ObjectAdded         = "object-added"
	ObjectRemoved       = "object-removed"
	ObjectChanged       = "object-changed"
	RelatedImageAdded   = "related-image-added"
	RelatedImageRemoved = "related-image-removed"
)

// contentChanges lists what changed in the contents of the bundle pkg/name
// from ob to nb: each property value added or removed (a property type
// with one value on each side whose value differs is "changed"), each
// object added, removed or changed (by kind and name), each related image
// added or removed.
func contentChanges(ob, nb *bundleContents, pkg, name string) []Change {
	if ob == nil || nb == nil {
		return nil
	}
	if slices.Equal(ob.props, nb.props) && slices.Equal(ob.objects, nb.objects) && slices.Equal(ob.related, nb.related) {
		return nil
	}
	at := Change{Package: pkg, Bundle: name}
	var out []Change
	out = append(out, propChanges(at, ob.props, nb.props)...)
	out = append(out, objectChanges(at, ob.objects, nb.objects)...)
	for _, img := range minus(ob.related, nb.related) {
		c := at
		c.Kind, c.Old = RelatedImageRemoved, img
		out = append(out, c)
	}
	for _, img := range minus(nb.related, ob.related) {
		c := at
		c.Kind, c.New = RelatedImageAdded, img
		out = append(out, c)
	}
	return out
}

// propChanges compares two sorted property lists, type by type.
func propChanges(at Change, old, new []propContent) []Change {
	var out []Change
	types := map[string]bool{}
	for _, p := range old {
		types[p.typ] = true
	}
	for _, p := range new {
		types[p.typ] = true
	}
	of := func(ps []propContent, typ string) []propContent {
		return slices.DeleteFunc(slices.Clone(ps), func(p propContent) bool { return p.typ != typ })
	}
	for _, typ := range sortedKeys(types) {
		o, n := of(old, typ), of(new, typ)
		same := func(a, b propContent) bool { return a.digest == b.digest }
		removed := minusFunc(o, n, same)
		added := minusFunc(n, o, same)
		c := at
		c.Property = typ
		if len(removed) == 1 && len(added) == 1 && len(o) == 1 && len(n) == 1 {
			c.Kind, c.Old, c.New = PropertyChanged, removed[0].value, added[0].value
			out = append(out, c)
			continue
		}
		for _, p := range removed {
			c.Kind, c.Old, c.New = PropertyRemoved, p.value, ""
			out = append(out, c)
		}
		for _, p := range added {
			c.Kind, c.Old, c.New = PropertyAdded, "", p.value
			out = append(out, c)
		}
	}
	return out
}

// objectChanges compares two sorted object lists by kind and name.
func objectChanges(at Change, old, new []objContent) []Change {
	var out []Change
	ids := map[string]bool{}
	for _, o := range old {
		ids[o.id] = true
	}
	for _, o := range new {
		ids[o.id] = true
	}
	of := func(os []objContent, id string) [][sha256.Size]byte {
		var ds [][sha256.Size]byte
		for _, o := range os {
			if o.id == id {
				ds = append(ds, o.digest)
			}
		}
		return ds
	}
	for _, id := range sortedKeys(ids) {
		o, n := of(old, id), of(new, id)
		c := at
		c.Object = id
		switch {
		case len(o) == 0:
			c.Kind = ObjectAdded
		case len(n) == 0:
			c.Kind = ObjectRemoved
		case !slices.Equal(o, n):
			c.Kind = ObjectChanged
		default:
			continue
		}
		out = append(out, c)
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// minus returns the elements of the sorted list a that b lacks.
func minus(a, b []string) []string {
	return minusFunc(a, b, func(x, y string) bool { return x == y })
}

// minusFunc returns the elements of a that b lacks, as a multiset.
func minusFunc[T any](a, b []T, eq func(x, y T) bool) []T {
	used := make([]bool, len(b))
	var out []T
	for _, x := range a {
		found := false
		for j, y := range b {
			if !used[j] && eq(x, y) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			out = append(out, x)
		}
	}
	return out
}
