package registry

import (
	"bytes"
	"slices"

	"github.com/fastopm/fastopm/alpha/declcfg"
)

// ServedBundle returns the invariant part of the answer the registry
// server gives for one bundle (GetBundle's csvJson, objects and
// properties, as upstream's api.ConvertModelBundleToAPIBundle builds
// them), for clients that need what OLM receives without serving the
// catalog (alpha/cluster's InstallPlan steps). pkg is the bundle's package
// blob: a bundle whose CSV is synthesized from olm.csv.metadata takes the
// package's icon and description; nil stands for a package without them.
// The answer is a copy, the caller's to keep.
func ServedBundle(bd *declcfg.Bundle, pkg *declcfg.Package) (*BundleAnswer, error) {
	if pkg == nil {
		pkg = &declcfg.Package{}
	}
	info, err := newPkgInfo(pkg, nil)
	if err != nil {
		return nil, err
	}
	w := workPool.Get().(*bundleWork)
	defer workPool.Put(w)
	if err := w.fill(bd, info); err != nil {
		return nil, err
	}
	a := w.ans
	out := &BundleAnswer{
		CsvName:      a.CsvName,
		PackageName:  a.PackageName,
		CsvJSON:      bytes.Clone(a.CsvJSON),
		BundlePath:   a.BundlePath,
		ProvidedAPIs: slices.Clone(a.ProvidedAPIs),
		RequiredAPIs: slices.Clone(a.RequiredAPIs),
		Version:      a.Version,
		Dependencies: cloneProperties(a.Dependencies),
		Properties:   cloneProperties(a.Properties),
	}
	for _, o := range a.Objects {
		out.Objects = append(out.Objects, bytes.Clone(o))
	}
	return out, nil
}

func cloneProperties(ps []Property) []Property {
	if ps == nil {
		return nil
	}
	out := make([]Property, len(ps))
	for i, p := range ps {
		out[i] = Property{Type: p.Type, Value: bytes.Clone(p.Value)}
	}
	return out
}
