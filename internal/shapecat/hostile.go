package shapecat

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
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
	{Name: "crd-versions", N: 200, Doc: "two bundles whose CRD serves N versions, each with a schema of about 300 properties whose descriptions name the version; the second bundle adds an optional field to each", write: crdVersions},
	{Name: "crd-steps", N: 500, Doc: "21 bundles in a replaces chain whose CRD's schema nests objects N deep, each step adding an optional field at the bottom, the last one also a maxLength on the leaf (for `diff --check` against an empty catalog: 20 new updates, one refused)", write: crdSteps},
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

// crdChain writes Package with n bundles in a replaces chain, bundle i
// carrying crd(i), with a CSV that owns it.
func crdChain(w *writer, n int, crd func(i int) obj) {
	w.blob(pkgBlob("stable"))
	w.blob(channelBlob("stable", chainEntries(n)))
	for i := range n {
		b := bundleBlob(i)
		c, _ := json.Marshal(crd(i))
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

// deepCRD is a CRD whose v1 schema nests objects n deep; at the bottom,
// a string leaf and the optional strings added0..added<extra-1>, the
// leaf with a maxLength when tight.
func deepCRD(n, extra int, tight bool) obj {
	leaf := obj{"type": "string"}
	if tight {
		leaf["maxLength"] = 63
	}
	props := obj{"leaf": leaf}
	for i := range extra {
		props[fmt.Sprintf("added%d", i)] = obj{"type": "string"}
	}
	s := obj{"type": "object", "properties": props}
	for range n {
		s = obj{"type": "object", "properties": obj{"nested": s}}
	}
	return crdObject([]obj{crdVersion("v1", true, obj{"type": "object", "properties": obj{"spec": s}})})
}

// crdDeep: the v1 schema is n objects deep; the second bundle adds an
// optional string at the bottom.
func crdDeep(w *writer, n int) {
	crdChain(w, 2, func(i int) obj { return deepCRD(n, i, false) })
}

// crdSteps: 21 bundles, each adding an optional string at the bottom of a
// schema n objects deep; the last also gives the leaf a maxLength, which
// OLM v1 refuses (and OLM v0 if an existing resource breaks it).
func crdSteps(w *writer, n int) {
	const steps = 20
	crdChain(w, steps+1, func(i int) obj { return deepCRD(n, i, i == steps) })
}

// crdVersions: n served versions v1..vn, v1 stored, each with a schema as
// large as real operators' (about 300 properties: a spec and a status of
// objects, lists, maps, enums and bounds) whose descriptions name the
// version; the second bundle adds an optional field to each version.
// Versions that differ this way are compatible: no pair of them has an
// issue, but every pair differs, everywhere.
func crdVersions(w *writer, n int) {
	crdChain(w, 2, func(b int) obj {
		vs := make([]obj, n)
		for i := range n {
			vs[i] = crdVersion(fmt.Sprintf("v%d", i+1), i == 0, versionSchema(i+1, b == 1))
		}
		return crdObject(vs)
	})
}

// versionSchema is the schema of version v of crdVersions.
func versionSchema(v int, added bool) obj {
	doc := func(what string) string {
		return fmt.Sprintf("%s of the thing, as API version v%d has it.", what, v)
	}
	field := func(f int) obj {
		switch f % 5 {
		case 0:
			return obj{"type": "string", "description": doc("A name"), "maxLength": 253, "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"}
		case 1:
			return obj{"type": "integer", "format": "int32", "description": doc("A count"), "minimum": 0, "maximum": 65535}
		case 2:
			return obj{"type": "string", "description": doc("A mode"), "enum": []string{"Auto", "Manual", "Disabled"}}
		case 3:
			return obj{"type": "array", "description": doc("A list"), "items": obj{"type": "object", "required": []string{"name"}, "properties": obj{
				"name":  obj{"type": "string", "description": doc("The entry's name")},
				"value": obj{"type": "string", "description": doc("The entry's value")},
			}}}
		}
		return obj{"type": "object", "description": doc("Labels"), "additionalProperties": obj{"type": "string"}}
	}
	group := func(g, fields int) obj {
		props := obj{}
		for f := range fields {
			props[fmt.Sprintf("field%d", f)] = field(g + f)
		}
		return obj{"type": "object", "description": doc(fmt.Sprintf("Group %d", g)), "properties": props}
	}
	spec := obj{}
	for g := range 12 {
		spec[fmt.Sprintf("group%d", g)] = group(g, 10)
	}
	if added {
		spec["added"] = obj{"type": "string", "description": doc("An optional field")}
	}
	status := obj{}
	for g := range 3 {
		status[fmt.Sprintf("group%d", g)] = group(g, 8)
	}
	return obj{"type": "object", "description": doc("A thing"), "properties": obj{
		"spec":   obj{"type": "object", "description": doc("The spec"), "properties": spec},
		"status": obj{"type": "object", "description": doc("The status"), "properties": status},
	}}
}

// HostileNames lists the hostile shapes' names.
func HostileNames() []string {
	names := make([]string, len(Hostile))
	for i, s := range Hostile {
		names[i] = s.Name
	}
	return names
}
