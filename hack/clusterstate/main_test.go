package main

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/fastopm/fastopm/alpha/cluster"
	"github.com/fastopm/fastopm/internal/testutil"
)

// TestGenerate: the state and the must-gather of one generated cluster
// (from testdata's real catalogs) read to the same OLM objects, the
// copies skipped in both; the same seed writes the same files. The
// corpus run only: under -race the two clusters take half a minute.
func TestGenerate(t *testing.T) {
	if !testutil.Corpus {
		t.Skip("the corpus run's (-tags corpus): two generated clusters cost the race suite half a minute")
	}
	dir := t.TempDir()
	cats := catalogFlags{
		"openshift-marketplace/percona-everest=" + filepath.Join("..", "..", "testdata", "catalogs", "percona-everest"),
		"openshift-marketplace/submariner=" + filepath.Join("..", "..", "testdata", "catalogs", "submariner-v4.14"),
	}
	o := options{catalogs: cats, subscriptions: 12, namespaces: 3, appNamespaces: 2, seed: 3, size: 1 << 20,
		state: filepath.Join(dir, "state"), mustGather: filepath.Join(dir, "mg")}
	if _, err := generate(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	state, err := cluster.Read(context.Background(), o.state)
	if err != nil {
		t.Fatal(err)
	}
	mg, err := cluster.Read(context.Background(), o.mustGather)
	if err != nil {
		t.Fatal(err)
	}
	// (Twelve asked: the two catalogs have packages that fit for ten.)
	if len(state.Subscriptions) != 10 || len(state.CSVs) == 0 || len(state.InstallPlans) != len(state.CSVs) || len(state.OperatorGroups) != 3 || len(state.CatalogSources) != 2 {
		t.Errorf("state: %s", state.Summary())
	}
	// openshift-operators' installed CSVs, copied into every other
	// namespace: OpenShift's own, 2 applications', the 2 others with
	// Subscriptions.
	if state.Copied == 0 || state.Copied != mg.Copied || state.Copied%(len(openshiftNamespaces)+2+3-1) != 0 {
		t.Errorf("copies: state %d, must-gather %d", state.Copied, mg.Copied)
	}
	for name, lists := range map[string][2]any{
		"Subscriptions":  {state.Subscriptions, mg.Subscriptions},
		"CSVs":           {state.CSVs, mg.CSVs},
		"OperatorGroups": {state.OperatorGroups, mg.OperatorGroups},
		"InstallPlans":   {state.InstallPlans, mg.InstallPlans},
		"CatalogSources": {state.CatalogSources, mg.CatalogSources},
	} {
		a, _ := json.Marshal(lists[0])
		b, _ := json.Marshal(lists[1])
		if string(a) != string(b) {
			t.Errorf("%s: the state's and the must-gather's differ:\n%s\n%s", name, a, b)
		}
	}

	// The same seed, the same files.
	o2 := o
	o2.state, o2.mustGather = filepath.Join(dir, "state2"), filepath.Join(dir, "mg2")
	if _, err := generate(context.Background(), o2); err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]string{{o.state, o2.state}, {o.mustGather, o2.mustGather}} {
		n := 0
		err := filepath.WalkDir(pair[0], func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(pair[0], p)
			a, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b, err := os.ReadFile(filepath.Join(pair[1], rel))
			if err != nil {
				return err
			}
			if n++; string(a) != string(b) {
				t.Errorf("%s differs between two runs of one seed", rel)
			}
			return nil
		})
		if err != nil || n < 7 {
			t.Errorf("%s: %d files compared, %v", pair[0], n, err)
		}
	}
}
