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

// TestQueryClusterWhatIf: a hypothetical Subscription (--subscribe) is
// resolved with the namespace's, and the answer says what it changes.
func TestQueryClusterWhatIf(t *testing.T) {
	state := filepath.Join(goldenRoot, "cluster", "states", "dependency-installed.yaml")
	args := append([]string{"alpha", "query", "cluster", "--state", state, "--subscribe", "team-e/etcd-v3"}, clusterCatalogs()...)
	code, out, errOut := run(t, args...)
	// etcd-v3 needs EtcdCluster v1beta3, which only etcd's alpha channel
	// provides; the installed etcd (stable) also provides EtcdCluster
	// v1beta2, and one package gives one bundle: blocked.
	for _, want := range []string{"what the new Subscriptions change:", "new Subscription etcd-v3 (etcd-v3): blocked (the namespace does not resolve)", "Subscription etcd: stays on etcdoperator.v0.9.4 before, blocked (the namespace does not resolve) with the new Subscriptions"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s%s", want, out, errOut)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	code, out, errOut = run(t, append([]string{"alpha", "query", "cluster", "--state", state, "--subscribe", "team-e/logging", "-o", "json"}, clusterCatalogs()...)...)
	var rep action.ClusterReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Fatalf("exit %d, %v\n%s%s", code, err, out, errOut)
	}
	n := rep.Namespaces[0]
	if len(rep.Hypothetical) != 1 || rep.Hypothetical[0].Spec.CatalogSource != "community" || len(n.Before) != 2 || len(n.Subscriptions) != 3 {
		t.Errorf("hypothetical %+v, before %d, after %d", rep.Hypothetical, len(n.Before), len(n.Subscriptions))
	}
}

// TestQueryClusterPlan: --plan gives the InstallPlan's steps, what they do
// against the state and the permissions, for a bundle that carries its
// objects (alpha/cluster's plan fixture).
func TestQueryClusterPlan(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "..", "alpha", "cluster", "testdata", "plan")
	code, out, errOut := run(t, "alpha", "query", "cluster", "--state", filepath.Join(dir, "olm-resolve-state.yaml"),
		"--catalog", "plan-ns/fixture="+filepath.Join(dir, "catalog"), "--catalog", "upgrade-ns/fixture="+filepath.Join(dir, "catalog"), "--plan", "-n", "upgrade-ns")
	for _, want := range []string{"upgrades a.v1 -> a.v2", "the InstallPlan's steps:", "ClusterServiceVersion a.v2 (operators.coreos.com/v1alpha1) for a.v2: create",
		"ClusterRole a.v2-", "permissions:", "a.v2 (package a 2.0.0) in namespace upgrade-ns, replacing a.v1"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s%s", want, out, errOut)
		}
	}
	if code != 1 { // the fixture's CSVs support no install mode: their OperatorGroup fails them
		t.Errorf("exit %d, want 1\n%s", code, out)
	}
}

// TestQueryClusterErrors: wrong questions and inputs exit 2, in words.
func TestQueryClusterErrors(t *testing.T) {
	state := filepath.Join(goldenRoot, "cluster", "states", "several-subscriptions.yaml")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "give the cluster's objects: --state PATH"},
		{[]string{"--state", state, "--catalog", "olm/comunity=x"}, `the state has no CatalogSource olm/comunity`},
		{[]string{"--state", state, "--catalog", "comunity=x"}, `did you mean community?`},
		{[]string{"--state", state, "--subscribe", "etcd"}, "expected NAMESPACE/PACKAGE"},
		{[]string{"--state", state, "--subscribe", "team-a/etcd,chanel=alpha"}, `unknown option "chanel"`},
		{[]string{"--state", filepath.Join(goldenRoot, "cluster", "nope.yaml")}, "no such file or directory"},
		{[]string{"--state", state, "-n", "team-b"}, `namespace "team-b" has no Subscriptions in the state`},
		{[]string{"--state", state, "-o", "table"}, `invalid --output value "table"`},
	} {
		code, out, errOut := run(t, append([]string{"alpha", "query", "cluster"}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, want 2 and %q\n%s%s", tc.args, code, tc.want, out, errOut)
		}
	}
}

// TestQueryClusterODLM: ODLM's sample OperandRegistry and OperandRequest
// (alpha/cluster/testdata/odlm) add the Subscriptions ODLM would create,
// jaeger in openshift-operators (installMode cluster), and each is
// resolved in its namespace.
func TestQueryClusterODLM(t *testing.T) {
	odlm := filepath.Join("..", "..", "..", "..", "alpha", "cluster", "testdata", "odlm")
	code, out, errOut := run(t, "alpha", "query", "cluster", "--state", filepath.Join(goldenRoot, "cluster", "states-odlm.yaml"),
		"--catalog", "community-operators="+filepath.Join(goldenRoot, "install", "community"),
		"--operand-registry", filepath.Join(odlm, "odlm-sample-operandregistry.yaml"), "--operand-registry", filepath.Join(odlm, "odlm-sample-operandrequest.yaml"))
	for _, want := range []string{
		"OperandRequest default/example-service, operand jaeger: create Subscription openshift-operators/jaeger",
		"== namespace openshift-operators", `package "jaeger" is not in catalog community-operators`,
		"== namespace default", "Subscription mongodb-atlas-kubernetes (package mongodb-atlas-kubernetes, channel stable, from openshift-marketplace/community-operators): blocked",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s%s", want, out, errOut)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
}
