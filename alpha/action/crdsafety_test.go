package action

import (
	"context"
	"fmt"
	"testing"

	"github.com/fastopm/fastopm/alpha/crdsafety"
)

// TestUpdateEdges lists the updates of testdata/updates (its README tells
// each case): every bundle's next step, as `opm alpha query updates`
// answers it.
func TestUpdateEdges(t *testing.T) {
	t.Parallel()
	cat, err := OpenModel(context.Background(), &Resolver{Allowed: RefCatalogDir}, "../../testdata/updates", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	var got []string
	for _, e := range UpdateEdges(cat.Model) {
		got = append(got, fmt.Sprintf("%s/%s %s>%s", e.Package, e.Channel, e.From, e.To))
	}
	want := []string{
		"etcd/alpha etcdoperator.v0.9.2>etcdoperator.v0.9.5",
		"etcd/alpha etcdoperator.v0.9.4>etcdoperator.v0.9.5",
		"etcd/stable etcdoperator.v0.9.0>etcdoperator.v0.9.2",
		"etcd/stable etcdoperator.v0.9.1>etcdoperator.v0.9.2",
		"etcd/stable etcdoperator.v0.9.2>etcdoperator.v0.9.4",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}

	// Its bundles carry no objects: every comparison is unknown.
	ix, err := cat.CRDs(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := crdsafety.NewChecker()
	if err != nil {
		t.Fatal(err)
	}
	res, err := CheckEdgeCRDs(context.Background(), ix, c, UpdateEdges(cat.Model))
	if err != nil || len(res) != len(want) {
		t.Fatalf("%d results, %v", len(res), err)
	}
	for _, r := range res {
		if r.Unknown == "" || len(r.Changes) > 0 {
			t.Errorf("%+v: want unknown", r)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := CheckEdgeCRDs(ctx, ix, c, UpdateEdges(cat.Model)); err == nil {
		t.Error("a cancelled check returned no error")
	}
	if _, err := OpenModel(context.Background(), &Resolver{Allowed: RefCatalogDir}, "../../testdata/nosuch", 0); err == nil {
		t.Error("no error for a missing catalog")
	}
}
