package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestConvertTemplateRoundTrip: a catalog converted to a template renders
// back to the catalog, as upstream's does (checked by hand with upstream
// v1.73.0 on testdata/example): `opm render DIR | opm alpha
// convert-template TYPE | opm alpha render-template TYPE` prints what
// `opm render DIR` prints, for substitutes (every bundle kept whole, no
// substitutions) in JSON and YAML. (Basic reduces bundles to their
// images, which would need a registry: its outputs are compared with
// upstream's in TestRenderTemplateGolden.)
func TestConvertTemplateRoundTrip(t *testing.T) {
	pipe := func(t *testing.T, in []byte, args ...string) []byte {
		t.Helper()
		var out, errb bytes.Buffer
		if code := Main(context.Background(), Streams{In: bytes.NewReader(in), Out: &out, Err: &errb}, args); code != 0 {
			t.Fatalf("opm %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
		}
		return out.Bytes()
	}
	for _, dir := range []string{"example", "catalogs/kube-descheduler-v4.12"} {
		for _, format := range []string{"json", "yaml"} {
			t.Run(dir+"/"+format, func(t *testing.T) {
				rendered := pipe(t, nil, "render", filepath.Join(goldenRoot, dir))
				tmpl := pipe(t, rendered, "alpha", "convert-template", "substitutes", "-o", format)
				if !bytes.Contains(tmpl, []byte("olm.template.substitutes")) {
					t.Fatalf("not a substitutes template:\n%.300s", tmpl)
				}
				back := pipe(t, tmpl, "alpha", "render-template", "substitutes")
				if !bytes.Equal(back, rendered) {
					t.Errorf("rendered template differs from the catalog:\n%s", firstDifference(back, rendered))
				}
			})
		}
	}
}
