package cluster

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var updatePermissions = flag.Bool("update-permissions", false, "rewrite testdata/plan/permissions.txt")

func permOG(ns string, spec operatorsv1.OperatorGroupSpec, status ...string) *operatorsv1.OperatorGroup {
	return &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Name: "og", Namespace: ns}, Spec: spec,
		Status: operatorsv1.OperatorGroupStatus{Namespaces: status}}
}

func permissionsOf(t *testing.T, steps []*Step, s *State) []OperatorPermissions {
	t.Helper()
	ps, err := Permissions(steps, s)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func ruleFlagsOf(p OperatorPermissions) []string {
	var out []string
	for _, r := range p.Rules {
		out = append(out, r.Scope+" "+r.Source+" "+r.ServiceAccount+": "+strings.Join(r.Flags, ","))
	}
	return out
}

func TestPermissionsFlags(t *testing.T) {
	f := loadPlanFixture(t)
	ps := permissionsOf(t, planOf(t, f, "ns", "cluster-only.v1.1.0", "b.v1"), nil)
	// In the plan's order (OrderSteps keeps the CSVs' order).
	if len(ps) != 2 || ps[0].CSV != "cluster-only.v1.1.0" || ps[1].CSV != "b.v1" {
		t.Fatalf("operators %+v", ps)
	}
	ps[0], ps[1] = ps[1], ps[0]
	got := ruleFlagsOf(ps[1])
	want := []string{
		"cluster clusterPermissions test-service-account: all-access,wildcard-verbs,wildcard-resources,wildcard-api-groups,secrets,escalate,bind,impersonate,rbac-write",
		"cluster clusterPermissions test-service-account: non-resource-urls",
		"cluster clusterPermissions second-service-account: impersonate",
		"cluster clusterPermissions second-service-account: escalate,bind",
		"cluster clusterPermissions second-service-account: secrets",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rules:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if p := ps[1]; p.ClusterRules != 5 || p.NamespacedRules != 0 || p.Package != "cluster-only" || p.Version != "1.1.0" ||
		!slices.Equal(p.ServiceAccounts, []string{"test-service-account", "second-service-account"}) {
		t.Errorf("summary %+v", p)
	}
	var flags []string
	for _, fd := range ps[1].Findings {
		flags = append(flags, fd.Flag)
	}
	// all-access is reported once for its rule; the others in order of reach.
	if want := []string{"all-access", "escalate", "bind", "impersonate", "secrets", "non-resource-urls"}; !slices.Equal(flags, want) {
		t.Errorf("findings %q, want %q", flags, want)
	}

	got = ruleFlagsOf(ps[0])
	want = []string{
		"namespace permissions b-operator: wildcard-verbs,secrets",
		"namespace permissions b-operator: ",
		"cluster bundle ClusterRole b-metrics-reader : non-resource-urls",
		"namespace bundle RoleBinding test-rb : bundle-binding",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rules:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(ps[0].CRDs) != 1 || ps[0].CRDs[0].Name != "widgets.example.com" || ps[0].CRDs[0].Action != ActionUnknown {
		t.Errorf("CRDs %+v", ps[0].CRDs)
	}
}

func TestPermissionsScope(t *testing.T) {
	f := loadPlanFixture(t)
	steps := planOf(t, f, "ns", "a.v1")
	tests := []struct {
		name       string
		group      *operatorsv1.OperatorGroup
		all, known bool
		targets    []string
		nsScope    string
	}{
		{"all namespaces (status)", permOG("ns", operatorsv1.OperatorGroupSpec{}, ""), true, true, nil, "cluster"},
		{"all namespaces (no selector)", permOG("ns", operatorsv1.OperatorGroupSpec{}), true, true, nil, "cluster"},
		{"own namespace", permOG("ns", operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{"ns"}}), false, true, []string{"ns"}, "namespace"},
		{"several namespaces (status)", permOG("ns", operatorsv1.OperatorGroupSpec{}, "b", "a"), false, true, []string{"a", "b"}, "namespace"},
		{"selector without status", permOG("ns", operatorsv1.OperatorGroupSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"x": "y"}}}), false, false, nil, "namespace"},
		{"no OperatorGroup", nil, false, false, nil, "namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &State{}
			if tt.group != nil {
				s.OperatorGroups = []*operatorsv1.OperatorGroup{tt.group}
			}
			p := permissionsOf(t, steps, s)[0]
			if p.Scope.AllNamespaces != tt.all || p.Scope.Known != tt.known || !slices.Equal(p.Scope.TargetNamespaces, tt.targets) {
				t.Errorf("scope %+v", p.Scope)
			}
			for _, r := range p.Rules {
				if r.Source == "permissions" && r.Scope != tt.nsScope {
					t.Errorf("namespaced rule in scope %s", r.Scope)
				}
			}
			wantCluster := 1
			if tt.all {
				wantCluster = 2
			}
			if p.ClusterRules != wantCluster || p.ClusterRules+p.NamespacedRules != 2 {
				t.Errorf("%d cluster-wide, %d namespaced rules", p.ClusterRules, p.NamespacedRules)
			}
		})
	}
}

