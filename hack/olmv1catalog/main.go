// Command olmv1catalog writes testdata/olmv1/catalog: a hand-made catalog
// whose packages show where OLM v0's and OLM v1's answers differ, and
// each reason OLM v1 refuses a bundle (testdata/olmv1/README.md explains
// every package). Its bundles carry their manifests as olm.bundle.object
// properties, written from the short descriptions below.
//
//	go run ./hack/olmv1catalog testdata/olmv1/catalog
package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

type bundle struct {
	version  string
	replaces string
	skips    []string
	skipRng  string
	modes    []string // supported install modes; AllNamespaces when nil
	props    []map[string]any
	webhooks []map[string]any
	apis     bool
	crds     []string // owned CRDs (group from the package)
}

type pkg struct {
	name     string
	channels map[string][]bundle
	def      string
	deprecs  []map[string]any
}

func name(p, v string) string { return p + ".v" + v }

func prop(t string, v any) map[string]any { return map[string]any{"type": t, "value": v} }

func object(v any) map[string]any {
	js, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return prop("olm.bundle.object", map[string]any{"data": base64.StdEncoding.EncodeToString(js)})
}

func csv(p string, b bundle) map[string]any {
	modes := b.modes
	if modes == nil {
		modes = []string{"AllNamespaces"}
	}
	var ims []map[string]any
	for _, m := range []string{"OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces"} {
		ims = append(ims, map[string]any{"type": m, "supported": slices.Contains(modes, m)})
	}
	var owned []map[string]any
	for _, c := range b.crds {
		owned = append(owned, map[string]any{"name": strings.ToLower(c) + "s." + p + ".example.com", "version": "v1", "kind": c})
	}
	spec := map[string]any{
		"displayName": p, "version": b.version, "installModes": ims,
		"install": map[string]any{"strategy": "deployment", "spec": map[string]any{"deployments": []map[string]any{{
			"name": p + "-controller",
			"spec": map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": p}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": p}},
					"spec": map[string]any{"containers": []map[string]any{{"name": "manager", "image": "quay.io/example/" + p + ":v" + b.version}}}}},
		}}}},
		"customresourcedefinitions": map[string]any{"owned": owned},
	}
	if b.webhooks != nil {
		spec["webhookdefinitions"] = b.webhooks
	}
	if b.apis {
		spec["apiservicedefinitions"] = map[string]any{"owned": []map[string]any{{"name": "v1.metrics." + p + ".example.com", "group": "metrics." + p + ".example.com", "version": "v1", "kind": "Metric", "deploymentName": p + "-controller"}}}
	}
	return map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
		"metadata": map[string]any{"name": name(p, b.version)}, "spec": spec}
}

