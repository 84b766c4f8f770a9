package action

import (
	"context"
	"testing"

	"github.com/fastopm/fastopm/alpha/cluster"
	"github.com/fastopm/fastopm/alpha/install"
	"github.com/fastopm/fastopm/pkg/httpserver"
)

// TestHubBaseNotKeptUndecided: the hub keeps its answer to the question
// of every namespace for as long as the catalogs and state are served;
// an answer undecided within its bounds (a busy machine past --timeout)
// is not kept: the next request answers again. (Kept, every later
// request, and the installed view, said undecided until a catalog
// changed.)
func TestHubBaseNotKeptUndecided(t *testing.T) {
	ctx := context.Background()
	state, err := cluster.Read(ctx, "../../testdata/cluster/states/several-subscriptions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var flags []ClusterCatalogFlag
	for _, c := range installFlags() {
		f, err := ParseClusterCatalog(c.Name + "=" + c.Ref)
		if err != nil {
			t.Fatal(err)
		}
		flags = append(flags, f)
	}
	q := &QueryCluster{Catalogs: flags, Sources: DirResolver{}}
	cats, err := q.loadCatalogs(ctx, state, &ClusterReport{})
	if err != nil {
		t.Fatal(err)
	}
	defer cats.close()
	w := &clusterWorld{hub: newClusterHub(state, "olm", nil), cats: cats}
	res, err := w.Report(ctx, httpserver.ClusterQuestion{Limits: install.Limits{MaxTerms: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Undecided {
		t.Fatal("within one term the namespace was decided: the test needs an undecided answer")
	}
	if res, err = w.Report(ctx, httpserver.ClusterQuestion{}); err != nil || res.Undecided {
		t.Errorf("asked again without the bound: undecided %v, %v", res != nil && res.Undecided, err)
	}
}
