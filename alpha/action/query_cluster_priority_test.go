package action

import (
	"context"
	"testing"
)

// TestSubscribeSourceExtremePriorities: a what-if Subscription without a
// source takes the catalog of the highest priority offering the package,
// at the ends of int's range too (b-a overflowed there, and the lowest
// priority was taken).
func TestSubscribeSourceExtremePriorities(t *testing.T) {
	var cats []ClusterCatalogFlag
	for _, s := range []string{"olm/community=../../testdata/install/community",
		"olm/certified=../../testdata/install/certified,priority=9223372036854775807",
		"olm/marketplace=../../testdata/install/marketplace,priority=-9223372036854775808"} {
		f, err := ParseClusterCatalog(s)
		if err != nil {
			t.Fatal(err)
		}
		cats = append(cats, f)
	}
	q := QueryCluster{State: []string{"../../testdata/cluster/states/several-subscriptions.yaml"}, Catalogs: cats, Sources: DirResolver{},
		Subscribe: []string{"team-a/elasticsearch"}}
	rep, err := q.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Hypothetical) != 1 {
		t.Fatalf("%d what-if Subscriptions, want 1", len(rep.Hypothetical))
	}
	if h := rep.Hypothetical[0].Spec; h.CatalogSource != "certified" {
		t.Errorf("the what-if's source: %s/%s, want olm/certified", h.CatalogSourceNamespace, h.CatalogSource)
	}
}
