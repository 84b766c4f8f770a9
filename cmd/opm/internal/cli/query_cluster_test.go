package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/install"
)

// clusterCatalogs are the --catalog flags of testdata/cluster's states.
func clusterCatalogs() []string {
	return []string{
		"--catalog", "olm/community=" + filepath.Join(goldenRoot, "install", "community"),
		"--catalog", "olm/certified=" + filepath.Join(goldenRoot, "install", "certified"),
		"--catalog", "olm/marketplace=" + filepath.Join(goldenRoot, "install", "marketplace"),
	}
}

// olmAnswer is one namespace of testdata/cluster/olm-resolvesteps.json:
// OLM v0.46.0's own ResolveSteps.
type olmAnswer struct {
	Namespace string            `json:"namespace"`
	Error     string            `json:"error"`
	CSVs      []string          `json:"csvs"`
	Replaces  map[string]string `json:"replaces"`
	Generated []string          `json:"generated"`
	Updated   map[string]string `json:"updated"`
}

// TestQueryClusterAsOLM: every state of testdata/cluster, answered as OLM's
// own ResolveSteps answered it (recorded).
func TestQueryClusterAsOLM(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(goldenRoot, "cluster", "olm-resolvesteps.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string][]olmAnswer
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	for name, answers := range want {
		t.Run(name, func(t *testing.T) {
			args := []string{"alpha", "query", "cluster", "--state", filepath.Join(goldenRoot, "cluster", "states", name+".yaml"), "-o", "json"}
			if name == "openshift-operators" {
				args = append(args, "--catalog", "olm/many="+filepath.Join(goldenRoot, "cluster", "catalogs", "many"))
			} else {
				args = append(args, clusterCatalogs()...)
			}
			code, out, errOut := run(t, args...)
			var rep action.ClusterReport
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("exit %d: %v\n%s%s", code, err, out, errOut)
			}
			if len(rep.Namespaces) != len(answers) {
				t.Fatalf("%d namespaces, OLM %d", len(rep.Namespaces), len(answers))
			}
			failed := false
			for i, w := range answers {
				n := rep.Namespaces[i]
				if n.Namespace != w.Namespace {
					t.Fatalf("namespace %s, OLM %s", n.Namespace, w.Namespace)
				}
				got := olmAnswer{Namespace: n.Namespace, CSVs: []string{}, Replaces: map[string]string{}, Generated: []string{}, Updated: map[string]string{}}
				switch {
				case n.Skipped != "":
					// OLM's sync stops before ResolveSteps; ResolveSteps
					// itself says so in its own words.
					got.Error = w.Error
					if !strings.Contains(w.Error, "OperatorGroup") || !strings.Contains(n.Skipped, "operatorGroups, expected 1") {
						t.Errorf("%s: skipped %q, OLM %q", n.Namespace, n.Skipped, w.Error)
					}
				case n.Answer.Status == install.Unsatisfiable:
					got.Error = "constraints not satisfiable"
				case n.Answer.Status != install.Installable:
					got.Error = n.Answer.Error
				default:
					for _, op := range n.Answer.Operators {
						if op.UpToDate {
							continue
						}
						got.CSVs = append(got.CSVs, op.Bundle)
						got.Replaces[op.Bundle] = op.Replaces
						if op.GeneratedSubscription != "" {
							got.Generated = append(got.Generated, op.GeneratedSubscription)
						}
					}
					for _, u := range n.Answer.Updated {
						got.Updated[u.Subscription] = u.To
					}
					slices.Sort(got.CSVs)
					slices.Sort(got.Generated)
				}
				gb, _ := json.Marshal(got)
				wb, _ := json.Marshal(w)
				if string(gb) != string(wb) {
					t.Errorf("%s:\n ours %s\n OLM  %s", n.Namespace, gb, wb)
				}
				for _, s := range n.Subscriptions {
					if s.Outcome == "blocked" || s.Outcome == "not resolved" {
						failed = true
					}
				}
			}
			if wantCode := map[bool]int{false: 0, true: 1}[failed]; code != wantCode {
				t.Errorf("exit %d, want %d\n%s", code, wantCode, errOut)
			}
		})
	}
}
