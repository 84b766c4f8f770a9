package action

import (
	"context"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/crdsafety"
	"github.com/fastopm/fastopm/alpha/updates"
	"github.com/fastopm/fastopm/internal/shapecat"
	"github.com/fastopm/fastopm/internal/testutil"
)

// hostileShape writes the hostile shape name, of size n, as a catalog
// directory.
func hostileShape(t *testing.T, name string, n int) string {
	t.Helper()
	s, ok := shapecat.LookupAny(name)
	if !ok {
		t.Fatalf("no shape %s", name)
	}
	return writeShape(t, s, n)
}

// queryCRDs is `opm alpha query updates DIR -p shape --from FROM`'s
// comparison of the CRDs of the first step.
func queryCRDs(t *testing.T, dir, from string) crdsafety.Result {
	t.Helper()
	ctx := context.Background()
	cat, err := OpenModel(ctx, &Resolver{}, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	ix, err := cat.CRDs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	q := updates.Query{Model: cat.Model, Package: shapecat.Package, From: from}
	if q.CRDs, err = CompareCRDs(ctx, ix); err != nil {
		t.Fatal(err)
	}
	a, err := q.Run()
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Path) == 0 || a.Path[0].CRDs == nil {
		t.Fatalf("no step compared: %+v", a)
	}
	return *a.Path[0].CRDs
}

// TestHostileCRDs: the CRD shapes of issue 24 at full size (corpus run):
// a schema nested 1000 deep, 200 served versions of about 300 properties
// each, `diff --check` over 20 steps of a schema nested 500 deep, and 400
// served versions, past the limit of what pairs of versions are compared.
// The answers (issue 24 is about their cost, measured in
// docs/performance.md, not tested here).
func TestHostileCRDs(t *testing.T) {
	if !testutil.Corpus {
		t.Skip("the corpus run's (-tags corpus)")
	}
	t.Parallel()
	t.Run("crd-deep", func(t *testing.T) {
		t.Parallel()
		r := queryCRDs(t, hostileShape(t, "crd-deep", 1000), "shape.v1.0.0")
		if r.Unknown != "" || len(r.Changes) != 0 {
			t.Errorf("an optional field added 1000 deep: %+v", r)
		}
	})
	t.Run("crd-versions", func(t *testing.T) {
		t.Parallel()
		r := queryCRDs(t, hostileShape(t, "crd-versions", 200), "shape.v1.0.0")
		if r.Unknown != "" || len(r.Changes) != 0 {
			t.Errorf("200 compatible versions, an optional field added to each: %+v", r)
		}
	})
	t.Run("crd-versions past the limit", func(t *testing.T) {
		t.Parallel()
		dir := hostileShape(t, "crd-versions", 400)
		r := queryCRDs(t, dir, "shape.v1.0.0")
		if len(r.Changes) != 1 || r.Changes[0].Check != "limit" || r.Changes[0].V1 != crdsafety.NotChecked ||
			r.Changes[0].Message != "400 served versions: comparing each pair of them (79800 pairs) is past the limit of 20000000 schema properties looked up: they are not checked against each other" {
			t.Fatalf("400 versions: %+v", r)
		}
		// diff --check: a violation, not a warning: not known to be safe.
		res, err := DiffCatalogs{Sources: &Resolver{}, Old: t.TempDir(), New: dir, Check: true}.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Violations) != 1 || res.Violations[0].Rule != "crd-upgrade" || res.Violations[0].Warning ||
			!strings.Contains(res.Violations[0].Message, "limit: 400 served versions") {
			t.Errorf("diff --check: %+v", res.Violations)
		}
	})
	t.Run("crd-steps", func(t *testing.T) {
		t.Parallel()
		dir := hostileShape(t, "crd-steps", 500)
		res, err := DiffCatalogs{Sources: &Resolver{}, Old: t.TempDir(), New: dir, Check: true}.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		want := "update from shape.v1.0.19: CRD things.shape.example.com v1 ^.spec" + strings.Repeat(".nested", 500) +
			".leaf: maxLength: maximum constraint added when there was none previously : 63 (OLM v1 refuses it; OLM v0 refuses it if an existing resource breaks it)"
		if len(res.Violations) != 1 || res.Violations[0].Bundle != "shape.v1.0.20" || res.Violations[0].Message != want || res.Violations[0].Warning {
			t.Errorf("diff --check of 20 steps 500 deep: %+v", res.Violations)
		}
	})
}
