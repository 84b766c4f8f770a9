package registry

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/blang/semver/v4"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
	"github.com/fastopm/fastopm/pkg/canonjson"
	"github.com/fastopm/fastopm/pkg/csv"
)

// pkgInfo is what a synthesized CSV takes from its package: in memory,
// or in the Sink's stash.
type pkgInfo struct {
	description string
	icon        *declcfg.Icon

	stash   Stash // when set, description and icon are in stashed
	stashed BodyRef
}

// ErrStorage marks a failure of the Sink's storage, not of the catalog.
var ErrStorage = errors.New("cache storage")

// newPkgInfo keeps p's description and icon, in stash when there is one.
func newPkgInfo(p *declcfg.Package, stash Stash) (*pkgInfo, error) {
	if stash == nil || (p.Description == "" && p.Icon == nil) {
		return &pkgInfo{description: p.Description, icon: p.Icon}, nil
	}
	// description length, description, then the icon's media type and
	// data when it has one.
	b := binary.AppendUvarint(nil, uint64(len(p.Description)))
	b = append(b, p.Description...)
	if p.Icon != nil {
		b = binary.AppendUvarint(b, uint64(len(p.Icon.MediaType)))
		b = append(b, p.Icon.MediaType...)
		b = append(b, p.Icon.Data...)
	}
	ref, err := stash.Stash(b)
	if err != nil {
		return nil, err
	}
	return &pkgInfo{stash: stash, stashed: ref}, nil
}

// details returns the package's description and icon.
func (pi *pkgInfo) details() (string, *declcfg.Icon, error) {
	if pi.stash == nil {
		return pi.description, pi.icon, nil
	}
	b, err := pi.stash.ReadStash(pi.stashed)
	if err != nil {
		return "", nil, fmt.Errorf("%w: read the package's icon and description: %w", ErrStorage, err)
	}
	errBad := fmt.Errorf("%w: read the package's icon and description: bad record", ErrStorage)
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return "", nil, errBad
	}
	desc, b := string(b[k:k+int(n)]), b[k+int(n):]
	if len(b) == 0 {
		return desc, nil, nil
	}
	n, k = binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return "", nil, errBad
	}
	icon := &declcfg.Icon{MediaType: string(b[k : k+int(n)]), Data: b[k+int(n):]}
	return desc, icon, nil
}

// bundleWork is the scratch space of one bundle's answer, reused through a
// pool so that the objects of one bundle at a time are in memory per
// worker.
type bundleWork struct {
	ans      BundleAnswer
	objVals  [][]byte
	csvMetas [][]byte
	arena    []byte
	canon    canonjson.Canonicalizer
}

var workPool = sync.Pool{New: func() any { return new(bundleWork) }}

func (w *bundleWork) reset() {
	a := &w.ans
	*a = BundleAnswer{
		Objects:      a.Objects[:0],
		ProvidedAPIs: a.ProvidedAPIs[:0],
		RequiredAPIs: a.RequiredAPIs[:0],
		Dependencies: a.Dependencies[:0],
		Properties:   a.Properties[:0],
	}
	w.objVals = w.objVals[:0]
	w.csvMetas = w.csvMetas[:0]
}

// errNeedPackage means the bundle's answer needs its package's icon and
// description (its CSV is synthesized from olm.csv.metadata) and the
// package blob has not been seen yet.
var errNeedPackage = errors.New("package not loaded yet")

// fill computes the bundle's invariant answer into w.ans, as upstream's
// api.ConvertModelBundleToAPIBundle does. pkg may be nil when the
// package's blob is not known yet; fill then returns errNeedPackage if it
// needs it. Property values that do not parse are left out: the model
// reports them and the catalog is refused.
func (w *bundleWork) fill(bd *declcfg.Bundle, pkg *pkgInfo) error {
	w.reset()
	a := &w.ans
	a.CsvName, a.PackageName, a.BundlePath = bd.Name, bd.Package, bd.Image
	versionSet := false
	for _, p := range bd.Properties {
		switch p.Type {
		case property.TypeBundleObject:
			w.objVals = append(w.objVals, p.Value)
			continue
		case property.TypeCSVMetadata:
			w.csvMetas = append(w.csvMetas, p.Value)
			continue
		case property.TypePackage:
			var v property.Package
			if !versionSet && json.Unmarshal(p.Value, &v) == nil {
				a.Version, versionSet = v.Version, true
			}
		case property.TypeGVK:
			var v property.GVK
			if json.Unmarshal(p.Value, &v) == nil {
				a.ProvidedAPIs = append(a.ProvidedAPIs, GVK{v.Group, v.Version, v.Kind})
			}
		case property.TypeGVKRequired:
			var v property.GVKRequired
			if json.Unmarshal(p.Value, &v) == nil {
				a.RequiredAPIs = append(a.RequiredAPIs, GVK{v.Group, v.Version, v.Kind})
			}
			a.Dependencies = append(a.Dependencies, Property{Type: property.TypeGVK, Value: p.Value})
		case property.TypePackageRequired:
			var v property.PackageRequired
			if err := json.Unmarshal(p.Value, &v); err == nil {
				val, err := packageValue(v.PackageName, v.VersionRange)
				if err != nil {
					return err
				}
				a.Dependencies = append(a.Dependencies, Property{Type: property.TypePackage, Value: val})
			}
		}
		a.Properties = append(a.Properties, Property{Type: p.Type, Value: p.Value})
	}
	if err := w.objects(); err != nil {
		return fmt.Errorf("bundle %q: %w", bd.Name, err)
	}
	if len(w.csvMetas) > 1 {
		return fmt.Errorf("bundle %q: expected at most 1 property of type %q, found %d", bd.Name, property.TypeCSVMetadata, len(w.csvMetas))
	}
	var meta property.CSVMetadata
	if len(w.csvMetas) == 1 {
		if err := json.Unmarshal(w.csvMetas[0], &meta); err != nil {
			return fmt.Errorf("bundle %q: parse %s property: %w", bd.Name, property.TypeCSVMetadata, err)
		}
	}
	if a.CsvJSON != nil || len(w.csvMetas) != 1 {
		return nil
	}
	if pkg == nil {
		return errNeedPackage
	}
	cj, err := syntheticCSV(bd, a.Version, &meta, pkg)
	if err != nil {
		return fmt.Errorf("bundle %q: synthesize CSV from %s: %w", bd.Name, property.TypeCSVMetadata, err)
	}
	a.CsvJSON = cj
	if len(a.Objects) == 0 {
		a.Objects = append(a.Objects, cj)
	}
	return nil
}

