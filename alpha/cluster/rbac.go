package cluster

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The RBAC OLM's catalog operator generates from a CSV's install
// strategy when it turns a bundle into InstallPlan steps
// (operator-lifecycle-manager v0.46.0,
// pkg/controller/registry/resolver/rbac.go: RBACForClusterServiceVersion),
// with its names, labels and owner references.

// maxNameLength is the length generated names are cut to (OLM's
// maxNameLength; see generateName for the one case that exceeds it).
const maxNameLength = 63

// The labels OLM puts on generated RBAC (ownerutil.OwnerLabel and the
// content hash).
const (
	labelOwner          = "olm.owner"
	labelOwnerNamespace = "olm.owner.namespace"
	labelOwnerKind      = "olm.owner.kind"
	labelPermissionHash = "olm.permissions.hash"
)

// ServiceAccountRBAC is what OLM generates for one service account of a
// CSV: the account itself, a Role and RoleBinding per entry of
// spec.install.spec.permissions naming it, a ClusterRole and
// ClusterRoleBinding per entry of clusterPermissions naming it.
type ServiceAccountRBAC struct {
	ServiceAccount      *corev1.ServiceAccount
	Roles               []*rbacv1.Role
	RoleBindings        []*rbacv1.RoleBinding
	ClusterRoles        []*rbacv1.ClusterRole
	ClusterRoleBindings []*rbacv1.ClusterRoleBinding
}

// RBACForCSV returns the RBAC OLM generates for csv, one entry per service
// account in the order the accounts first appear in permissions, then in
// clusterPermissions. (OLM keeps them in a map, so its InstallPlans list
// the service accounts in a random order; within an account the order is
// OLM's.) csv must carry its namespace, apiVersion and kind: they go into
// the names, labels and owner references.
func RBACForCSV(csv *v1alpha1.ClusterServiceVersion) ([]*ServiceAccountRBAC, error) {
	if csv.Spec.InstallStrategy.StrategyName != v1alpha1.InstallStrategyNameDeployment {
		// OLM's install.StrategyResolver.UnmarshalStrategy.
		return nil, fmt.Errorf("unrecognized install strategy")
	}
	spec := &csv.Spec.InstallStrategy.StrategySpec
	var out []*ServiceAccountRBAC
	bySA := map[string]*ServiceAccountRBAC{}
	owner := csvOwnerReference(csv)
	account := func(name string, namespaced bool) *ServiceAccountRBAC {
		if a := bySA[name]; a != nil {
			return a
		}
		sa := &corev1.ServiceAccount{}
		sa.Name = name
		if namespaced {
			// An account named in permissions lives in the CSV's
			// namespace; one named only in clusterPermissions gets no
			// namespace (the plan's namespace is set when it is applied).
			sa.Namespace = csv.Namespace
		}
		sa.OwnerReferences = []metav1.OwnerReference{owner}
		a := &ServiceAccountRBAC{
			ServiceAccount:      sa,
			Roles:               []*rbacv1.Role{},
			RoleBindings:        []*rbacv1.RoleBinding{},
			ClusterRoles:        []*rbacv1.ClusterRole{},
			ClusterRoleBindings: []*rbacv1.ClusterRoleBinding{},
		}
		bySA[name] = a
		out = append(out, a)
		return a
	}

	for _, p := range spec.Permissions {
		a := account(p.ServiceAccountName, true)
		name, err := generateName(csv.Name+"-"+p.ServiceAccountName, struct {
			Name       string                                 `json:"name,omitempty"`
			Permission v1alpha1.StrategyDeploymentPermissions `json:"permission"`
		}{Name: csv.Name, Permission: p})
		if err != nil {
			return nil, err
		}
		role := &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{
				Name:            name,
				Namespace:       csv.Namespace,
				OwnerReferences: []metav1.OwnerReference{owner},
				Labels:          csvOwnerLabels(csv),
			},
			Rules: p.Rules,
		}
		hash, err := rulesHash(p.Rules)
		if err != nil {
			return nil, fmt.Errorf("failed to hash permission rules: %w", err)
		}
		role.Labels[labelPermissionHash] = hash
		a.Roles = append(a.Roles, role)

		binding := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{
				Name:            name,
				Namespace:       csv.Namespace,
				OwnerReferences: []metav1.OwnerReference{owner},
				Labels:          csvOwnerLabels(csv),
			},
			RoleRef:  rbacv1.RoleRef{Kind: "Role", Name: name, APIGroup: rbacv1.GroupName},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: p.ServiceAccountName, Namespace: csv.Namespace}},
		}
		if hash, err = bindingHash(binding.RoleRef, binding.Subjects); err != nil {
			return nil, fmt.Errorf("failed to hash binding content: %w", err)
		}
		binding.Labels[labelPermissionHash] = hash
		a.RoleBindings = append(a.RoleBindings, binding)
	}

	for _, p := range spec.ClusterPermissions {
		a := account(p.ServiceAccountName, false)
		// The namespace is part of the hashed object: the same CSV
		// installed in two namespaces gets two sets of ClusterRoles.
		name, err := generateName(csv.Name, struct {
			Name       string                                 `json:"name,omitempty"`
			Namespace  string                                 `json:"namespace,omitempty"`
			Permission v1alpha1.StrategyDeploymentPermissions `json:"permission"`
		}{Name: csv.Name, Namespace: csv.Namespace, Permission: p})
		if err != nil {
			return nil, err
		}
		role := &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: csvOwnerLabels(csv)},
			Rules:      p.Rules,
		}
		hash, err := rulesHash(p.Rules)
		if err != nil {
			return nil, fmt.Errorf("failed to hash permission rules: %w", err)
		}
		role.Labels[labelPermissionHash] = hash
		a.ClusterRoles = append(a.ClusterRoles, role)

		binding := &rbacv1.ClusterRoleBinding{
			// OLM sets a namespace on this cluster-scoped object (the API
			// server drops it); it is in the step's manifest.
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: csv.Namespace, Labels: csvOwnerLabels(csv)},
			RoleRef:    rbacv1.RoleRef{Kind: "ClusterRole", Name: name, APIGroup: rbacv1.GroupName},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: p.ServiceAccountName, Namespace: csv.Namespace}},
		}
		if hash, err = bindingHash(binding.RoleRef, binding.Subjects); err != nil {
			return nil, fmt.Errorf("failed to hash binding content: %w", err)
		}
		binding.Labels[labelPermissionHash] = hash
		a.ClusterRoleBindings = append(a.ClusterRoleBindings, binding)
	}
	return out, nil
}

