package shapecat

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// Hostile are catalogs that are valid (upstream `opm validate` accepts
// each) and small, but whose shape makes a question hard: a deeply nested
// olm.constraint, a pigeonhole for OLM's solver, a CEL rule that iterates
// the properties three times over, dependencies N packages deep, CRD
// schemas nested N deep or with N versions. Each answer over them must
// be bounded in time and memory (issue 24, docs/limits.md); the corpus
// run checks each (alpha/action TestHostile) and `make bench-hostile`
// measures them. Unlike Shapes, they hold several packages; the question
// is always about package Package.
var Hostile = []Shape{
	{Name: "constraint-deep", N: 1000, Doc: "one bundle whose olm.constraint nests all, any and not N deep", write: deepConstraint},
	{Name: "pigeonhole", N: 11, Doc: "a bundle requiring N+1 APIs, each provided by N bundles of its own package, the bundles of one position conflicting on a shared API: unsatisfiable, and exponential for OLM's solver", write: pigeonhole},
	{Name: "self-deps", N: 1000, Doc: "one channel of N bundles, each providing and requiring the same API (every bundle a candidate of every other's dependency)", write: selfDeps},
	{Name: "cel-nested", N: 100, Doc: "a bundle whose cel constraint nests properties.all three deep, over 20 bundles of N properties each", write: celNested},
	{Name: "dep-chain", N: 10000, Doc: "package shape depending on package dep-1, which depends on dep-2, ... N packages deep", write: depChain},
	{Name: "crd-deep", N: 1000, Doc: "two bundles whose CRD's schema nests objects N deep, the second adding an optional field at the bottom", write: crdDeep},
	{Name: "crd-versions", N: 200, Doc: "two bundles whose CRD serves N versions, each with a small schema, the second adding an optional field to each", write: crdVersions},
}

// LookupAny returns the shape or hostile shape called name.
func LookupAny(name string) (Shape, bool) {
	if s, ok := Lookup(name); ok {
		return s, true
	}
	for _, s := range Hostile {
		if s.Name == name {
			return s, true
		}
	}
	return Shape{}, false
}

// bundleOf is a bundle of package pkg, version 1.0.i, with the given
// properties besides its olm.package property.
func bundleOf(pkg string, i int, props ...obj) obj {
	version := fmt.Sprintf("1.0.%d", i)
	all := append([]obj{{"type": "olm.package", "value": obj{"packageName": pkg, "version": version}}}, props...)
	return obj{
		"schema":     "olm.bundle",
		"name":       fmt.Sprintf("%s.v%s", pkg, version),
		"package":    pkg,
		"image":      fmt.Sprintf("quay.io/shape/%s-bundle:v%s", pkg, version),
		"properties": all,
	}
}

// chainPackage writes a package of n bundles in one channel, stable, each
// replacing the previous one; props gives each bundle's properties.
func chainPackage(w *writer, pkg string, n int, props func(i int) []obj) {
	w.blob(obj{"schema": "olm.package", "name": pkg, "defaultChannel": "stable"})
	entries := make([]obj, n)
	for i := range n {
		e := obj{"name": fmt.Sprintf("%s.v1.0.%d", pkg, i)}
		if i > 0 {
			e["replaces"] = fmt.Sprintf("%s.v1.0.%d", pkg, i-1)
		}
		entries[i] = e
	}
	w.blob(obj{"schema": "olm.channel", "package": pkg, "name": "stable", "entries": entries})
	for i := range n {
		w.blob(bundleOf(pkg, i, props(i)...))
	}
}

func gvk(group, kind string) obj {
	return obj{"type": "olm.gvk", "value": obj{"group": group, "kind": kind, "version": "v1"}}
}

func gvkRequired(group, kind string) obj {
	return obj{"type": "olm.gvk.required", "value": obj{"group": group, "kind": kind, "version": "v1"}}
}

// deepConstraint: all, any, not and not in turn (two nots keep it
// satisfiable), n levels, around a gvk constraint the catalog satisfies.
// The blob is written compact, as a tool writing such a constraint would:
// 1000 levels take about 30 KB.
func deepConstraint(w *writer, n int) {
	inner := any(obj{"gvk": obj{"group": "shape.example.com", "kind": "Thing", "version": "v1"}})
	ops := []string{"all", "any", "not", "not"}
	for i := range n {
		inner = obj{ops[i%len(ops)]: obj{"constraints": []any{inner}}}
	}
	w.blob(obj{"schema": "olm.package", "name": Package, "defaultChannel": "stable"})
	w.blob(channelBlob("stable", []obj{{"name": bundleName(0)}}))
	if w.err != nil {
		return
	}
	b, _ := json.Marshal(bundleOf(Package, 0, gvk("shape.example.com", "Thing"), obj{"type": "olm.constraint", "value": inner}))
	_, w.err = fmt.Fprintf(w.bw, "%s\n", b)
}