// objects decodes the olm.bundle.object values in order, keeps each as
// JSON and takes the first ClusterServiceVersion as csvJson
// (alpha/property's reader, as the model checks them). As in opm v1.73, an
// object is inline data only ({"data": <base64>}, other keys ignored).
func (w *bundleWork) objects() error {
	a := &w.ans
	arena := w.arena[:0]
	for i, v := range w.objVals {
		start := len(arena)
		var err error
		if arena, err = property.BundleObjectData(arena, v); err != nil {
			return fmt.Errorf("bundle object %d: %w", i, err)
		}
		// The arena may have moved: earlier objects keep the old one,
		// which stays alive through them.
		data := arena[start:len(arena):len(arena)]
		js, err := property.ManifestJSON(data)
		if err != nil {
			return fmt.Errorf("bundle object %d: %w", i, err)
		}
		a.Objects = append(a.Objects, js)
		if a.CsvJSON == nil && property.IsCSV(js, &w.canon) {
			a.CsvJSON = js
		}
	}
	w.arena = arena
	return nil
}

// packageValue encodes an olm.package value the way upstream's
// property.MustBuildPackage does: compact JSON, HTML characters as they
// are.
func packageValue(name, version string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(property.Package{PackageName: name, Version: version}); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// syntheticCSV builds the ClusterServiceVersion upstream serves for a
// bundle that has olm.csv.metadata instead of a CSV object: the metadata
// as spec, the bundle's name, version and related images, the package's
// icon, the package's description when the metadata has none, and a stub
// "deployment" install strategy (OLM's package server needs one).
func syntheticCSV(bd *declcfg.Bundle, version string, m *property.CSVMetadata, pkg *pkgInfo) ([]byte, error) {
	ver, err := semver.Parse(version)
	if err != nil {
		return nil, fmt.Errorf("version %q: %w", version, err)
	}
	c := csv.ClusterServiceVersion{
		TypeMeta: csv.TypeMeta{Kind: csv.Kind, APIVersion: csv.APIVersion},
		ObjectMeta: csv.ObjectMeta{
			Name:        bd.Name,
			Annotations: m.Annotations,
			Labels:      m.Labels,
		},
		Spec: csv.Spec{
			APIServiceDefinitions:     m.APIServiceDefinitions,
			CustomResourceDefinitions: m.CustomResourceDefinitions,
			Description:               m.Description,
			DisplayName:               m.DisplayName,
			InstallModes:              m.InstallModes,
			Keywords:                  m.Keywords,
			Links:                     m.Links,
			Maintainers:               m.Maintainers,
			Maturity:                  m.Maturity,
			MinKubeVersion:            m.MinKubeVersion,
			NativeAPIs:                m.NativeAPIs,
			Provider:                  m.Provider,
			InstallStrategy:           csv.NamedInstallStrategy{StrategyName: csv.InstallStrategyNameDeployment},
			Version:                   csv.OperatorVersion{Version: ver},
		},
	}
	description, icon, err := pkg.details()
	if err != nil {
		return nil, err
	}
	if icon != nil {
		c.Spec.Icon = []csv.Icon{{Data: base64.StdEncoding.EncodeToString(icon.Data), MediaType: icon.MediaType}}
	}
	for _, ri := range bd.RelatedImages {
		c.Spec.RelatedImages = append(c.Spec.RelatedImages, csv.RelatedImage{Name: ri.Name, Image: ri.Image})
	}
	if c.Spec.Description == "" {
		c.Spec.Description = description
	}
	return json.Marshal(c)
}
