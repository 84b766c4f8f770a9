package cli

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/install"
	"github.com/fastopm/fastopm/internal/kubetest"
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

// clusterServer serves the objects of a state file from an in-process API
// endpoint (TLS, a bearer token, pages of two) and writes a kubeconfig
// pointing at it.
func clusterServer(t *testing.T, state string) (kubeconfig string, lists *kubetest.Lists) {
	t.Helper()
	b, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	l := kubetest.NewLists()
	l.ServeOLM()
	l.PageSize, l.Token = 2, "t0ken"
	if err := l.AddYAML(b); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(l)
	t.Cleanup(srv.Close)
	kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, kubetest.Kubeconfig(srv.URL, kubetest.CertPEM(srv), l.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig, l
}

// withoutState is a JSON answer without its "state" line, which says
// where the objects were read.
func withoutState(t *testing.T, out string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	delete(m, "state")
	b, _ := json.Marshal(m)
	return string(b)
}

// TestQueryClusterKubeconfig: every state of testdata/cluster read from a
// live cluster (an in-process API endpoint serving its objects) gives the
// answer the state's file gives.
func TestQueryClusterKubeconfig(t *testing.T) {
	t.Parallel()
	states, _ := filepath.Glob(filepath.Join(goldenRoot, "cluster", "states", "*.yaml"))
	if len(states) < 9 {
		t.Fatalf("%d states", len(states))
	}
	for _, state := range states {
		name := strings.TrimSuffix(filepath.Base(state), ".yaml")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cats := clusterCatalogs()
			if name == "openshift-operators" {
				cats = []string{"--catalog", "olm/many=" + filepath.Join(goldenRoot, "cluster", "catalogs", "many")}
			}
			kc, l := clusterServer(t, state)
			args := append([]string{"alpha", "query", "cluster", "-o", "json", "--plan"}, cats...)
			fcode, fout, ferr := run(t, append(args, "--state", state)...)
			lcode, lout, lerr := run(t, append(args, "--kubeconfig", kc)...)
			if fcode != lcode || withoutState(t, fout) != withoutState(t, lout) {
				t.Fatalf("--state: exit %d %s\n%s\n--kubeconfig: exit %d %s\n%s", fcode, ferr, fout, lcode, lerr, lout)
			}
			if !strings.Contains(lout, `"state": "cluster https://127.0.0.1:`) {
				t.Errorf("state line of the cluster's answer:\n%s", lout)
			}
			if n := len(l.Requests()); n < 7 {
				t.Errorf("%d requests", n)
			}
		})
	}
}

