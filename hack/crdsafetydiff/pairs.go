package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
)

// bundleObjs are what a pair's bundle carries that matters here.
type bundleObjs struct {
	objects bool
	crds    [][]byte // canonical-ish JSON manifests
	csv     []byte
}

func kindOf(js []byte) (kind, name, apiVersion string) {
	var m struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(js, &m)
	return m.Kind, m.Metadata.Name, m.APIVersion
}

func readObjects(props []property.Property) bundleObjs {
	var b bundleObjs
	for _, p := range props {
		if p.Type != property.TypeBundleObject {
			continue
		}
		b.objects = true
		data, err := property.BundleObjectData(nil, p.Value)
		if err != nil {
			continue
		}
		js, err := property.ManifestJSON(data)
		if err != nil {
			continue
		}
		switch k, _, _ := kindOf(js); k {
		case "CustomResourceDefinition":
			b.crds = append(b.crds, js)
		case "ClusterServiceVersion":
			b.csv = js
		}
	}
	return b
}

func write(out string, id int, m meta, old, nw bundleObjs) error {
	dir := filepath.Join(out, fmt.Sprintf("%05d", id))
	for _, side := range []struct {
		name string
		b    bundleObjs
	}{{"old", old}, {"new", nw}} {
		d := filepath.Join(dir, side.name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		objs := slices.Clone(side.b.crds)
		if side.b.csv != nil {
			objs = append(objs, side.b.csv)
		}
		for i, o := range objs {
			if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("%02d.json", i)), o, 0o644); err != nil {
				return err
			}
		}
	}
	js, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "meta.json"), js, 0o644)
}

func crdNames(b bundleObjs) map[string][]byte {
	out := map[string][]byte{}
	for _, c := range b.crds {
		_, n, _ := kindOf(c)
		if _, ok := out[n]; !ok {
			out[n] = c
		}
	}
	return out
}

