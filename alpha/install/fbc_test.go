package install

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/model"
)

// A small language for hand-made catalogs: packages with a default
// channel, channels with entries, bundles with properties.

type fbc struct {
	blobs []any
	// invalid marks a catalog opm refuses (OLM's cases include some):
	// it is loaded without the checks.
	invalid bool
}

func (c *fbc) refusedByOpm() *fbc {
	c.invalid = true
	return c
}

// pkg adds a package with its default channel.
func (c *fbc) pkg(name, defaultChannel string) *fbc {
	c.blobs = append(c.blobs, map[string]any{"schema": "olm.package", "name": name, "defaultChannel": defaultChannel})
	return c
}

// entry is a channel entry: "name", "name<replaces", and
// "name<replaces|skips=a,b|range=>=1.0.0 <2.0.0".
type entry string

func (e entry) blob() map[string]any {
	parts := strings.Split(string(e), "|")
	m := map[string]any{}
	name, replaces, _ := strings.Cut(parts[0], "<")
	m["name"] = name
	if replaces != "" {
		m["replaces"] = replaces
	}
	for _, p := range parts[1:] {
		k, v, _ := strings.Cut(p, "=")
		switch k {
		case "skips":
			m["skips"] = strings.Split(v, ",")
		case "range":
			m["skipRange"] = v
		}
	}
	return m
}

// channel adds a channel.
func (c *fbc) channel(pkg, name string, entries ...entry) *fbc {
	es := []any{}
	for _, e := range entries {
		es = append(es, e.blob())
	}
	c.blobs = append(c.blobs, map[string]any{"schema": "olm.channel", "package": pkg, "name": name, "entries": es})
	return c
}

// bundle adds a bundle of a version with properties (beyond its
// olm.package, which it always gets).
func (c *fbc) bundle(pkg, name, version string, props ...prop) *fbc {
	ps := []any{map[string]any{"type": "olm.package", "value": map[string]any{"packageName": pkg, "version": version}}}
	for _, p := range props {
		ps = append(ps, map[string]any{"type": p.typ, "value": json.RawMessage(p.value)})
	}
	c.blobs = append(c.blobs, map[string]any{"schema": "olm.bundle", "package": pkg, "name": name,
		"image": "example.com/" + strings.ToLower(pkg) + ":" + version, "properties": ps})
	return c
}

type prop struct{ typ, value string }

func gvk(g, v, k string) prop {
	return prop{"olm.gvk", fmt.Sprintf(`{"group":%q,"version":%q,"kind":%q}`, g, v, k)}
}
func needGVK(g, v, k string) prop {
	return prop{"olm.gvk.required", fmt.Sprintf(`{"group":%q,"version":%q,"kind":%q}`, g, v, k)}
}
func needPkg(name, r string) prop {
	return prop{"olm.package.required", fmt.Sprintf(`{"packageName":%q,"versionRange":%q}`, name, r)}
}
func constraintProp(v string) prop { return prop{"olm.constraint", v} }

func (c *fbc) fs() fstest.MapFS {
	var b strings.Builder
	for _, x := range c.blobs {
		j, err := json.Marshal(x)
		if err != nil {
			panic(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return fstest.MapFS{"catalog.json": {Data: []byte(b.String())}}
}

// load makes a catalog.
func (c *fbc) load(t testing.TB, name string, priority int) *Catalog {
	t.Helper()
	cat, _, err := Load(context.Background(), c.fs(), name, priority)
	if err != nil {
		t.Fatalf("catalog %s: %v", name, err)
	}
	return cat
}

// loadInvalid makes a catalog without checking upstream's rules.
func (c *fbc) loadInvalid(t testing.TB, name string, priority int) *Catalog {
	t.Helper()
	mb, col := model.NewBuilder(), NewCollector()
	if err := declcfg.Walk(context.Background(), c.fs(), func(b *declcfg.Blob) error {
		mb.AddBlob(b)
		col.AddBlob(b)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	m, problems := mb.Build()
	if problems.Err() == nil {
		t.Fatalf("catalog %s is valid: mark it only when opm refuses it", name)
	}
	cat, err := NewCatalog(name, priority, m, col)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func newFBC() *fbc { return &fbc{} }