// pigeonhole: Package's bundle requires the APIs P0..Pn; package pig-i
// has n bundles, its bundle h providing Pi and Hh; at most one bundle
// provides each Hh, so n+1 requirements fit into n positions.
func pigeonhole(w *writer, n int) {
	var req []obj
	for i := 0; i <= n; i++ {
		req = append(req, gvkRequired("pigeon.example.com", fmt.Sprintf("P%d", i)))
	}
	w.blob(obj{"schema": "olm.package", "name": Package, "defaultChannel": "stable"})
	w.blob(channelBlob("stable", []obj{{"name": bundleName(0)}}))
	w.blob(bundleOf(Package, 0, req...))
	for i := 0; i <= n; i++ {
		chainPackage(w, fmt.Sprintf("pig-%d", i), n, func(h int) []obj {
			return []obj{gvk("pigeon.example.com", fmt.Sprintf("P%d", i)), gvk("hole.example.com", fmt.Sprintf("H%d", h))}
		})
	}
}

func selfDeps(w *writer, n int) {
	chainPackage(w, Package, n, func(int) []obj {
		return []obj{gvk("shape.example.com", "Thing"), gvkRequired("shape.example.com", "Thing")}
	})
}

// celNested: Package's bundle needs a bundle whose properties pass a rule
// that is true of every bundle, evaluated over n properties cubed; 20
// packages of one bundle, each with n properties, are its candidates.
func celNested(w *writer, n int) {
	rule := "properties.all(a, properties.all(b, properties.all(c, a.type != '' || b.type != '' || c.type != '')))"
	w.blob(obj{"schema": "olm.package", "name": Package, "defaultChannel": "stable"})
	w.blob(channelBlob("stable", []obj{{"name": bundleName(0)}}))
	w.blob(bundleOf(Package, 0, obj{"type": "olm.constraint", "value": obj{"failureMessage": "needs a labelled bundle", "cel": obj{"rule": rule}}}))
	for p := range 20 {
		chainPackage(w, fmt.Sprintf("cel-%d", p), 1, func(int) []obj {
			props := make([]obj, n)
			for i := range props {
				props[i] = obj{"type": "shape.example.com/label", "value": obj{"n": i}}
			}
			return props
		})
	}
}

func depChain(w *writer, n int) {
	pkgName := func(i int) string {
		if i == 0 {
			return Package
		}
		return fmt.Sprintf("dep-%d", i)
	}
	for i := 0; i <= n; i++ {
		chainPackage(w, pkgName(i), 1, func(int) []obj {
			if i == n {
				return nil
			}
			return []obj{{"type": "olm.package.required", "value": obj{"packageName": pkgName(i + 1), "versionRange": ">=1.0.0"}}}
		})
	}
}

// crdBundles writes Package with two bundles in a replaces chain, the
// first carrying crd(false), the second crd(true), each with a CSV that
// owns it.
func crdBundles(w *writer, crd func(second bool) obj) {
	w.blob(pkgBlob("stable"))
	w.blob(channelBlob("stable", chainEntries(2)))
	for i := range 2 {
		b := bundleBlob(i)
		c, _ := json.Marshal(crd(i == 1))
		props := b["properties"].([]obj)
		b["properties"] = append(props, obj{"type": "olm.bundle.object", "value": obj{"data": base64.StdEncoding.EncodeToString(c)}})
		w.blob(b)
	}
}

func crdObject(versions []obj) obj {
	return obj{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   obj{"name": "things.shape.example.com"},
		"spec": obj{
			"group":    "shape.example.com",
			"names":    obj{"kind": "Thing", "listKind": "ThingList", "plural": "things", "singular": "thing"},
			"scope":    "Namespaced",
			"versions": versions,
		},
	}
}

func crdVersion(name string, storage bool, schema obj) obj {
	return obj{"name": name, "served": true, "storage": storage, "schema": obj{"openAPIV3Schema": schema}}
}

// crdDeep: the v1 schema is n objects deep; the second bundle adds an
// optional string at the bottom.
func crdDeep(w *writer, n int) {
	crdBundles(w, func(second bool) obj {
		bottom := obj{"type": "object", "properties": obj{"leaf": obj{"type": "string"}}}
		if second {
			bottom["properties"].(obj)["added"] = obj{"type": "string"}
		}
		s := bottom
		for range n {
			s = obj{"type": "object", "properties": obj{"nested": s}}
		}
		return crdObject([]obj{crdVersion("v1", true, obj{"type": "object", "properties": obj{"spec": s}})})
	})
}

// crdVersions: n served versions v1..vn, v1 stored; the second bundle adds
// an optional field to each.
func crdVersions(w *writer, n int) {
	crdBundles(w, func(second bool) obj {
		vs := make([]obj, n)
		for i := range n {
			props := obj{}
			for f := range 10 {
				props[fmt.Sprintf("field%d", f)] = obj{"type": "string", "description": strings.Repeat("x", 20)}
			}
			if second {
				props["added"] = obj{"type": "integer"}
			}
			vs[i] = crdVersion(fmt.Sprintf("v%d", i+1), i == 0, obj{"type": "object", "properties": obj{"spec": obj{"type": "object", "properties": props}}})
		}
		return crdObject(vs)
	})
}

// HostileNames lists the hostile shapes' names.
func HostileNames() []string {
	names := make([]string, len(Hostile))
	for i, s := range Hostile {
		names[i] = s.Name
	}
	return names
}