func pairs(args []string) error {
	fs := flag.NewFlagSet("pairs", flag.ContinueOnError)
	nmut := fs.Int("mutations", 0, "mutated pairs to write after the updates' pairs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 1 {
		usage()
	}
	out := fs.Arg(0)
	ctx := context.Background()
	id := 0
	var sources []bundleObjs // new bundles of edges, for mutations
	seenPair := map[[32]byte]bool{}
	for _, cat := range fs.Args()[1:] {
		m, err := action.LoadModel(ctx, action.DirResolver{}, cat, 0)
		if err != nil {
			return fmt.Errorf("%s: %w", cat, err)
		}
		edges := action.UpdateEdges(m)
		want := map[[2]string]bool{}
		for _, e := range edges {
			want[[2]string{e.Package, e.From}] = true
			want[[2]string{e.Package, e.To}] = true
		}
		bundles := map[[2]string]bundleObjs{}
		var mu sync.Mutex
		err = declcfg.Walk(ctx, os.DirFS(cat), func(blob *declcfg.Blob) error {
			if blob.Schema != declcfg.SchemaBundle || !want[[2]string{blob.Package, blob.Name}] {
				return nil
			}
			b, err := declcfg.DecodeBundle(blob.JSON)
			if err != nil {
				return err
			}
			o := readObjects(b.Properties)
			mu.Lock()
			bundles[[2]string{b.Package, b.Name}] = o
			mu.Unlock()
			return nil
		})
		if err != nil {
			return fmt.Errorf("%s: %w", cat, err)
		}
		done := map[[3]string]bool{}
		nKept := 0
		for _, e := range edges {
			k := [3]string{e.Package, e.From, e.To}
			if done[k] {
				continue
			}
			done[k] = true
			ob, nb := bundles[[2]string{e.Package, e.From}], bundles[[2]string{e.Package, e.To}]
			if !ob.objects || !nb.objects || len(ob.crds) == 0 || len(nb.crds) == 0 {
				continue
			}
			common := false
			on := crdNames(ob)
			for n := range crdNames(nb) {
				if on[n] != nil {
					common = true
				}
			}
			if !common {
				continue
			}
			nKept++
			h := sha256.New()
			for _, b := range []bundleObjs{ob, nb} {
				for _, c := range b.crds {
					h.Write(c)
					h.Write([]byte{0})
				}
				h.Write(b.csv)
				h.Write([]byte{1})
			}
			var sum [32]byte
			copy(sum[:], h.Sum(nil))
			note := ""
			if seenPair[sum] {
				note = "duplicate"
			}
			seenPair[sum] = true
			if err := write(out, id, meta{Catalog: filepath.Base(cat), Package: e.Package, Channel: e.Channel, From: e.From, To: e.To, Kind: "edge", Note: note}, ob, nb); err != nil {
				return err
			}
			id++
			sources = append(sources, nb)
		}
		fmt.Fprintf(os.Stderr, "%s: %d updates, %d distinct pairs of bundles with CRDs in common\n", cat, len(edges), nKept)
	}
	// Mutations: a real CRD (a new bundle's), and a mutated copy; the
	// CSV sometimes declaring a conversion webhook for it.
	r := rand.New(rand.NewPCG(27, 27))
	skipped := 0
	for i := 0; i < *nmut && len(sources) > 0; i++ {
		src := sources[r.IntN(len(sources))]
		c := src.crds[r.IntN(len(src.crds))]
		var crd map[string]any
		if err := json.Unmarshal(c, &crd); err != nil {
			return err
		}
		_, name, av := kindOf(c)
		if av != "apiextensions.k8s.io/v1" {
			if skipped++; skipped > 1000*(*nmut+1) {
				return fmt.Errorf("no apiextensions.k8s.io/v1 CRD to mutate")
			}
			i--
			continue
		}
		var nw jmap
		addVersion := r.IntN(3) == 0
		if addVersion {
			nw = addMutatedVersion(r, crd)
		} else {
			nw = mutateCRD(r, crd)
		}
		njs, _ := json.Marshal(nw)
		ojs, _ := json.Marshal(crd)
		old := bundleObjs{objects: true, crds: [][]byte{ojs}}
		nb := bundleObjs{objects: true, crds: [][]byte{njs}}
		notes := []string{}
		if addVersion {
			notes = append(notes, "new-served-version")
		}
		if r.IntN(4) == 0 {
			nb.csv = csvWithWebhook(name, r.IntN(3) == 0)
			notes = append(notes, "csv-conversion-webhook")
		} else {
			nb.csv = csvWithWebhook("", false)
		}
		if r.IntN(6) == 0 {
			old.csv = csvWithWebhook(name, false)
			notes = append(notes, "old-csv-conversion-webhook")
		} else {
			old.csv = csvWithWebhook("", false)
		}
		if err := write(out, id, meta{Kind: "mutation", Note: strings.Join(notes, ",")}, old, nb); err != nil {
			return err
		}
		id++
	}
	fmt.Fprintf(os.Stderr, "%d pairs written\n", id)
	return nil
}

func csvWithWebhook(crd string, path bool) []byte {
	spec := map[string]any{
		"installModes": []any{map[string]any{"type": "AllNamespaces", "supported": true}},
		"install":      map[string]any{"strategy": "deployment", "spec": map[string]any{"deployments": []any{map[string]any{"name": "op", "spec": map[string]any{}}}}},
	}
	if crd != "" {
		wh := map[string]any{"type": "ConversionWebhook", "generateName": "cwh.example.com", "deploymentName": "op",
			"containerPort": 443, "admissionReviewVersions": []any{"v1"}, "sideEffects": "None", "conversionCRDs": []any{crd}}
		if path {
			wh["webhookPath"] = "/convert"
		}
		spec["webhookdefinitions"] = []any{wh}
	}
	js, _ := json.Marshal(map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
		"metadata": map[string]any{"name": "op.v1"}, "spec": spec})
	return js
}

type jmap = map[string]any

func deepCopy(v any) any {
	js, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(js, &out)
	return out
}

