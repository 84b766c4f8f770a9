package crdsafety

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
)

// Bundle is what a catalog tells of one bundle's CRDs.
type Bundle struct {
	// Objects is true when the catalog carries the bundle's manifests
	// (olm.bundle.object properties, as opm render writes them for bundles
	// it renders from images or directories): then CRDs are all of its
	// CRDs. A bundle described by olm.csv.metadata alone does not tell its
	// CRDs.
	Objects bool
	CRDs    []CRD
}

// ReadBundle reads a bundle's CRDs from its properties, and which of them
// its ClusterServiceVersion converts through a webhook
// (CRD.ConversionWebhook; of several CSVs, the last one, as OLM v1 reads a
// bundle). A manifest that cannot be read is an error naming the
// property.
func ReadBundle(props []property.Property) (Bundle, error) {
	var b Bundle
	var buf []byte
	var converted []string
	for i, p := range props {
		if p.Type != property.TypeBundleObject {
			continue
		}
		b.Objects = true
		var err error
		buf, err = property.BundleObjectData(buf[:0], p.Value)
		if err != nil {
			return b, fmt.Errorf("properties[%d] (%s): %w", i, p.Type, err)
		}
		crd, ok, err := ParseManifest(buf)
		if err != nil {
			return b, fmt.Errorf("properties[%d] (%s): %w", i, p.Type, err)
		}
		if ok {
			crd.JSON = bytes.Clone(crd.JSON) // it may alias buf
			b.CRDs = append(b.CRDs, crd)
			continue
		}
		names, isCSV, err := conversionCRDs(buf)
		if err != nil {
			return b, fmt.Errorf("properties[%d] (%s): %w", i, p.Type, err)
		}
		if isCSV {
			converted = names
		}
	}
	for i := range b.CRDs {
		b.CRDs[i].ConversionWebhook = slices.Contains(converted, b.CRDs[i].Name)
	}
	return b, nil
}

// Index holds the CRDs of a catalog's bundles, each distinct manifest once.
// It is safe for concurrent use.
type Index struct {
	mu      sync.Mutex
	bundles map[bundleKey]Bundle
	jsons   map[Digest][]byte
}

type bundleKey struct{ pkg, name string }

// NewIndex returns an empty Index.
func NewIndex() *Index {
	return &Index{bundles: map[bundleKey]Bundle{}, jsons: map[Digest][]byte{}}
}

// Add records bundle name of package pkg.
func (ix *Index) Add(pkg, name string, b Bundle) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for i := range b.CRDs {
		if js, ok := ix.jsons[b.CRDs[i].Digest]; ok {
			b.CRDs[i].JSON = js
		} else {
			ix.jsons[b.CRDs[i].Digest] = b.CRDs[i].JSON
		}
	}
	ix.bundles[bundleKey{pkg, name}] = b
}

// Bundle returns what the index holds of a bundle; ok is false when the
// catalog has no olm.bundle blob of that name.
func (ix *Index) Bundle(pkg, name string) (Bundle, bool) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	b, ok := ix.bundles[bundleKey{pkg, name}]
	return b, ok
}

// Len is the number of bundles in the index.
func (ix *Index) Len() int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return len(ix.bundles)
}

// Manifests is the number of distinct CRD manifests in the index.
func (ix *Index) Manifests() int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return len(ix.jsons)
}

// LoadIndex reads the CRDs of the bundles of the catalog in fsys for which
// keep (nil: all of them) reports true, given their package and name. Only
// olm.bundle blobs that carry objects are decoded.
func LoadIndex(ctx context.Context, fsys fs.FS, keep func(pkg, name string) bool, opts ...declcfg.WalkOption) (*Index, error) {
	ix := NewIndex()
	marker := []byte(property.TypeBundleObject)
	err := declcfg.Walk(ctx, fsys, func(blob *declcfg.Blob) error {
		if blob.Schema != declcfg.SchemaBundle || keep != nil && !keep(blob.Package, blob.Name) {
			return nil
		}
		if !bytes.Contains(blob.JSON, marker) {
			ix.Add(blob.Package, blob.Name, Bundle{})
			return nil
		}
		b, err := declcfg.DecodeBundle(blob.JSON)
		if err != nil {
			return fmt.Errorf("%s: %w", blob.Pos(), err)
		}
		crds, err := ReadBundle(b.Properties)
		if err != nil {
			return fmt.Errorf("%s: bundle %q: %w", blob.Pos(), b.Name, err)
		}
		ix.Add(b.Package, b.Name, crds)
		return nil
	}, opts...)
	if err != nil {
		return nil, err
	}
	return ix, nil
}

// Compare compares the CRDs of two bundles of package pkg, from the one a
// cluster runs to the one it updates to. The only error is ctx's, when it
// is done before the comparison is.
func (ix *Index) Compare(ctx context.Context, c *Checker, pkg, from, to string) (Result, error) {
	return CompareAcross(ctx, c, pkg, ix, from, ix, to)
}

// CompareAcross is Index.Compare with the bundle a cluster runs taken
// from fromIx and the one it updates to from toIx: two catalogs, when a
// bundle changed in place between them and clusters run its old
// contents.
func CompareAcross(ctx context.Context, c *Checker, pkg string, fromIx *Index, from string, toIx *Index, to string) (Result, error) {
	ob, okOld := fromIx.Bundle(pkg, from)
	nb, okNew := toIx.Bundle(pkg, to)
	var missing []string
	for _, b := range []struct {
		name string
		ok   bool
		b    Bundle
	}{{from, okOld, ob}, {to, okNew, nb}} {
		switch {
		case b.name == "":
			missing = append(missing, "the installed bundle is not in the catalog")
		case !b.ok:
			missing = append(missing, fmt.Sprintf("the catalog has no bundle %s", b.name))
		case !b.b.Objects:
			missing = append(missing, fmt.Sprintf("bundle %s carries no objects (olm.bundle.object) in the catalog", b.name))
		}
	}
	if len(missing) > 0 {
		return Result{Unknown: strings.Join(slices.Compact(missing), "; ")}, nil
	}
	changes, err := c.Compare(ctx, ob.CRDs, nb.CRDs)
	if err != nil {
		return Result{}, err
	}
	return Result{Changes: changes}, nil
}