func crd(p, kind string) map[string]any {
	return map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": strings.ToLower(kind) + "s." + p + ".example.com"},
		"spec": map[string]any{"group": p + ".example.com", "scope": "Namespaced",
			"names":    map[string]any{"kind": kind, "plural": strings.ToLower(kind) + "s", "singular": strings.ToLower(kind), "listKind": kind + "List"},
			"versions": []map[string]any{{"name": "v1", "served": true, "storage": true, "schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object"}}}}}}
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: olmv1catalog DIR")
		os.Exit(2)
	}
	wh := func(typ, gen string, extra map[string]any) map[string]any {
		m := map[string]any{"type": typ, "generateName": gen, "deploymentName": "webhooks-controller", "containerPort": 443,
			"admissionReviewVersions": []string{"v1"}, "sideEffects": "None"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	pkgs := []pkg{
		{name: "plain", def: "stable", channels: map[string][]bundle{"stable": {
			{version: "1.0.0", crds: []string{"Widget"}},
			{version: "1.1.0", replaces: "1.0.0", crds: []string{"Widget"}},
		}}},
		{name: "rollback", def: "stable", channels: map[string][]bundle{"stable": {
			{version: "1.0.0"},
			{version: "2.0.0", replaces: "1.0.0"},
			{version: "1.9.0", replaces: "2.0.0"},
		}}},
		{name: "deprecated-head", def: "stable", channels: map[string][]bundle{"stable": {
			{version: "1.0.0"},
			{version: "1.1.0", replaces: "1.0.0"},
		}}, deprecs: []map[string]any{{"reference": map[string]any{"schema": "olm.bundle", "name": "deprecated-head.v1.1.0"}, "message": "deprecated-head.v1.1.0 has a data-loss bug: use 1.0.0"}}},
		{name: "legacy-deprecated", def: "stable", channels: map[string][]bundle{"stable": {
			{version: "1.0.0"},
			{version: "1.1.0", replaces: "1.0.0", props: []map[string]any{prop("olm.deprecated", map[string]any{})}},
		}}},
		{name: "skipper", def: "stable", channels: map[string][]bundle{
			"stable": {{version: "1.0.0"}, {version: "1.1.0", replaces: "1.0.0"}, {version: "1.2.0", replaces: "1.1.0"}},
			"fast":   {{version: "1.0.0"}, {version: "2.0.0", replaces: "1.0.0", skipRng: "<2.0.0"}},
		}},
		{name: "cert-manager", def: "stable", channels: map[string][]bundle{"stable": {
			{version: "1.14.0", crds: []string{"Certificate"}},
		}}},
		{name: "needs-certs", def: "stable", channels: map[string][]bundle{"stable": {
			{version: "1.0.0", props: []map[string]any{prop("olm.gvk.required", map[string]any{"group": "cert-manager.example.com", "version": "v1", "kind": "Certificate"})}},
		}}},
		{name: "own-namespace", def: "stable", channels: map[string][]bundle{"stable": {
			{version: "1.0.0", modes: []string{"OwnNamespace", "SingleNamespace"}},
		}}},
		{name: "aggregated", def: "stable", channels: map[string][]bundle{"stable": {
			{version: "1.0.0", apis: true},
		}}},
		{name: "webhooks", def: "stable", channels: map[string][]bundle{"stable": {
			{version: "1.0.0", modes: []string{"AllNamespaces", "OwnNamespace"}, crds: []string{"Gadget"}, webhooks: []map[string]any{
				wh("ConversionWebhook", "gadgets.webhooks.example.com", map[string]any{"conversionCRDs": []string{"gadgets.webhooks.example.com"}}),
				wh("ValidatingAdmissionWebhook", "vgadget.webhooks.example.com", map[string]any{"rules": []map[string]any{{"apiGroups": []string{"*"}, "apiVersions": []string{"v1"}, "operations": []string{"CREATE"}, "resources": []string{"gadgets"}}}}),
			}},
		}}},
	}
	dir := os.Args[1]
	if err := os.MkdirAll(dir, 0o755); err != nil {
		panic(err)
	}
	for _, p := range pkgs {
		var blobs []any
		blobs = append(blobs, map[string]any{"schema": "olm.package", "name": p.name, "defaultChannel": p.def})
		var chNames []string
		for c := range p.channels {
			chNames = append(chNames, c)
		}
		slices.Sort(chNames)
		seen := map[string]bool{}
		var bundles []any
		for _, c := range chNames {
			var entries []map[string]any
			for _, b := range p.channels[c] {
				e := map[string]any{"name": name(p.name, b.version)}
				if b.replaces != "" {
					e["replaces"] = name(p.name, b.replaces)
				}
				if len(b.skips) > 0 {
					var skips []string
					for _, sk := range b.skips {
						skips = append(skips, name(p.name, sk))
					}
					e["skips"] = skips
				}
				if b.skipRng != "" {
					e["skipRange"] = b.skipRng
				}
				entries = append(entries, e)
				if seen[b.version] {
					continue
				}
				seen[b.version] = true
				props := []map[string]any{prop("olm.package", map[string]any{"packageName": p.name, "version": b.version})}
				for _, k := range b.crds {
					props = append(props, prop("olm.gvk", map[string]any{"group": p.name + ".example.com", "version": "v1", "kind": k}))
				}
				props = append(props, b.props...)
				props = append(props, object(csv(p.name, b)))
				for _, k := range b.crds {
					props = append(props, object(crd(p.name, k)))
				}
				bundles = append(bundles, map[string]any{"schema": "olm.bundle", "name": name(p.name, b.version), "package": p.name,
					"image": "quay.io/example/" + p.name + "-bundle:v" + b.version, "properties": props})
			}
			blobs = append(blobs, map[string]any{"schema": "olm.channel", "package": p.name, "name": c, "entries": entries})
		}
		blobs = append(blobs, bundles...)
		if p.deprecs != nil {
			blobs = append(blobs, map[string]any{"schema": "olm.deprecations", "package": p.name, "entries": p.deprecs})
		}
		f, err := os.Create(filepath.Join(dir, p.name+".json"))
		if err != nil {
			panic(err)
		}
		enc := json.NewEncoder(f)
		enc.SetIndent("", "    ")
		for _, b := range blobs {
			if err := enc.Encode(b); err != nil {
				panic(err)
			}
		}
		if err := f.Close(); err != nil {
			panic(err)
		}
	}
}