// mutateCRD changes a few things in a copy of crd: in a random version's
// schema, at random nodes.
func mutateCRD(r *rand.Rand, crd jmap) jmap {
	out := deepCopy(crd).(jmap)
	spec, _ := out["spec"].(jmap)
	vs, _ := spec["versions"].([]any)
	if len(vs) == 0 {
		return out
	}
	n := 1 + r.IntN(3)
	for range n {
		v, _ := vs[r.IntN(len(vs))].(jmap)
		schema, _ := v["schema"].(jmap)
		root, _ := schema["openAPIV3Schema"].(jmap)
		if root == nil {
			continue
		}
		var nodes []jmap
		var walk func(s jmap, depth int)
		walk = func(s jmap, depth int) {
			nodes = append(nodes, s)
			if p, ok := s["properties"].(jmap); ok {
				for _, k := range sortedKeys(p) {
					if c, ok := p[k].(jmap); ok {
						walk(c, depth+1)
					}
				}
			}
			if it, ok := s["items"].(jmap); ok {
				walk(it, depth+1)
			}
		}
		walk(root, 0)
		s := nodes[r.IntN(len(nodes))]
		switch r.IntN(16) {
		case 0:
			s["type"] = []string{"string", "integer", "object", "boolean"}[r.IntN(4)]
		case 1:
			s["enum"] = []any{"x", "y"}
		case 2:
			if e, ok := s["enum"].([]any); ok && len(e) > 1 {
				s["enum"] = e[:len(e)-1]
			} else {
				s["maxLength"] = 5
			}
		case 3:
			if p, ok := s["properties"].(jmap); ok && len(p) > 0 {
				ks := sortedKeys(p)
				delete(p, ks[r.IntN(len(ks))])
			} else {
				s["minimum"] = 1
			}
		case 4:
			if p, ok := s["properties"].(jmap); ok && len(p) > 0 {
				ks := sortedKeys(p)
				req := []any{}
				for _, k := range ks[:min(len(ks), 1+r.IntN(3))] {
					req = append(req, k)
				}
				s["required"] = req
			} else {
				s["maximum"] = 10
			}
		case 5:
			s["format"] = []string{"email", "date-time", "int-or-string"}[r.IntN(3)]
		case 6:
			s["pattern"] = "^[a-z]+$"
		case 7:
			s["nullable"] = true
		case 8:
			s["default"] = "d"
		case 9:
			s["description"] = "mutated description"
		case 10:
			s["oneOf"] = []any{jmap{"required": []any{"a"}}, jmap{"required": []any{"b"}}}
		case 11:
			if o, ok := s["oneOf"].([]any); ok && len(o) > 0 {
				s["oneOf"] = append(o, jmap{"required": []any{"zz"}})
			} else {
				s["anyOf"] = []any{jmap{"type": "integer"}, jmap{"type": "string"}}
				s["x-kubernetes-int-or-string"] = true
			}
		case 12:
			s["x-kubernetes-preserve-unknown-fields"] = true
		case 13:
			s["additionalProperties"] = jmap{"type": "string"}
		case 14:
			s["x-kubernetes-validations"] = []any{jmap{"rule": "self.size() > 0", "message": "m"}}
		case 15:
			s["maxItems"] = 3
			s["title"] = "t"
		}
		if r.IntN(20) == 0 {
			s["oneOf"] = []any{jmap{"properties": jmap{"a": jmap{"type": "string", "maxLength": 3}}}, jmap{"required": []any{"b"}}}
			if r.IntN(2) == 0 {
				s["description"] = "oneOf with properties"
			}
		}
	}
	return out
}

func sortedKeys(m jmap) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// addMutatedVersion adds to a copy of crd a served version v99, a mutated
// copy of its first version.
func addMutatedVersion(r *rand.Rand, crd jmap) jmap {
	out := deepCopy(crd).(jmap)
	spec, _ := out["spec"].(jmap)
	vs, _ := spec["versions"].([]any)
	if len(vs) == 0 {
		return out
	}
	one := deepCopy(jmap{"spec": jmap{"versions": []any{vs[0]}}}).(jmap)
	m := mutateCRD(r, one)
	v := m["spec"].(jmap)["versions"].([]any)[0].(jmap)
	v["name"], v["served"], v["storage"] = "v99", true, false
	spec["versions"] = append(vs, v)
	return out
}
