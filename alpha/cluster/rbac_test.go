package cluster

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"testing/quick"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The cases of OLM v0.46.0's pkg/controller/registry/resolver/rbac_test.go,
// restated.

func TestGenerateName(t *testing.T) {
	tests := []struct {
		name string
		base string
		o    any
		want string
	}{
		{"generate", "myname", []string{"something"}, "myname-5L9sNXi3Y6mcOevFzYY3WOLIukKOeZwz1pfUlT"},
		{"truncated", strings.Repeat("name", 100), []string{"something", "else"}, "namenamenamenamenamename-6XtefCelEzfYlFOD1fARIK5vhWVfWfGHja7H3q"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := generateName(tt.base, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("generateName = %q, want %q", got, tt.want)
			}
			if len(got) > maxNameLength {
				t.Errorf("%d characters", len(got))
			}
		})
	}
}

type kubeName string

func (kubeName) Generate(r *rand.Rand, size int) reflect.Value {
	const set = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-"
	b := make([]byte, size)
	for i := range b {
		b[i] = set[r.Intn(len(set))]
	}
	return reflect.ValueOf(kubeName(b))
}

// TestGeneratedNameLength is OLM's TestGeneratesWithinRange made exact: a
// generated name has at most 63 characters, but for OLM's boundary (base
// and hash of 63 characters together are not cut: the name has 64).
func TestGeneratedNameLength(t *testing.T) {
	f := func(base kubeName, o string) bool {
		out, err := generateName(string(base), o)
		if err != nil {
			return false
		}
		hash, _ := deepHash(o)
		if len(base)+len(hash) == maxNameLength {
			return len(out) == maxNameLength+1
		}
		return len(out) <= maxNameLength && strings.HasSuffix(out, "-"+hash)
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 2000}); err != nil {
		t.Error(err)
	}
}

func TestRBACForCSV(t *testing.T) {
	const sa1, sa2, csvName = "test-service-account", "second-service-account", "test-csv.v1.1.0"
	rules := []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}}
	csv := func(ns string, perms, cperms []v1alpha1.StrategyDeploymentPermissions) *v1alpha1.ClusterServiceVersion {
		return &v1alpha1.ClusterServiceVersion{
			ObjectMeta: metav1.ObjectMeta{Name: csvName, Namespace: ns},
			Spec: v1alpha1.ClusterServiceVersionSpec{InstallStrategy: v1alpha1.NamedInstallStrategy{
				StrategyName: v1alpha1.InstallStrategyNameDeployment,
				StrategySpec: v1alpha1.StrategyDetailsDeployment{Permissions: perms, ClusterPermissions: cperms},
			}},
		}
	}
	type counts struct{ roleBindings, clusterRoleBindings int }
	// The two CSVs have the same name and cluster permissions: their
	// ClusterRoles and ClusterRoleBindings must still have different names
	// (the namespace is hashed).
	tests := []struct {
		name string
		csv  *v1alpha1.ClusterServiceVersion
		want map[string]counts
	}{
		{
			name: "RoleBindings and one ClusterRoleBinding",
			csv: csv("test-namespace", []v1alpha1.StrategyDeploymentPermissions{
				{ServiceAccountName: sa1, Rules: rules},
				{ServiceAccountName: sa1, Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"deployments"}}}},
				{ServiceAccountName: sa2, Rules: rules},
			}, []v1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: sa1, Rules: rules}}),
			want: map[string]counts{sa1: {2, 1}, sa2: {1, 0}},
		},
		{
			name: "ClusterRoleBinding",
			csv: csv("second-namespace", nil, []v1alpha1.StrategyDeploymentPermissions{
				{ServiceAccountName: sa1, Rules: rules},
				{ServiceAccountName: sa2, Rules: rules},
			}),
			want: map[string]counts{sa1: {0, 1}, sa2: {0, 1}},
		},
	}
	clusterRoleBindingNames, clusterRoleNames := map[string]bool{}, map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := RBACForCSV(tt.csv)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("%d service accounts, want %d", len(got), len(tt.want))
			}
			roleBindingNames, roleNames := map[string]bool{}, map[string]bool{}
			for _, a := range got {
				sa := a.ServiceAccount.Name
				w, ok := tt.want[sa]
				if !ok {
					t.Fatalf("service account %s", sa)
				}
				if len(a.RoleBindings) != w.roleBindings || len(a.ClusterRoleBindings) != w.clusterRoleBindings {
					t.Errorf("%s: %d RoleBindings, %d ClusterRoleBindings; want %d, %d", sa, len(a.RoleBindings), len(a.ClusterRoleBindings), w.roleBindings, w.clusterRoleBindings)
				}
				for _, rb := range a.RoleBindings {
					if len(rb.Subjects) != 1 || rb.Subjects[0].Name != sa {
						t.Errorf("RoleBinding %s subjects %v", rb.Name, rb.Subjects)
					}
					if roleBindingNames[rb.Name] {
						t.Errorf("RoleBinding %s generated twice", rb.Name)
					}
					roleBindingNames[rb.Name] = true
				}
				for _, crb := range a.ClusterRoleBindings {
					if len(crb.Subjects) != 1 || crb.Subjects[0].Name != sa {
						t.Errorf("ClusterRoleBinding %s subjects %v", crb.Name, crb.Subjects)
					}
					if clusterRoleBindingNames[crb.Name] {
						t.Errorf("ClusterRoleBinding %s generated twice", crb.Name)
					}
					clusterRoleBindingNames[crb.Name] = true
				}
				for _, r := range a.Roles {
					if roleNames[r.Name] {
						t.Errorf("Role %s generated twice", r.Name)
					}
					roleNames[r.Name] = true
				}
				for _, cr := range a.ClusterRoles {
					if clusterRoleNames[cr.Name] {
						t.Errorf("ClusterRole %s generated twice", cr.Name)
					}
					clusterRoleNames[cr.Name] = true
				}
			}
		})
	}
}

