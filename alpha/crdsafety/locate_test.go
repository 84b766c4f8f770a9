package crdsafety

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/fastopm/fastopm/alpha/declcfg"
)

// locate records the bundles of the catalog in dir, as a caller reading
// it for something else does.
func locate(t *testing.T, dir string) *Locations {
	t.Helper()
	l := NewLocations()
	if err := declcfg.Walk(context.Background(), os.DirFS(dir), func(b *declcfg.Blob) error {
		l.Add(b)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return l
}

// indexText is what an index holds, in words, for comparing two.
func indexText(t *testing.T, ix *Index) string {
	t.Helper()
	var b strings.Builder
	for _, name := range []string{"cron.v1", "cron.v2", "cron.v3", "cron.v4"} {
		bd, ok := ix.Bundle("cron", name)
		fmt.Fprintf(&b, "%s %v %v", name, ok, bd.Objects)
		for _, c := range bd.CRDs {
			fmt.Fprintf(&b, " %s %s %x %d", c.Name, c.APIVersion, c.Digest[:4], len(c.JSON))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%d bundles, %d manifests", ix.Len(), ix.Manifests())
	return b.String()
}

// TestLocationsLoadIndex: the bundles read back by their position hold
// what a second reading of the whole catalog finds, for a JSON catalog
// (read back by position) and a YAML one (read again).
func TestLocationsLoadIndex(t *testing.T) {
	t.Parallel()
	v2 := oldCron()
	editSpecs(v2, func(s *apiextensionsv1.JSONSchemaProps) {
		setField(s, "enum", func(p *apiextensionsv1.JSONSchemaProps) { p.Enum = enums("a") })
	})
	jsonDir := writeCatalog(t, oldCron(), v2)
	// The same catalog as YAML documents.
	data, err := os.ReadFile(filepath.Join(jsonDir, "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		y, err := yaml.JSONToYAML(line)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(y))
	}
	yamlDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(yamlDir, "catalog.yaml"), []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		dir      string
		verbatim bool
	}{{jsonDir, true}, {yamlDir, false}} {
		l := locate(t, tc.dir)
		for k, loc := range l.bundles {
			if loc.verbatim != tc.verbatim {
				t.Errorf("%s: %v: verbatim %v", tc.dir, k, loc.verbatim)
			}
		}
		want, err := LoadIndex(ctx, os.DirFS(tc.dir), nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := l.LoadIndex(ctx, os.DirFS(tc.dir), nil)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := indexText(t, got), indexText(t, want); g != w || !strings.HasSuffix(g, "3 bundles, 2 manifests") {
			t.Errorf("%s: read back:\n%s\nread again:\n%s", tc.dir, g, w)
		}
		c := newChecker(t)
		if res := compareIndex(t, got, c, "cron", "cron.v1", "cron.v2"); len(res.Changes) != 2 || res.Unknown != "" {
			t.Errorf("%s: v1 -> v2: %+v", tc.dir, res)
		}
		// Only the bundles asked for.
		some, err := l.LoadIndex(ctx, os.DirFS(tc.dir), func(pkg, name string) bool { return name == "cron.v2" })
		if _, ok := some.Bundle("cron", "cron.v2"); err != nil || some.Len() != 1 || !ok {
			t.Errorf("%s: kept %d bundles, %v", tc.dir, some.Len(), err)
		}
	}

	// A file changed since it was read is an error, not another bundle.
	l := locate(t, jsonDir)
	if err := os.WriteFile(filepath.Join(jsonDir, "catalog.json"), append([]byte("\n\n\n"), data...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := l.LoadIndex(ctx, os.DirFS(jsonDir), nil); err == nil || !strings.Contains(err.Error(), "the file changed while it was read") {
		t.Errorf("changed file: %v", err)
	}
}

// TestLocationsErrors: a bundle whose object does not decode is reported
// at its position, as LoadIndex reports it.
func TestLocationsErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := `{"schema":"olm.bundle","package":"p","name":"p.v1","properties":[{"type":"olm.bundle.object","value":{"data":"%%%"}}]}`
	if err := os.WriteFile(filepath.Join(dir, "c.json"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := locate(t, dir).LoadIndex(context.Background(), os.DirFS(dir), nil)
	if err == nil || !strings.Contains(err.Error(), "c.json:1:1") || !strings.Contains(err.Error(), `bundle "p.v1"`) {
		t.Errorf("got %v", err)
	}
	// A cancelled context stops it.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := locate(t, dir).LoadIndex(ctx, os.DirFS(dir), nil); err == nil {
		t.Error("a cancelled read returned no error")
	}
}
