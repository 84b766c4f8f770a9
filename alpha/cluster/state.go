// Package cluster answers questions about a cluster as it is: the
// objects OLM reads (its Subscriptions, installed ClusterServiceVersions,
// CatalogSources, OperatorGroups, InstallPlans, CRDs and Namespaces), read
// from files as kubectl writes them, from an OpenShift must-gather, or
// from a live cluster; what OLM's next sync does in each namespace with
// Subscriptions (alpha/install's resolver, over the namespace as a
// whole); whether each CSV fits its OperatorGroup; what the InstallPlan
// would hold; and what ODLM's OperandRegistries would subscribe to.
//
// It follows operator-lifecycle-manager v0.46.0 (docs/cluster.md).
package cluster

import (
	"fmt"
	"slices"
	"strings"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// State is what a cluster holds of the kinds OLM reads, each object with
// only the fields the answers need (the rest, a CSV's install strategy and
// descriptions, an InstallPlan's manifests, is dropped as it is read).
type State struct {
	Namespaces     []*corev1.Namespace
	CatalogSources []*v1alpha1.CatalogSource
	Subscriptions  []*v1alpha1.Subscription
	// CSVs are the ClusterServiceVersions, but for the copies OLM makes
	// of an operator's CSV in the namespaces its OperatorGroup targets
	// (counted in Copied): OLM's resolution skips them.
	CSVs           []*v1alpha1.ClusterServiceVersion
	OperatorGroups []*operatorsv1.OperatorGroup
	InstallPlans   []*v1alpha1.InstallPlan
	CRDs           []*apiextensionsv1.CustomResourceDefinition

	// Copied counts the copied CSVs skipped; Skipped counts the objects
	// of other kinds, by kind.
	Copied  int
	Skipped map[string]int
	// Files counts the files read.
	Files int
	// Cluster is the API server the state was read from (ReadCluster);
	// "" when it was read from files.
	Cluster string

	// origin says where each object was read: "FILE", "FILE:LINE" for a
	// document of several, "FILE:LINE: items[N]" in a YAML List (the
	// item's line), "FILE: items[N]" in a JSON one.
	origin map[ObjectKey]string
}

// ObjectKey names an object: its kind, namespace (empty for
// cluster-scoped kinds) and name.
type ObjectKey struct {
	Kind, Namespace, Name string
}

func (k ObjectKey) String() string {
	if k.Namespace == "" {
		return k.Kind + " " + k.Name
	}
	return k.Kind + " " + k.Namespace + "/" + k.Name
}

// Origin says where the object was read ("" when it was not).
func (s *State) Origin(k ObjectKey) string { return s.origin[k] }

// The kinds read.
const (
	KindNamespace      = "Namespace"
	KindCatalogSource  = v1alpha1.CatalogSourceKind
	KindSubscription   = v1alpha1.SubscriptionKind
	KindCSV            = v1alpha1.ClusterServiceVersionKind
	KindOperatorGroup  = operatorsv1.OperatorGroupKind
	KindInstallPlan    = v1alpha1.InstallPlanKind
	KindCRD            = "CustomResourceDefinition"
	operatorsGroup     = "operators.coreos.com"
	apiextensionsGroup = "apiextensions.k8s.io"
)

// NamespacesWithSubscriptions lists, sorted, the namespaces holding a
// Subscription.
func (s *State) NamespacesWithSubscriptions() []string {
	var out []string
	for _, sub := range s.Subscriptions {
		if !slices.Contains(out, sub.Namespace) {
			out = append(out, sub.Namespace)
		}
	}
	slices.Sort(out)
	return out
}

// SubscriptionsIn returns the Subscriptions of a namespace, by name.
func (s *State) SubscriptionsIn(ns string) []*v1alpha1.Subscription {
	return inNamespace(s.Subscriptions, ns)
}

// CSVsIn returns the (not copied) CSVs of a namespace, by name.
func (s *State) CSVsIn(ns string) []*v1alpha1.ClusterServiceVersion { return inNamespace(s.CSVs, ns) }

// OperatorGroupsIn returns the OperatorGroups of a namespace, by name.
func (s *State) OperatorGroupsIn(ns string) []*operatorsv1.OperatorGroup {
	return inNamespace(s.OperatorGroups, ns)
}

// CatalogSourcesIn returns the CatalogSources of a namespace, by name.
func (s *State) CatalogSourcesIn(ns string) []*v1alpha1.CatalogSource {
	return inNamespace(s.CatalogSources, ns)
}

// InstallPlansIn returns the InstallPlans of a namespace, by name.
func (s *State) InstallPlansIn(ns string) []*v1alpha1.InstallPlan {
	return inNamespace(s.InstallPlans, ns)
}

// Namespace returns the Namespace object of that name, or nil (a
// must-gather often has none for the namespaces of operators).
func (s *State) Namespace(name string) *corev1.Namespace {
	for _, n := range s.Namespaces {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// CatalogSource returns the CatalogSource ns/name, or nil.
func (s *State) CatalogSource(ns, name string) *v1alpha1.CatalogSource {
	for _, c := range s.CatalogSources {
		if c.Namespace == ns && c.Name == name {
			return c
		}
	}
	return nil
}

// CSV returns the CSV ns/name, or nil.
func (s *State) CSV(ns, name string) *v1alpha1.ClusterServiceVersion {
	for _, c := range s.CSVs {
		if c.Namespace == ns && c.Name == name {
			return c
		}
	}
	return nil
}

// CRD returns the CRD of that name, or nil.
func (s *State) CRD(name string) *apiextensionsv1.CustomResourceDefinition {
	for _, c := range s.CRDs {
		if c.Name == name {
			return c
		}
	}
	return nil
}

type namedObject interface {
	GetNamespace() string
	GetName() string
}

func inNamespace[T namedObject](objs []T, ns string) []T {
	var out []T
	for _, o := range objs {
		if o.GetNamespace() == ns {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b T) int { return strings.Compare(a.GetName(), b.GetName()) })
	return out
}

// Summary says in one line what the state holds.
func (s *State) Summary() string {
	var skipped []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range s.Skipped {
			if !yield(k) {
				return
			}
		}
	}) {
		skipped = append(skipped, fmt.Sprintf("%d %s", s.Skipped[k], k))
	}
	from := fmt.Sprintf("%d files", s.Files)
	if s.Cluster != "" {
		from = "cluster " + s.Cluster
	}
	out := fmt.Sprintf("%s: %d Subscriptions, %d ClusterServiceVersions (%d copies skipped), %d CatalogSources, %d OperatorGroups, %d InstallPlans, %d CRDs, %d Namespaces",
		from, len(s.Subscriptions), len(s.CSVs), s.Copied, len(s.CatalogSources), len(s.OperatorGroups), len(s.InstallPlans), len(s.CRDs), len(s.Namespaces))
	if len(skipped) > 0 {
		out += "; skipped: " + strings.Join(skipped, ", ")
	}
	return out
}
