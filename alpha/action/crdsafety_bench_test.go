package action

import (
	"context"
	"testing"

	"github.com/fastopm/fastopm/alpha/crdsafety"
)

// BenchmarkCRDEdgesLarge compares the CRDs of every update of the large
// benchmark catalog (each op: the catalog's CRDs read, a new Checker, all
// updates compared), the worst case of `opm alpha diff --check`: a NEW
// whose every update is new.
func BenchmarkCRDEdgesLarge(b *testing.B) {
	dir := benchCatalog(b, "OPM_BENCH_CATALOG", "/tmp/bench-large")
	cat, err := OpenModel(context.Background(), &Resolver{}, dir, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer cat.Close()
	edges := UpdateEdges(cat.Model)
	for b.Loop() {
		ix, err := cat.CRDs(context.Background(), nil)
		if err != nil {
			b.Fatal(err)
		}
		c, err := crdsafety.NewChecker()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := CheckEdgeCRDs(context.Background(), ix, c, edges); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCRDIndexLarge reads the CRDs of every bundle of the large
// benchmark catalog.
func BenchmarkCRDIndexLarge(b *testing.B) {
	dir := benchCatalog(b, "OPM_BENCH_CATALOG", "/tmp/bench-large")
	cat, err := OpenModel(context.Background(), &Resolver{}, dir, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer cat.Close()
	for b.Loop() {
		if _, err := cat.CRDs(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDiffCheckLarge is `opm alpha diff L L --check` on the large
// benchmark catalog: both catalogs read once each (model, the resolver's
// view, where the bundles are), then every rule.
func BenchmarkDiffCheckLarge(b *testing.B) {
	dir := benchCatalog(b, "OPM_BENCH_CATALOG", "/tmp/bench-large")
	for b.Loop() {
		if _, err := (DiffCatalogs{Sources: &Resolver{Allowed: RefCatalogDir}, Old: dir, New: dir, Check: true}).Run(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDiffCheckLargeOnePackage is `opm alpha diff --check` from the
// large benchmark catalog without one package (OPM_BENCH_OLD: a copy of
// it with one package's directory removed) to the catalog.
func BenchmarkDiffCheckLargeOnePackage(b *testing.B) {
	dir := benchCatalog(b, "OPM_BENCH_CATALOG", "/tmp/bench-large")
	old := benchCatalog(b, "OPM_BENCH_OLD", "")
	for b.Loop() {
		if _, err := (DiffCatalogs{Sources: &Resolver{Allowed: RefCatalogDir}, Old: old, New: dir, Check: true}).Run(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
