package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"

	"github.com/fastopm/fastopm/alpha/install"
)

// What OLM's catalog operator does at its next sync of a namespace
// (operator-lifecycle-manager v0.46.0, catalog/operator.go
// syncResolvingNamespace): nothing without Subscriptions; an error without
// exactly one OperatorGroup; nothing while every Subscription waits on an
// InstallPlan; otherwise it resolves the namespace as a whole
// (install.ResolveNamespace) with the CatalogSources of the namespace and
// of the global catalog namespace, and writes one InstallPlan, Manual when
// any Subscription of the namespace is.

// Catalogs maps the CatalogSources of a state, by namespace/name, to their
// content. A CatalogSource without content is one OLM cannot reach.
type Catalogs map[string]*install.Catalog

// ResolveOptions are the options of a resolution.
type ResolveOptions struct {
	// GlobalNamespace is OLM's global catalog namespace: its
	// CatalogSources are seen from every namespace. "" picks
	// openshift-marketplace when the state has CatalogSources there, else
	// olm (upstream OLM's default).
	GlobalNamespace string
	Limits          install.Limits
}

// globalNamespace is opts' global catalog namespace for s.
func (s *State) globalNamespace(opts ResolveOptions) string {
	if opts.GlobalNamespace != "" {
		return opts.GlobalNamespace
	}
	if len(s.CatalogSourcesIn("openshift-marketplace")) > 0 {
		return "openshift-marketplace"
	}
	return "olm"
}

// NamespaceResult is what OLM's next sync of a namespace does.
type NamespaceResult struct {
	Namespace string `json:"namespace"`
	// Skipped says why the sync resolves nothing (no Subscriptions, not
	// one OperatorGroup, every Subscription waiting on an InstallPlan);
	// empty when it resolves.
	Skipped string `json:"skipped,omitempty"`
	// Catalogs are the CatalogSources the resolution sees
	// (namespace/name, in OLM's order of preference); Unreachable those
	// without content.
	Catalogs    []string `json:"catalogs,omitempty"`
	Unreachable []string `json:"unreachable,omitempty"`
	// Answer is the resolution's; nil when Skipped.
	Answer *install.NamespaceAnswer `json:"resolution,omitempty"`
	// Approval is the InstallPlan's: Manual when any Subscription of the
	// namespace asks for it.
	Approval string `json:"approval,omitempty"`
	// Subscriptions say what happens to each Subscription.
	Subscriptions []SubscriptionOutcome `json:"subscriptions"`
	// Unhealthy are the namespace's CSVs in a phase other than
	// Succeeded (Failed, Replacing, Installing...): OLM's resolution
	// counts them as installed all the same.
	Unhealthy []CSVPhase `json:"unhealthy,omitempty"`
}

