package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// fixtures writes, under dir, the catalogs the check adds to the real
// ones: modes (one package per set of supported install modes, for the
// watchNamespace checks), release (explicit releases and releases in build
// metadata, for the BundleReleaseSupport gate), tie (versions that compare
// equal) and nodeprec (src, testdata/olmv1/catalog, without its
// olm.deprecations, to set beside it in a catalog set).
func fixtures(dir, src string) error {
	var modes []any
	all := []string{"AllNamespaces", "OwnNamespace", "SingleNamespace", "MultiNamespace"}
	for set := 1; set < 1<<len(all); set++ {
		pkg := "modes-"
		var ims []map[string]any
		for i, m := range all {
			on := set&(1<<i) != 0
			if on {
				pkg += strings.ToLower(m[:1])
			}
			ims = append(ims, map[string]any{"type": m, "supported": on})
		}
		name := pkg + ".v1.0.0"
		csv := map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
			"metadata": map[string]any{"name": name},
			"spec": map[string]any{"version": "1.0.0", "installModes": ims,
				"install": map[string]any{"strategy": "deployment", "spec": map[string]any{
					"deployments": []any{map[string]any{"name": pkg + "-controller", "spec": map[string]any{
						"selector": map[string]any{"matchLabels": map[string]any{"app": pkg}},
						"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": pkg}},
							"spec": map[string]any{"containers": []any{map[string]any{"name": "manager", "image": "example.com/op:1"}}}}}}}}}}}
		js, err := json.Marshal(csv)
		if err != nil {
			return err
		}
		modes = append(modes,
			map[string]any{"schema": "olm.package", "name": pkg, "defaultChannel": "stable"},
			map[string]any{"schema": "olm.channel", "package": pkg, "name": "stable", "entries": []any{map[string]any{"name": name}}},
			map[string]any{"schema": "olm.bundle", "package": pkg, "name": name, "image": "example.com/" + pkg + ":1", "properties": []any{
				map[string]any{"type": "olm.package", "value": map[string]any{"packageName": pkg, "version": "1.0.0"}},
				map[string]any{"type": "olm.bundle.object", "value": map[string]any{"data": base64.StdEncoding.EncodeToString(js)}}}})
	}
	// name, version, release (nil: none), replaces, skipRange
	type rb struct {
		name, version string
		release       *string
		replaces, rng string
	}
	s := func(v string) *string { return &v }
	rbs := []rb{{"rel.v0.9.0", "0.9.0", nil, "", ""}, {"rel.v1.0.0", "1.0.0", nil, "rel.v0.9.0", ""},
		{"rel-v1.0.0-1", "1.0.0", s("1"), "rel.v1.0.0", ""}, {"rel-v1.0.0-2", "1.0.0", s("2"), "rel-v1.0.0-1", ""},
		{"rel-v1.0.0-10", "1.0.0", s("10"), "rel-v1.0.0-2", ""}, {"rel.v1.0.0-b3", "1.0.0+3", nil, "rel-v1.0.0-10", ""},
		{"rel.v1.1.0", "1.1.0+build.7", s(""), "rel.v1.0.0-b3", ""}, {"rel-v1.2.0-1.beta", "1.2.0", s("1.beta"), "rel.v1.1.0", ">=1.0.0 <1.2.0"}}
	release := []any{map[string]any{"schema": "olm.package", "name": "rel", "defaultChannel": "stable"},
		map[string]any{"schema": "olm.channel", "package": "rel", "name": "fast", "entries": []any{
			map[string]any{"name": "rel-v1.0.0-2"}, map[string]any{"name": "rel-v1.2.0-1.beta", "skips": []string{"rel-v1.0.0-2"}}}}}
	var entries []any
	for _, b := range rbs {
		e := map[string]any{"name": b.name}
		if b.replaces != "" {
			e["replaces"] = b.replaces
		}
		if b.rng != "" {
			e["skipRange"] = b.rng
		}
		entries = append(entries, e)
		v := map[string]any{"packageName": "rel", "version": b.version}
		if b.release != nil {
			v["release"] = *b.release
		}
		release = append(release, map[string]any{"schema": "olm.bundle", "package": "rel", "name": b.name, "image": "example.com/" + b.name,
			"properties": []any{map[string]any{"type": "olm.package", "value": v}}})
	}
	release = append(release, map[string]any{"schema": "olm.channel", "package": "rel", "name": "stable", "entries": entries})
	tie := []any{map[string]any{"schema": "olm.package", "name": "tie", "defaultChannel": "stable"},
		map[string]any{"schema": "olm.channel", "package": "tie", "name": "stable", "entries": []any{
			map[string]any{"name": "tie.a"}, map[string]any{"name": "tie.b", "replaces": "tie.a"},
			map[string]any{"name": "tie.c", "replaces": "tie.b"}, map[string]any{"name": "tie.d", "replaces": "tie.c"}}}}
	for _, b := range [][2]string{{"tie.a", "0.9.0"}, {"tie.b", "1.0.0+001"}, {"tie.c", "1.0.0"}, {"tie.d", "1.0.0+build.x"}} {
		tie = append(tie, map[string]any{"schema": "olm.bundle", "package": "tie", "name": b[0], "image": "example.com/" + b[0],
			"properties": []any{map[string]any{"type": "olm.package", "value": map[string]any{"packageName": "tie", "version": b[1]}}}})
	}
	for name, blobs := range map[string][]any{"modes": modes, "release": release, "tie": tie} {
		if err := writeCatalog(filepath.Join(dir, name, "catalog.json"), blobs); err != nil {
			return err
		}
	}
	// nodeprec: src's files without their olm.deprecations blobs.
	files, err := filepath.Glob(filepath.Join(src, "*.json"))
	if err != nil {
		return err
	}
	for _, f := range files {
		in, err := os.Open(f)
		if err != nil {
			return err
		}
		var blobs []any
		dec := json.NewDecoder(bufio.NewReader(in))
		for dec.More() {
			var b map[string]any
			if err := dec.Decode(&b); err != nil {
				in.Close()
				return fmt.Errorf("%s: %w", f, err)
			}
			if b["schema"] != "olm.deprecations" {
				blobs = append(blobs, b)
			}
		}
		in.Close()
		if err := writeCatalog(filepath.Join(dir, "nodeprec", filepath.Base(f)), blobs); err != nil {
			return err
		}
	}
	return nil
}

func writeCatalog(path string, blobs []any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, b := range blobs {
		if err := enc.Encode(b); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