// TestPermissionsText writes the summary of a plan against a state, the
// example of docs/cluster.md: testdata/plan/permissions.txt
// (-update-permissions rewrites it).
func TestPermissionsText(t *testing.T) {
	f := loadPlanFixture(t)
	s := &State{
		OperatorGroups: []*operatorsv1.OperatorGroup{permOG("operators", operatorsv1.OperatorGroupSpec{}, "")},
		CRDs:           []*apiextensionsv1.CustomResourceDefinition{planCRD("things.example.com", "v1alpha1")},
	}
	ps := permissionsOf(t, planOf(t, f, "operators", "a.v1", "b.v1", "cluster-only.v1.1.0"), s)
	var buf bytes.Buffer
	if err := WritePermissionsText(&buf, ps); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "plan", "permissions.txt")
	if *updatePermissions {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if buf.String() != string(want) {
		t.Errorf("text:\n%s\nwant (%s):\n%s", buf.String(), path, want)
	}
	// The data has camelCase keys.
	js, err := json.Marshal(ps[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"csv":`, `"serviceAccounts":`, `"clusterRules":`, `"namespacedRules":`, `"allNamespaces":`, `"findings":`, `"crds":`} {
		if !bytes.Contains(js, []byte(k)) {
			t.Errorf("JSON has no %s: %s", k, js)
		}
	}
}

// TestPermissionsBundleBindings covers the RBAC objects bundles carry
// besides the install strategy: real catalogs bind cluster-admin (8
// bundles of certified-operators-v4.16), OpenShift's privileged SCC (26)
// and system:image-puller (82), and bind their own ClusterRoles.
func TestPermissionsBundleBindings(t *testing.T) {
	f := loadPlanFixture(t)
	steps := planOf(t, f, "ns", "a.v1")
	add := func(kind, name, manifest string) {
		steps = append(steps, &Step{Resolving: "a.v1", Resource: v1alpha1.StepResource{Kind: kind, Name: name, Manifest: manifest}})
	}
	add("ClusterRoleBinding", "a-admin", `{"kind":"ClusterRoleBinding","metadata":{"name":"a-admin"},"roleRef":{"kind":"ClusterRole","name":"cluster-admin"},"subjects":[{"kind":"ServiceAccount","name":"a-sa","namespace":"vendor-ns"}]}`)
	add("RoleBinding", "a-scc", `{"kind":"RoleBinding","metadata":{"name":"a-scc"},"roleRef":{"kind":"ClusterRole","name":"system:openshift:scc:privileged"},"subjects":[{"kind":"ServiceAccount","name":"a-sa"}]}`)
	add("ClusterRole", "a-reader", `{"kind":"ClusterRole","metadata":{"name":"a-reader"},"rules":[{"apiGroups":[""],"resources":["secrets"],"verbs":["list"]}]}`)
	add("RoleBinding", "a-reader", `{"kind":"RoleBinding","metadata":{"name":"a-reader"},"roleRef":{"kind":"ClusterRole","name":"a-reader"},"subjects":[{"kind":"ServiceAccount","name":"a-sa","namespace":"ns"}]}`)
	p := permissionsOf(t, steps, nil)[0]
	got := ruleFlagsOf(p)
	want := []string{
		"cluster clusterPermissions test-sa: ",
		"namespace permissions test-sa: ",
		// A ClusterRole bound by a RoleBinding grants in the namespace only.
		"namespace bundle ClusterRole a-reader : secrets",
		"cluster bundle ClusterRoleBinding a-admin : all-access,bundle-binding",
		"namespace bundle RoleBinding a-scc : bundle-binding",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rules:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var texts []string
	for _, fd := range p.Findings {
		texts = append(texts, fd.Text)
	}
	wantTexts := []string{
		"bundle ClusterRoleBinding a-admin binds ClusterRole cluster-admin (every verb on every resource) cluster-wide to ServiceAccount vendor-ns/a-sa (in namespace vendor-ns, not the operator's ns: the bundle names it)",
		"bundle RoleBinding a-scc binds ClusterRole system:openshift:scc:privileged, which the bundle does not carry, in namespace ns to ServiceAccount a-sa (use of OpenShift's privileged SecurityContextConstraints: privileged pods, host access)",
		"bundle ClusterRole a-reader may list secrets in namespace ns",
	}
	if !slices.Equal(texts, wantTexts) {
		t.Errorf("findings:\n%s\nwant\n%s", strings.Join(texts, "\n"), strings.Join(wantTexts, "\n"))
	}
	if r := p.Rules[2]; !slices.Equal(r.BoundTo, []string{"ServiceAccount ns/a-sa (by RoleBinding a-reader)"}) {
		t.Errorf("bound to %q", r.BoundTo)
	}
}

func TestKnownRole(t *testing.T) {
	for ref, want := range map[string]string{
		"ClusterRole system:openshift:scc:anyuid":      "anyuid SecurityContextConstraints: pods may run as any user",
		"ClusterRole system:openshift:scc:hostnetwork": "use of OpenShift's hostnetwork SecurityContextConstraints",
		"ClusterRole view":                             "not secrets",
		"Role system:openshift:scc:anyuid":             "",
		"ClusterRole vendor-role":                      "",
	} {
		got := knownRole(ref)
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("knownRole(%s) = %q", ref, got)
		}
	}
}