// generateName is OLM's name for generated RBAC: base, a dash and the
// base62 SHA-224 of o's JSON (as json.Encoder writes it, with its line
// break), base cut so that the name fits in maxNameLength. Like OLM's, the
// cut only happens when base and hash together exceed 63 characters: when
// they make exactly 63, the name (with its dash) has 64.
func generateName(base string, o any) (string, error) {
	hash, err := deepHash(o)
	if err != nil {
		return "", err
	}
	if len(base)+len(hash) > maxNameLength {
		base = base[:maxNameLength-len(hash)-1]
	}
	return base + "-" + hash, nil
}

// deepHash is OLM's hashutil.DeepHashObject: base62 of the SHA-224 of
// the object's JSON encoding, line break included.
func deepHash(o any) (string, error) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(o); err != nil {
		return "", fmt.Errorf("couldn't encode object: %w", err)
	}
	return base62(sha256.Sum224(buf.Bytes())), nil
}

// rulesHash is the olm.permissions.hash label of a Role or ClusterRole
// (OLM's PolicyRuleHashLabelValue): json.Marshal, no line break.
func rulesHash(rules []rbacv1.PolicyRule) (string, error) {
	raw, err := json.Marshal(rules)
	if err != nil {
		return "", err
	}
	return base62(sha256.Sum224(raw)), nil
}

// bindingHash is the olm.permissions.hash label of a binding (OLM's
// RoleReferenceAndSubjectHashLabelValue): the JSON of a struct whose
// fields carry no tags.
func bindingHash(ref rbacv1.RoleRef, subjects []rbacv1.Subject) (string, error) {
	raw, err := json.Marshal(&struct {
		RoleRef  rbacv1.RoleRef
		Subjects []rbacv1.Subject
	}{ref, subjects})
	if err != nil {
		return "", err
	}
	return base62(sha256.Sum224(raw)), nil
}

func base62(sum [sha256.Size224]byte) string {
	var i big.Int
	i.SetBytes(sum[:])
	return i.Text(62)
}

// ownerLabels are the labels OLM puts on objects generated for a CSV.
func csvOwnerLabels(csv *v1alpha1.ClusterServiceVersion) map[string]string {
	return map[string]string{
		labelOwner:          csv.Name,
		labelOwnerNamespace: csv.Namespace,
		labelOwnerKind:      v1alpha1.ClusterServiceVersionKind,
	}
}

// ownerReference is the non-blocking, non-controller reference OLM puts
// on objects generated for a CSV: apiVersion and kind as the CSV states
// them, its name and UID (none, for a CSV that does not exist yet, unless
// the bundle's CSV carries one).
func csvOwnerReference(csv *v1alpha1.ClusterServiceVersion) metav1.OwnerReference {
	apiVersion, kind := csvGVK(csv).ToAPIVersionAndKind()
	no := false
	return metav1.OwnerReference{
		APIVersion:         apiVersion,
		Kind:               kind,
		Name:               csv.Name,
		UID:                csv.UID,
		BlockOwnerDeletion: &no,
		Controller:         &no,
	}
}