// TestRBACForCSVForm checks the parts of the generated objects OLM's tests
// leave to its e2e suite: labels, owner references, the namespace of a
// service account named only in clusterPermissions.
func TestRBACForCSVForm(t *testing.T) {
	rules := []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}}
	csv := &v1alpha1.ClusterServiceVersion{
		ObjectMeta: metav1.ObjectMeta{Name: "x.v1", Namespace: "ns"},
		Spec: v1alpha1.ClusterServiceVersionSpec{InstallStrategy: v1alpha1.NamedInstallStrategy{
			StrategyName: v1alpha1.InstallStrategyNameDeployment,
			StrategySpec: v1alpha1.StrategyDetailsDeployment{
				Permissions:        []v1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: "ns-sa", Rules: rules}},
				ClusterPermissions: []v1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: "cluster-sa", Rules: rules}},
			},
		}},
	}
	got, err := RBACForCSV(csv)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ServiceAccount.Name != "ns-sa" || got[1].ServiceAccount.Name != "cluster-sa" {
		t.Fatalf("service accounts %v", got)
	}
	if got[0].ServiceAccount.Namespace != "ns" || got[1].ServiceAccount.Namespace != "" {
		t.Errorf("namespaces %q, %q", got[0].ServiceAccount.Namespace, got[1].ServiceAccount.Namespace)
	}
	ref := got[1].ServiceAccount.OwnerReferences
	if len(ref) != 1 || ref[0].APIVersion != "operators.coreos.com/v1alpha1" || ref[0].Kind != "ClusterServiceVersion" ||
		ref[0].Name != "x.v1" || *ref[0].Controller || *ref[0].BlockOwnerDeletion {
		t.Errorf("owner references %+v", ref)
	}
	role, cr := got[0].Roles[0], got[1].ClusterRoles[0]
	for _, labels := range []map[string]string{role.Labels, cr.Labels, got[0].RoleBindings[0].Labels, got[1].ClusterRoleBindings[0].Labels} {
		if labels["olm.owner"] != "x.v1" || labels["olm.owner.namespace"] != "ns" || labels["olm.owner.kind"] != "ClusterServiceVersion" || labels["olm.permissions.hash"] == "" {
			t.Errorf("labels %v", labels)
		}
	}
	if role.Labels["olm.permissions.hash"] != cr.Labels["olm.permissions.hash"] {
		t.Error("the same rules hash differently")
	}
	if len(cr.OwnerReferences) != 0 || got[1].ClusterRoleBindings[0].Namespace != "ns" {
		t.Errorf("ClusterRole owner references %v, ClusterRoleBinding namespace %q", cr.OwnerReferences, got[1].ClusterRoleBindings[0].Namespace)
	}
	if !strings.HasPrefix(role.Name, "x.v1-ns-sa-") || !strings.HasPrefix(cr.Name, "x.v1-") {
		t.Errorf("names %s, %s", role.Name, cr.Name)
	}

	csv.Spec.InstallStrategy.StrategyName = "helm"
	if _, err := RBACForCSV(csv); err == nil || err.Error() != "unrecognized install strategy" {
		t.Errorf("error %v", err)
	}
}