// CSVPhase is a CSV's phase, reason and message.
type CSVPhase struct {
	Name    string `json:"name"`
	Phase   string `json:"phase"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// SubscriptionOutcome is what the sync does for one Subscription.
type SubscriptionOutcome struct {
	Name    string `json:"name"`
	Package string `json:"package"`
	Channel string `json:"channel,omitempty"`
	Source  string `json:"source"`
	// Installed is its installed CSV (status.installedCSV, as the sync
	// sees it).
	Installed string `json:"installed,omitempty"`
	// Outcome is "stays", "upgrades", "installs", "blocked", "waiting"
	// (an InstallPlan not yet run) or "not resolved".
	Outcome string `json:"outcome"`
	// To is the CSV it upgrades to or installs.
	To string `json:"to,omitempty"`
	// Why says why it is blocked, waiting or not resolved.
	Why string `json:"why,omitempty"`
}

// The outcomes of a Subscription.
const (
	Stays       = "stays"
	Upgrades    = "upgrades"
	Installs    = "installs"
	Blocked     = "blocked"
	Waiting     = "waiting"
	NotResolved = "not resolved"
)

// Resolve answers, for every namespace with Subscriptions, what OLM's next
// sync does.
func (s *State) Resolve(ctx context.Context, cats Catalogs, opts ResolveOptions) ([]*NamespaceResult, error) {
	var out []*NamespaceResult
	for _, ns := range s.NamespacesWithSubscriptions() {
		r, err := s.ResolveNamespace(ctx, ns, cats, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// ResolveNamespace answers what OLM's next sync of namespace ns does.
func (s *State) ResolveNamespace(ctx context.Context, ns string, cats Catalogs, opts ResolveOptions) (*NamespaceResult, error) {
	subs := s.SubscriptionsIn(ns)
	res := &NamespaceResult{Namespace: ns, Approval: string(v1alpha1.ApprovalAutomatic)}
	for _, csv := range s.CSVsIn(ns) {
		if csv.Status.Phase != v1alpha1.CSVPhaseSucceeded {
			res.Unhealthy = append(res.Unhealthy, CSVPhase{Name: csv.Name, Phase: string(csv.Status.Phase), Reason: string(csv.Status.Reason), Message: csv.Status.Message})
		}
	}
	for _, sub := range subs {
		if sub.Spec.InstallPlanApproval == v1alpha1.ApprovalManual {
			res.Approval = string(v1alpha1.ApprovalManual)
		}
	}
	skip := func(why string) (*NamespaceResult, error) {
		res.Skipped = why
		for _, sub := range subs {
			res.Subscriptions = append(res.Subscriptions, SubscriptionOutcome{Name: sub.Name, Package: sub.Spec.Package, Channel: sub.Spec.Channel,
				Source: sub.Spec.CatalogSourceNamespace + "/" + sub.Spec.CatalogSource, Installed: sub.Status.InstalledCSV, Outcome: NotResolved, Why: why})
		}
		return res, nil
	}
	switch {
	case len(subs) == 0:
		return skip("the namespace has no Subscriptions")
	}
	ogs := s.OperatorGroupsIn(ns)
	if len(ogs) != 1 {
		return skip(fmt.Sprintf("found %d operatorGroups, expected 1: OLM resolves a namespace only with exactly one OperatorGroup", len(ogs)))
	}
	// The sync first brings each Subscription's status up to date: a
	// current CSV that exists is the installed one.
	q := install.NamespaceQuestion{Namespace: ns}
	current := map[string]string{}
	for _, sub := range subs {
		installed := sub.Status.InstalledCSV
		if c := sub.Status.CurrentCSV; c != "" && s.CSV(ns, c) != nil {
			installed = c
		}
		current[sub.Name] = installed
	}
	waiting := true
	for _, sub := range subs {
		if sub.Status.InstallPlanRef == nil || sub.Status.State != v1alpha1.SubscriptionStateUpgradePending {
			waiting = false
		}
	}
	if waiting {
		r, err := skip("every Subscription waits on its InstallPlan (approve or delete it): OLM resolves the namespace again after")
		for i := range r.Subscriptions {
			r.Subscriptions[i].Outcome = Waiting
			if ref := subs[i].Status.InstallPlanRef; ref != nil {
				r.Subscriptions[i].Why = "waits on InstallPlan " + ref.Name
			}
		}
		return r, err
	}
	for _, sub := range subs {
		q.Subscriptions = append(q.Subscriptions, install.NamespaceSubscription{
			Name: sub.Name, Package: sub.Spec.Package, Channel: sub.Spec.Channel,
			Source: sub.Spec.CatalogSource, SourceNamespace: sub.Spec.CatalogSourceNamespace,
			StartingCSV: sub.Spec.StartingCSV, InstalledCSV: current[sub.Name],
			CurrentCSV: sub.Status.CurrentCSV, CurrentCSVExists: sub.Status.CurrentCSV != "" && s.CSV(ns, sub.Status.CurrentCSV) != nil,
		})
	}
	installed, err := s.installedCSVs(ns, current)
	if err != nil {
		q.SourceErrors = append(q.SourceErrors, fmt.Sprintf("error using catalogsource %s/@existing: %v", ns, err))
	} else {
		q.Installed = installed
	}
	// The namespace's CatalogSources and the global namespace's, unless
	// its OperatorGroup excludes them.
	namespaces := []string{ns}
	if ogs[0].Annotations["olm.operatorframework.io/exclude-global-namespace-resolution"] != "true" {
		if g := s.globalNamespace(opts); g != ns {
			namespaces = append(namespaces, g)
		}
	}
	for _, n := range namespaces {
		for _, cs := range s.CatalogSourcesIn(n) {
			key := cs.Namespace + "/" + cs.Name
			c := cats[key]
			if c == nil {
				q.SourceErrors = append(q.SourceErrors, install.NoRegistryClient(cs.Namespace, cs.Name))
				res.Unreachable = append(res.Unreachable, key)
				continue
			}
			q.Catalogs = append(q.Catalogs, c)
		}
	}
	a, err := install.ResolveNamespace(ctx, q, opts.Limits)
	if err != nil {
		return nil, err
	}
	res.Answer = a
	res.Catalogs = append(res.Catalogs, catalogOrder(q.Catalogs, ns)...)
	res.Subscriptions = outcomes(subs, current, a)
	return res, nil
}

// catalogOrder lists catalogs in OLM's order of preference.
func catalogOrder(cats []*install.Catalog, ns string) []string {
	sorted := slices.Clone(cats)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if a.Priority != b.Priority {
			return a.Priority > b.Priority
		}
		if a.Namespace != b.Namespace {
			if a.Namespace == ns {
				return true
			}
			if b.Namespace == ns {
				return false
			}
		}
		return a.Name < b.Name
	})
	out := make([]string, len(sorted))
	for i, c := range sorted {
		out[i] = c.Namespace + "/" + c.Name
	}
	return out
}

// outcomes says what the resolution does for each Subscription.
func outcomes(subs []*v1alpha1.Subscription, current map[string]string, a *install.NamespaceAnswer) []SubscriptionOutcome {
	var out []SubscriptionOutcome
	for _, sub := range subs {
		o := SubscriptionOutcome{Name: sub.Name, Package: sub.Spec.Package, Channel: sub.Spec.Channel,
			Source: sub.Spec.CatalogSourceNamespace + "/" + sub.Spec.CatalogSource, Installed: current[sub.Name]}
		switch a.Status {
		case install.Installable:
			o.Outcome = Stays
			for _, op := range a.Operators {
				if !slices.Contains(op.Subscriptions, sub.Name) {
					continue
				}
				o.To = op.Bundle
				switch {
				case op.Bundle == o.Installed:
					o.Outcome = Stays
				case o.Installed == "":
					o.Outcome = Installs
				default:
					o.Outcome = Upgrades
				}
			}
		case install.Unsatisfiable:
			o.Outcome, o.Why = Blocked, "the namespace's constraints cannot hold together (ConstraintsNotSatisfiable): "+strings.Join(a.Reasons, "; ")
		default:
			o.Outcome, o.Why = Blocked, a.Error
		}
		out = append(out, o)
	}
	return out
}

// zeroVersion is a CSV without spec.version.
var zeroVersion = semver.Version{}

// installedCSVs are the namespace's CSVs as OLM's resolver reads them
// (source_csvs.go csvSource.Snapshot): each linked to the Subscription
// whose installed CSV it is, its properties from its
// operatorframework.io/properties annotation, or derived from its spec
// (newEntryFromV1Alpha1CSV, inferProperties). current are the installed
// CSVs of the Subscriptions, by Subscription.
func (s *State) installedCSVs(ns string, current map[string]string) ([]install.InstalledCSV, error) {
	csvs := s.CSVsIn(ns)
	subs := s.SubscriptionsIn(ns)
	linked := map[string]string{} // CSV → Subscription; the last one naming it wins, as in OLM
	for _, sub := range subs {
		for _, csv := range csvs {
			if csv.Name == current[sub.Name] {
				linked[csv.Name] = sub.Name
				break
			}
		}
	}
	var out []install.InstalledCSV
	for _, csv := range csvs {
		props, err := derivedProperties(csv)
		if err != nil {
			return nil, err
		}
		version := ""
		if !csv.Spec.Version.Equals(zeroVersion) {
			version = csv.Spec.Version.String()
		}
		if anno, ok := csv.Annotations["operatorframework.io/properties"]; ok {
			var pa struct {
				Properties []install.Property `json:"properties"`
			}
			if err := json.Unmarshal([]byte(anno), &pa); err != nil {
				return nil, fmt.Errorf("failed to retrieve properties of csv %q: failed to unmarshal properties annotation: %w", csv.Name, err)
			}
			props = pa.Properties
		} else {
			// The package, when exactly one Subscription names the CSV
			// as installed.
			pkgs := map[string]bool{}
			for _, sub := range subs {
				if current[sub.Name] == csv.Name && sub.Spec.Package != "" {
					pkgs[sub.Spec.Package] = true
				}
			}
			if len(pkgs) == 1 {
				for pkg := range pkgs {
					val, _ := json.Marshal(struct {
						PackageName string `json:"packageName"`
						Version     string `json:"version"`
					}{pkg, version})
					props = append(props, install.Property{Type: "olm.package", Value: val})
				}
			}
		}
		out = append(out, install.InstalledCSV{Name: csv.Name, Version: csv.Spec.Version.String(), Properties: props, Subscription: linked[csv.Name]})
	}
	return out, nil
}

// derivedProperties are the properties OLM derives from a CSV's spec:
// olm.gvk for its owned CRDs and APIServices, olm.gvk.required for the
// required ones, each list sorted by value.
func derivedProperties(csv *v1alpha1.ClusterServiceVersion) ([]install.Property, error) {
	type apiKey struct{ plural, group, version, kind string }
	provided, required := map[apiKey]bool{}, map[apiKey]bool{}
	for _, lists := range []struct {
		crds []v1alpha1.CRDDescription
		apis []v1alpha1.APIServiceDescription
		set  map[apiKey]bool
	}{
		{csv.Spec.CustomResourceDefinitions.Owned, csv.Spec.APIServiceDefinitions.Owned, provided},
		{csv.Spec.CustomResourceDefinitions.Required, csv.Spec.APIServiceDefinitions.Required, required},
	} {
		for _, d := range lists.crds {
			plural, group, ok := strings.Cut(d.Name, ".")
			if !ok {
				return nil, fmt.Errorf("error parsing crd name: %s", d.Name)
			}
			lists.set[apiKey{plural, group, d.Version, d.Kind}] = true
		}
		for _, d := range lists.apis {
			lists.set[apiKey{d.Name, d.Group, d.Version, d.Kind}] = true
		}
	}
	var gvks, reqs []install.Property
	for k := range provided {
		val, _ := json.Marshal(struct {
			Group   string `json:"group"`
			Kind    string `json:"kind"`
			Version string `json:"version"`
		}{k.group, k.kind, k.version})
		gvks = append(gvks, install.Property{Type: "olm.gvk", Value: val})
	}
	for k := range required {
		val, _ := json.Marshal(struct {
			Group   string `json:"group"`
			Version string `json:"version"`
			Kind    string `json:"kind"`
		}{k.group, k.version, k.kind})
		reqs = append(reqs, install.Property{Type: "olm.gvk.required", Value: val})
	}
	byValue := func(a, b install.Property) int { return strings.Compare(string(a.Value), string(b.Value)) }
	slices.SortStableFunc(gvks, byValue)
	slices.SortStableFunc(reqs, byValue)
	return append(gvks, reqs...), nil
}

// OperatorGroupOf returns the namespace's OperatorGroup when it has
// exactly one.
func (s *State) OperatorGroupOf(ns string) *operatorsv1.OperatorGroup {
	if ogs := s.OperatorGroupsIn(ns); len(ogs) == 1 {
		return ogs[0]
	}
	return nil
}