// TestQueryClusterKubeconfigFlags: which kubeconfig is read (--kubeconfig,
// else $KUBECONFIG), --context, and the errors: --state with
// --kubeconfig, no kubeconfig at all, one that cannot be read, a cluster
// without OLM.
func TestQueryClusterKubeconfigFlags(t *testing.T) {
	state := filepath.Join(goldenRoot, "cluster", "states", "several-subscriptions.yaml")
	kc, _ := clusterServer(t, state)
	cats := clusterCatalogs()
	query := func(args ...string) (int, string, string) {
		t.Helper()
		return run(t, append(append([]string{"alpha", "query", "cluster"}, cats...), args...)...)
	}
	want := "upgrades etcdoperator.v0.9.2 -> etcdoperator.v0.9.4"
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBECONFIG", "")

	if code, out, errOut := query("--kubeconfig", kc); code != 0 || !strings.Contains(out, want) {
		t.Errorf("--kubeconfig: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := query(); code != 2 || !strings.Contains(errOut, "give the cluster's objects: --state PATH, or --kubeconfig FILE for a live cluster (no kubeconfig was found") {
		t.Errorf("no kubeconfig: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := query("--kubeconfig", kc, "--state", state); code != 2 || !strings.Contains(errOut, "--state and --kubeconfig (--context) do not go together") {
		t.Errorf("both: exit %d\n%s%s", code, out, errOut)
	}
	missing := filepath.Join(t.TempDir(), "none")
	if code, out, errOut := query("--kubeconfig", missing); code != 2 || !strings.Contains(errOut, "--kubeconfig "+missing+": stat ") {
		t.Errorf("missing kubeconfig: exit %d\n%s%s", code, out, errOut)
	}

	// $KUBECONFIG without --kubeconfig; --kubeconfig over $KUBECONFIG.
	t.Setenv("KUBECONFIG", kc)
	if code, out, errOut := query(); code != 0 || !strings.Contains(out, want) {
		t.Errorf("$KUBECONFIG: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := query("--kubeconfig", missing); code != 2 || !strings.Contains(errOut, "stat ") {
		t.Errorf("--kubeconfig over $KUBECONFIG: exit %d\n%s%s", code, out, errOut)
	}
	t.Setenv("KUBECONFIG", "")

	// A kubeconfig whose current context is not the cluster: --context.
	b, err := os.ReadFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(other, []byte(strings.Replace(string(b), "current-context: kubetest", "current-context: elsewhere", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := query("--kubeconfig", other); code != 2 || !strings.Contains(errOut, `context was not found for specified context: elsewhere`) {
		t.Errorf("unknown current context: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := query("--kubeconfig", other, "--context", "kubetest"); code != 0 || !strings.Contains(out, want) {
		t.Errorf("--context: exit %d\n%s%s", code, out, errOut)
	}

	// A cluster without OLM.
	l := kubetest.NewLists()
	l.Serve("v1", "namespaces", "Namespace")
	srv := httptest.NewServer(l)
	t.Cleanup(srv.Close)
	bare := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(bare, kubetest.Kubeconfig(srv.URL, nil, ""), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := query("--kubeconfig", bare); code != 2 || !strings.Contains(errOut, "does not serve catalogsources.operators.coreos.com (operators.coreos.com/v1alpha1): OLM (v0) is not installed there") {
		t.Errorf("no OLM: exit %d\n%s%s", code, out, errOut)
	}
}

// TestQueryClusterCatalogOfManyFiles: a catalog of many files, which the
// catalog walk reads in parallel, gives the answer of the same catalog in
// one file: a hundred and twenty packages, each installed by a Subscription of one
// namespace (with -race: the InstallPlan's bundles were once gathered by
// several goroutines without a lock, which crashed on the real catalogs).
func TestQueryClusterCatalogOfManyFiles(t *testing.T) {
	t.Parallel()
	const n = 120
	var blobs []string
	state := "apiVersion: operators.coreos.com/v1alpha1\nkind: CatalogSource\nmetadata: {name: many, namespace: olm}\nspec: {sourceType: grpc}\n" +
		"---\napiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata: {name: og, namespace: ns1}\nspec: {}\n"
	for i := range n {
		p := fmt.Sprintf("p%02d", i)
		blobs = append(blobs,
			fmt.Sprintf(`{"schema":"olm.package","name":%q,"defaultChannel":"stable"}`, p),
			fmt.Sprintf(`{"schema":"olm.channel","package":%q,"name":"stable","entries":[{"name":"%s.v1"}]}`, p, p),
			fmt.Sprintf(`{"schema":"olm.bundle","package":%q,"name":"%s.v1","image":"quay.io/example/%s-bundle:v1","properties":[{"type":"olm.package","value":{"packageName":%q,"version":"1.0.0"}},`+
				`{"type":"olm.csv.metadata","value":{"installModes":[{"type":"AllNamespaces","supported":true}]}}]}`, p, p, p, p))
		state += fmt.Sprintf("---\napiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata: {name: %s, namespace: ns1}\nspec: {name: %s, source: many, sourceNamespace: olm}\n", p, p)
	}
	dir := t.TempDir()
	one, many := filepath.Join(dir, "one"), filepath.Join(dir, "many")
	for _, d := range []string{one, many} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(one, "catalog.json"), []byte(strings.Join(blobs, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, b := range blobs {
		if err := os.WriteFile(filepath.Join(many, fmt.Sprintf("blob-%03d.json", i)), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	statePath := filepath.Join(dir, "state.yaml")
	if err := os.WriteFile(statePath, []byte(state), 0o644); err != nil {
		t.Fatal(err)
	}
	answer := func(catalog string) string {
		t.Helper()
		code, out, errOut := run(t, "alpha", "query", "cluster", "--state", statePath, "-o", "json", "--plan", "--catalog", "olm/many="+catalog)
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil || code != 0 {
			t.Fatalf("exit %d: %v\n%s%s", code, err, out, errOut)
		}
		b, _ := json.Marshal(m["namespaces"])
		return string(b)
	}
	a, b := answer(one), answer(many)
	if a != b || strings.Count(b, `"outcome":"installs"`) != n {
		t.Errorf("one file:\n%s\nmany files:\n%s", a, b)
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
		{[]string{"--state", state, "--subscribe", "team-a/etcd,source=olm/community"}, "source is a CatalogSource's name; for community in namespace olm give source=community,sourceNamespace=olm"},
		{[]string{"--state", state, "--subscribe", "team-a/etcd,source=x/y/z"}, `source "x/y/z" is not a CatalogSource's name`},
		{[]string{"--state", state, "--subscribe", "team-a/etcd,sourceNamespace=Olm"}, `sourceNamespace "Olm": a lowercase RFC 1123 label`},
		{[]string{"--state", state, "--subscribe", "Team_A/etcd"}, `namespace "Team_A": a lowercase RFC 1123 label`},
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
