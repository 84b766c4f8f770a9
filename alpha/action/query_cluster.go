//go:build !opm_lean

package action

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"sync"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"

	"github.com/fastopm/fastopm/alpha/cluster"
	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/install"
	"github.com/fastopm/fastopm/pkg/suggest"
)

// QueryCluster is `opm alpha query cluster`: what OLM's next sync does in
// every namespace of a cluster's state that has Subscriptions (alpha/cluster),
// with the content of its CatalogSources given as catalogs.
type QueryCluster struct {
	// State are the files, directories and must-gathers of the cluster's
	// objects.
	State []string
	// Cluster, when set instead of State, is the live cluster whose
	// objects are read (cluster.ReadCluster).
	Cluster *rest.Config
	// Catalogs map CatalogSources to content: Name is "namespace/name" or
	// a CatalogSource's name alone (when only one has it); Priority, when
	// set (PrioritySet), replaces the CatalogSource's spec.priority.
	Catalogs []ClusterCatalogFlag
	Sources  SourceResolver
	// PullCatalogs pulls the image of each CatalogSource without a
	// mapping that has spec.image.
	PullCatalogs bool
	// BundleImages, when set, pulls the images of the bundles of the
	// InstallPlan that the catalog gives by image only (--pull-bundles).
	BundleImages SourceResolver
	// pulled, when set, reads a bundle image instead of pulling it
	// from BundleImages each time (the hub's, which pulls each once).
	pulled      func(ctx context.Context, image string) (*cluster.PlanBundle, error)
	MaxFileSize int64
	// GlobalNamespace is OLM's global catalog namespace ("": detected).
	GlobalNamespace string
	// Namespace, when set, is the only namespace answered.
	Namespace string
	// Subscribe are hypothetical Subscriptions
	// (NAMESPACE/PACKAGE[,channel=C][,source=S][,sourceNamespace=N][,startingCSV=B][,approval=Manual]).
	Subscribe []string
	// Plan adds each namespace's InstallPlan, its effects and the
	// permissions it grants.
	Plan bool
	// OperandRegistries are files of ODLM OperandRegistries and
	// OperandRequests, whose Subscriptions are added.
	OperandRegistries []string
	Limits            install.Limits
}

// ClusterCatalogFlag is one --catalog.
type ClusterCatalogFlag struct {
	InstallCatalog
	PrioritySet bool
}

// ParseClusterCatalog reads NAME=REF[,priority=N] where NAME is a
// CatalogSource: namespace/name, or its name alone.
func ParseClusterCatalog(s string) (ClusterCatalogFlag, error) {
	c, err := ParseInstallCatalog(s)
	if err != nil {
		return ClusterCatalogFlag{}, err
	}
	return ClusterCatalogFlag{InstallCatalog: c, PrioritySet: strings.Contains(s, ",priority=")}, nil
}

// ClusterReport is the answer.
type ClusterReport struct {
	State           string                   `json:"state"`
	GlobalNamespace string                   `json:"globalNamespace"`
	Catalogs        []ClusterCatalog         `json:"catalogs"`
	Namespaces      []*ClusterNamespace      `json:"namespaces"`
	ODLM            *cluster.ODLMAnswer      `json:"odlm,omitempty"`
	Hypothetical    []*v1alpha1.Subscription `json:"hypothetical,omitempty"`
}

// ClusterCatalog is a CatalogSource of the state and its content.
type ClusterCatalog struct {
	CatalogSource string `json:"catalogSource"`
	Priority      int    `json:"priority"`
	// Ref is the directory or image its content was read from; "" when
	// none: OLM cannot reach it.
	Ref    string `json:"ref,omitempty"`
	Pulled bool   `json:"pulled,omitempty"`
	Image  string `json:"image,omitempty"`
}

// ClusterNamespace is one namespace's answer.
type ClusterNamespace struct {
	*cluster.NamespaceResult
	// IfReachable, when CatalogSources the namespace sees are
	// unreachable (and OLM fails), is what the sync would do if they
	// were reachable and offered nothing more: Subscriptions to them are
	// left out, and said so.
	IfReachable []cluster.SubscriptionOutcome `json:"ifReachable,omitempty"`
	// Before is the namespace without the hypothetical Subscriptions
	// (--subscribe, ODLM), and Changes what they change.
	Before  []cluster.SubscriptionOutcome `json:"before,omitempty"`
	Changes []string                      `json:"changes,omitempty"`
	// OperatorGroups are the verdicts of the OperatorGroup rules for each
	// CSV the sync keeps or installs.
	OperatorGroups []*cluster.GroupVerdict `json:"operatorGroups,omitempty"`
	// Plan is the InstallPlan (--plan).
	Plan *ClusterPlan `json:"plan,omitempty"`
}

// ClusterPlan is an InstallPlan before approval.
type ClusterPlan struct {
	*cluster.Plan
	Effects     []cluster.Effect              `json:"effects"`
	Permissions []cluster.OperatorPermissions `json:"permissions"`
	// NotUnpacked are the bundles given by image only, not pulled: OLM
	// unpacks them for their steps (--pull-bundles).
	NotUnpacked []string `json:"notUnpacked,omitempty"`
}

// Failed reports whether the answer is "no" somewhere: a Subscription
// blocked or not resolved, or a CSV that fails its OperatorGroup.
func (r *ClusterReport) Failed() bool {
	for _, n := range r.Namespaces {
		for _, s := range n.Subscriptions {
			if s.Outcome == cluster.Blocked || s.Outcome == cluster.NotResolved {
				return true
			}
		}
		for _, v := range n.OperatorGroups {
			if !v.OK {
				return true
			}
		}
	}
	return false
}

// Undecided reports whether a namespace's resolution was undecided.
func (r *ClusterReport) Undecided() bool {
	for _, n := range r.Namespaces {
		if n.Answer != nil && n.Answer.Status == install.Undecided {
			return true
		}
	}
	return false
}

// Run answers.
func (q *QueryCluster) Run(ctx context.Context) (*ClusterReport, error) {
	var state *cluster.State
	var err error
	if q.Cluster != nil {
		state, err = cluster.ReadCluster(ctx, q.Cluster)
	} else {
		state, err = cluster.Read(ctx, q.State...)
	}
	if err != nil {
		return nil, err
	}
	rep := &ClusterReport{State: state.Summary()}
	opts := cluster.ResolveOptions{GlobalNamespace: q.GlobalNamespace, Limits: q.Limits}
	if opts.GlobalNamespace == "" {
		opts.GlobalNamespace = globalNamespaceOf(state)
	}
	rep.GlobalNamespace = opts.GlobalNamespace
	cats, err := q.loadCatalogs(ctx, state, rep)
	if err != nil {
		return nil, err
	}
	defer cats.close()
	if err := q.answer(ctx, state, cats, opts, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// answer fills rep with the answers over catalogs already loaded (Run's,
// or a hub's: hub.go).
func (q *QueryCluster) answer(ctx context.Context, state *cluster.State, cats *clusterCatalogs, opts cluster.ResolveOptions, rep *ClusterReport) error {
	// The hypothetical Subscriptions: ODLM's, then --subscribe.
	hypo := cloneState(state)
	if len(q.OperandRegistries) > 0 {
		o, err := cluster.ReadODLM(ctx, q.OperandRegistries...)
		if err != nil {
			return err
		}
		rep.ODLM = o.Subscriptions(cats.packageManifests(rep.GlobalNamespace), state)
		if err := addObjects(hypo, rep.ODLM.Subscriptions, rep.ODLM.OperatorGroups); err != nil {
			return err
		}
	}
	for _, s := range q.Subscribe {
		sub, err := parseSubscribe(s, hypo, cats, rep.GlobalNamespace)
		if err != nil {
			return &subscribeError{err}
		}
		rep.Hypothetical = append(rep.Hypothetical, sub)
		if err := addObjects(hypo, []*v1alpha1.Subscription{sub}, nil); err != nil {
			return err
		}
	}
	namespaces := hypo.NamespacesWithSubscriptions()
	if q.Namespace != "" {
		if !slices.Contains(namespaces, q.Namespace) {
			return &namespaceError{fmt.Errorf("namespace %q has no Subscriptions in the state%s", q.Namespace, suggest.Hint(q.Namespace, namespaces))}
		}
		namespaces = []string{q.Namespace}
	}
	changed := len(q.OperandRegistries) > 0 || len(q.Subscribe) > 0
	for _, ns := range namespaces {
		r, err := hypo.ResolveNamespace(ctx, ns, cats.byKey, opts)
		if err != nil {
			return err
		}
		cn := &ClusterNamespace{NamespaceResult: r}
		if len(r.Unreachable) > 0 {
			if cn.IfReachable, err = ifReachable(ctx, hypo, ns, cats.byKey, opts, r.Unreachable); err != nil {
				return err
			}
		}
		if changed && len(state.SubscriptionsIn(ns)) > 0 {
			before, err := state.ResolveNamespace(ctx, ns, cats.byKey, opts)
			if err != nil {
				return err
			}
			cn.Before = before.Subscriptions
			cn.Changes = changes(before.Subscriptions, r.Subscriptions)
		} else if changed {
			cn.Changes = []string{"the namespace had no Subscriptions: every one here is hypothetical"}
		}
		rep.Namespaces = append(rep.Namespaces, cn)
	}
	// The catalog bundles every namespace's sync installs, read in one
	// walk of each catalog that has some, not one per namespace.
	var ops []install.NamespaceOperator
	for _, cn := range rep.Namespaces {
		if cn.Answer != nil && cn.Answer.Status == install.Installable {
			ops = append(ops, cn.Answer.Operators...)
		}
	}
	pbs, err := cats.planBundles(ctx, ops, q.Plan)
	if err != nil {
		return err
	}
	for _, cn := range rep.Namespaces {
		q.operatorGroups(hypo, cn, pbs)
		if q.Plan {
			if cn.Plan, err = q.plan(ctx, hypo, cn, pbs); err != nil {
				return err
			}
		}
	}
	return nil
}

// subscribeError is a hypothetical Subscription that is wrong.
type subscribeError struct{ error }

func (e *subscribeError) Unwrap() error { return e.error }

// namespaceError is a namespace asked about that has no Subscriptions.
type namespaceError struct{ error }

func (e *namespaceError) Unwrap() error { return e.error }

// globalNamespaceOf is OpenShift's global catalog namespace when the
// state has CatalogSources there, else upstream OLM's default.
func globalNamespaceOf(s *cluster.State) string {
	if len(s.CatalogSourcesIn("openshift-marketplace")) > 0 {
		return "openshift-marketplace"
	}
	return "olm"
}

// clusterCatalogs are the loaded catalogs, by CatalogSource.
type clusterCatalogs struct {
	byKey cluster.Catalogs
	// read reads bundles of each, for their objects
	read   map[string]bundleReader
	closes []func() error
}

// bundleReader reads olm.bundle blobs of a catalog (by package and name),
// and the olm.package blobs of their packages.
type bundleReader func(ctx context.Context, want map[[2]string]bool) (map[string]*declcfg.Package, []*declcfg.Bundle, error)

func (c *clusterCatalogs) close() {
	for _, f := range c.closes {
		_ = f()
	}
}

// loadCatalogs maps the state's CatalogSources to content and reads it.
func (q *QueryCluster) loadCatalogs(ctx context.Context, s *cluster.State, rep *ClusterReport) (*clusterCatalogs, error) {
	type job struct {
		key      string
		ref      string
		priority int
		pulled   bool
		image    string
	}
	byName := map[string][]string{}
	var keys []string
	for _, cs := range s.CatalogSources {
		key := cs.Namespace + "/" + cs.Name
		keys = append(keys, key)
		byName[cs.Name] = append(byName[cs.Name], key)
	}
	jobs := map[string]*job{}
	for _, f := range q.Catalogs {
		key := f.Name
		if !strings.Contains(key, "/") {
			switch ks := byName[key]; len(ks) {
			case 0:
				return nil, fmt.Errorf("--catalog %s: the state has no CatalogSource named %q (its CatalogSources: %s)%s", f.Name, key, list(keys), suggest.Hint(key, slices.Sorted(func(y func(string) bool) {
					for n := range byName {
						if !y(n) {
							return
						}
					}
				})))
			case 1:
				key = ks[0]
			default:
				return nil, fmt.Errorf("--catalog %s: CatalogSources %s have that name: give NAMESPACE/NAME", f.Name, strings.Join(ks, " and "))
			}
		}
		cs := catalogSourceOf(s, key)
		if cs == nil {
			return nil, fmt.Errorf("--catalog %s: the state has no CatalogSource %s (its CatalogSources: %s)%s", f.Name, key, list(keys), suggest.Hint(key, keys))
		}
		if jobs[key] != nil {
			return nil, fmt.Errorf("--catalog %s: CatalogSource %s is given twice", f.Name, key)
		}
		prio := cs.Spec.Priority
		if f.PrioritySet {
			prio = f.Priority
		}
		jobs[key] = &job{key: key, ref: f.Ref, priority: prio}
	}
	for _, cs := range s.CatalogSources {
		key := cs.Namespace + "/" + cs.Name
		if jobs[key] == nil && q.PullCatalogs && cs.Spec.Image != "" {
			jobs[key] = &job{key: key, ref: cs.Spec.Image, priority: cs.Spec.Priority, pulled: true, image: cs.Spec.Image}
		}
	}
	out := &clusterCatalogs{byKey: cluster.Catalogs{}, read: map[string]bundleReader{}}
	var list []*job
	for _, k := range slices.Sorted(func(y func(string) bool) {
		for k := range jobs {
			if !y(k) {
				return
			}
		}
	}) {
		list = append(list, jobs[k])
	}
	results := make([]*install.Catalog, len(list))
	fss := make([]fs.FS, len(list))
	closes := make([]func() error, len(list))
	eg, gctx := errgroup.WithContext(ctx)
	for i, j := range list {
		eg.Go(func() error {
			src, err := resolveCatalog(gctx, q.Sources, j.ref)
			if err != nil {
				return fmt.Errorf("catalog of CatalogSource %s (%s): %w", j.key, j.ref, err)
			}
			closes[i] = src.Close
			if src.FS == nil {
				return fmt.Errorf("catalog of CatalogSource %s: %s is not a catalog", j.key, j.ref)
			}
			ns, name, _ := strings.Cut(j.key, "/")
			cat, _, err := install.Load(gctx, src.FS, name, j.priority, declcfg.WithMaxFileSize(q.MaxFileSize))
			if err != nil {
				return fmt.Errorf("catalog of CatalogSource %s (%s): %w", j.key, j.ref, err)
			}
			cat.SetNamespace(ns)
			results[i], fss[i] = cat, src.FS
			return nil
		})
	}
	err := eg.Wait()
	for _, c := range closes {
		if c != nil {
			out.closes = append(out.closes, c)
		}
	}
	if err != nil {
		out.close()
		return nil, err
	}
	for i, j := range list {
		out.byKey[j.key], out.read[j.key] = results[i], walkBundles(fss[i])
	}
	for _, cs := range s.CatalogSources {
		key := cs.Namespace + "/" + cs.Name
		c := ClusterCatalog{CatalogSource: key, Priority: cs.Spec.Priority, Image: cs.Spec.Image}
		if j := jobs[key]; j != nil {
			c.Ref, c.Priority, c.Pulled = j.ref, j.priority, j.pulled
		}
		rep.Catalogs = append(rep.Catalogs, c)
	}
	return out, nil
}

func catalogSourceOf(s *cluster.State, key string) *v1alpha1.CatalogSource {
	ns, name, _ := strings.Cut(key, "/")
	return s.CatalogSource(ns, name)
}

func list(keys []string) string {
	if len(keys) == 0 {
		return "none"
	}
	return strings.Join(keys, ", ")
}

// packageManifests lists the catalogs' packages as OLM's packageserver
// does, for ODLM.
func (c *clusterCatalogs) packageManifests(global string) *cluster.PackageManifests {
	pm := &cluster.PackageManifests{GlobalNamespace: global}
	for _, key := range slices.Sorted(func(y func(string) bool) {
		for k := range c.byKey {
			if !y(k) {
				return
			}
		}
	}) {
		cat := c.byKey[key]
		cp := cluster.CatalogPackages{Namespace: cat.Namespace, Name: cat.Name, Priority: cat.Priority, Packages: map[string][]string{}}
		for _, p := range cat.Packages() {
			chs, _ := cat.Channels(p)
			cp.Packages[p] = chs
		}
		pm.Catalogs = append(pm.Catalogs, cp)
	}
	return pm
}

// cloneState copies a state's lists, so that hypothetical objects can be
// added to the copy.
func cloneState(s *cluster.State) *cluster.State {
	c := *s
	c.Subscriptions = slices.Clone(s.Subscriptions)
	c.OperatorGroups = slices.Clone(s.OperatorGroups)
	return &c
}

// addObjects adds hypothetical Subscriptions and OperatorGroups; one that
// has the name of an object of the state replaces it.
func addObjects(s *cluster.State, subs []*v1alpha1.Subscription, ogs []*operatorsv1.OperatorGroup) error {
	for _, sub := range subs {
		s.Subscriptions = slices.DeleteFunc(s.Subscriptions, func(o *v1alpha1.Subscription) bool {
			return o.Namespace == sub.Namespace && o.Name == sub.Name
		})
		s.Subscriptions = append(s.Subscriptions, sub)
	}
	for _, og := range ogs {
		s.OperatorGroups = slices.DeleteFunc(s.OperatorGroups, func(o *operatorsv1.OperatorGroup) bool {
			return o.Namespace == og.Namespace && o.Name == og.Name
		})
		s.OperatorGroups = append(s.OperatorGroups, og)
	}
	sort.SliceStable(s.Subscriptions, func(i, j int) bool {
		a, b := s.Subscriptions[i], s.Subscriptions[j]
		return a.Namespace < b.Namespace || a.Namespace == b.Namespace && a.Name < b.Name
	})
	return nil
}

// parseSubscribe reads NAMESPACE/PACKAGE[,channel=C][,source=S][,sourceNamespace=N][,startingCSV=B][,approval=Manual]
// into a Subscription named after its package. Without source, the
// CatalogSource the namespace sees that offers the package, by OLM's
// preference (priority, the namespace's own, name).
func parseSubscribe(s string, st *cluster.State, cats *clusterCatalogs, global string) (*v1alpha1.Subscription, error) {
	head, opts, _ := strings.Cut(s, ",")
	ns, pkg, ok := strings.Cut(head, "/")
	if !ok || ns == "" || pkg == "" {
		return nil, fmt.Errorf("--subscribe %q: expected NAMESPACE/PACKAGE[,channel=C][,source=S][,sourceNamespace=N][,startingCSV=B][,approval=Manual]", s)
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return nil, fmt.Errorf("--subscribe %q: namespace %q: %s", s, ns, errs[0])
	}
	sub := &v1alpha1.Subscription{
		TypeMeta:   metav1.TypeMeta{APIVersion: "operators.coreos.com/v1alpha1", Kind: v1alpha1.SubscriptionKind},
		ObjectMeta: metav1.ObjectMeta{Name: pkg, Namespace: ns, Annotations: map[string]string{"fastopm.io/hypothetical": "true"}},
		Spec:       &v1alpha1.SubscriptionSpec{Package: pkg, InstallPlanApproval: v1alpha1.ApprovalAutomatic},
	}
	if opts != "" {
		for _, kv := range strings.Split(opts, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || v == "" {
				return nil, fmt.Errorf("--subscribe %q: %q is not KEY=VALUE", s, kv)
			}
			switch k {
			case "channel":
				sub.Spec.Channel = v
			case "source":
				if n, name, ok := strings.Cut(v, "/"); ok && !strings.Contains(name, "/") {
					return nil, fmt.Errorf("--subscribe %q: source is a CatalogSource's name; for %s in namespace %s give source=%s,sourceNamespace=%s", s, name, n, name, n)
				}
				if errs := validation.IsDNS1123Subdomain(v); len(errs) > 0 {
					return nil, fmt.Errorf("--subscribe %q: source %q is not a CatalogSource's name: %s", s, v, errs[0])
				}
				sub.Spec.CatalogSource = v
			case "sourceNamespace":
				if errs := validation.IsDNS1123Label(v); len(errs) > 0 {
					return nil, fmt.Errorf("--subscribe %q: sourceNamespace %q: %s", s, v, errs[0])
				}
				sub.Spec.CatalogSourceNamespace = v
			case "startingCSV":
				sub.Spec.StartingCSV = v
			case "approval":
				if v != string(v1alpha1.ApprovalManual) && v != string(v1alpha1.ApprovalAutomatic) {
					return nil, fmt.Errorf("--subscribe %q: approval is Manual or Automatic, not %q", s, v)
				}
				sub.Spec.InstallPlanApproval = v1alpha1.Approval(v)
			case "name":
				sub.Name = v
			default:
				return nil, fmt.Errorf("--subscribe %q: unknown option %q (channel, source, sourceNamespace, startingCSV, approval, name)%s",
					s, k, suggest.Hint(k, []string{"channel", "source", "sourceNamespace", "startingCSV", "approval", "name"}))
			}
		}
	}
	if sub.Spec.CatalogSource == "" {
		var found []*install.Catalog
		for _, c := range cats.byKey {
			if chs, _ := c.Channels(pkg); len(chs) > 0 && (c.Namespace == ns || c.Namespace == global) {
				found = append(found, c)
			}
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("--subscribe %q: no catalog given that namespace %s sees offers package %s: name its CatalogSource with source=", s, ns, pkg)
		}
		slices.SortStableFunc(found, func(a, b *install.Catalog) int {
			if a.Priority != b.Priority {
				return cmp.Compare(b.Priority, a.Priority) // not b-a: it overflows
			}
			if a.Namespace != b.Namespace {
				if a.Namespace == ns {
					return -1
				}
				if b.Namespace == ns {
					return 1
				}
			}
			return strings.Compare(a.Name, b.Name)
		})
		sub.Spec.CatalogSource, sub.Spec.CatalogSourceNamespace = found[0].Name, found[0].Namespace
	}
	if sub.Spec.CatalogSourceNamespace == "" {
		switch {
		case st.CatalogSource(ns, sub.Spec.CatalogSource) != nil:
			sub.Spec.CatalogSourceNamespace = ns
		default:
			sub.Spec.CatalogSourceNamespace = global
		}
	}
	return sub, nil
}

// ifReachable is what the sync would do if the unreachable CatalogSources
// were reachable and offered nothing more: the Subscriptions to them are
// left out (their answer is not known).
func ifReachable(ctx context.Context, s *cluster.State, ns string, cats cluster.Catalogs, opts cluster.ResolveOptions, unreachable []string) ([]cluster.SubscriptionOutcome, error) {
	c := cloneState(s)
	var unknown []*v1alpha1.Subscription
	c.Subscriptions = slices.DeleteFunc(c.Subscriptions, func(sub *v1alpha1.Subscription) bool {
		if sub.Namespace == ns && slices.Contains(unreachable, sub.Spec.CatalogSourceNamespace+"/"+sub.Spec.CatalogSource) {
			unknown = append(unknown, sub)
			return true
		}
		return false
	})
	c.CatalogSources = slices.DeleteFunc(slices.Clone(s.CatalogSources), func(cs *v1alpha1.CatalogSource) bool {
		return slices.Contains(unreachable, cs.Namespace+"/"+cs.Name)
	})
	var out []cluster.SubscriptionOutcome
	if len(c.SubscriptionsIn(ns)) > 0 {
		r, err := c.ResolveNamespace(ctx, ns, cats, opts)
		if err != nil {
			return nil, err
		}
		out = r.Subscriptions
	}
	for _, sub := range unknown {
		out = append(out, cluster.SubscriptionOutcome{Name: sub.Name, Package: sub.Spec.Package, Channel: sub.Spec.Channel,
			Source: sub.Spec.CatalogSourceNamespace + "/" + sub.Spec.CatalogSource, Installed: sub.Status.InstalledCSV,
			Outcome: "unknown", Why: "its CatalogSource's content was not given (--catalog, --pull-catalogs)"})
	}
	slices.SortFunc(out, func(a, b cluster.SubscriptionOutcome) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// changes says what the hypothetical Subscriptions change.
func changes(before, after []cluster.SubscriptionOutcome) []string {
	var out []string
	was := map[string]cluster.SubscriptionOutcome{}
	for _, o := range before {
		was[o.Name] = o
	}
	for _, o := range after {
		b, ok := was[o.Name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("new Subscription %s (%s): %s", o.Name, o.Package, outcomeWords(o)))
		case b.Outcome != o.Outcome || b.To != o.To:
			out = append(out, fmt.Sprintf("Subscription %s: %s before, %s with the new Subscriptions", o.Name, outcomeWords(b), outcomeWords(o)))
		}
	}
	if len(out) == 0 {
		out = []string{"nothing changes for the namespace's Subscriptions"}
	}
	return out
}

// outcomeWords says an outcome in a few words.
func outcomeWords(o cluster.SubscriptionOutcome) string {
	switch o.Outcome {
	case cluster.Stays:
		if o.Installed == "" {
			return "nothing installed"
		}
		return "stays on " + o.Installed
	case cluster.Upgrades:
		return "upgrades " + o.Installed + " to " + o.To
	case cluster.Installs:
		return "installs " + o.To
	case cluster.Blocked:
		return "blocked (the namespace does not resolve)"
	}
	if o.Why != "" {
		return o.Outcome + ": " + firstLine(o.Why)
	}
	return o.Outcome
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// planBundles reads the catalog bundles of the operators of answers that
// install or upgrade, as the catalog holds them: with their objects when
// objects is set, else their CSV only.
func (c *clusterCatalogs) planBundles(ctx context.Context, ops []install.NamespaceOperator, objects bool) (map[[2]string]*cluster.PlanBundle, error) {
	want := map[string]map[[2]string]bool{} // catalog key → package and bundle names
	for _, op := range ops {
		if op.UpToDate {
			continue
		}
		key := op.CatalogSourceNamespace + "/" + op.CatalogSource
		if want[key] == nil {
			want[key] = map[[2]string]bool{}
		}
		want[key][[2]string{op.Package, op.Bundle}] = true
	}
	out := map[[2]string]*cluster.PlanBundle{}
	for key, names := range want {
		read := c.read[key]
		if read == nil {
			continue
		}
		pkgs, bundles, err := read(ctx, names)
		if err != nil {
			return nil, fmt.Errorf("catalog of CatalogSource %s: %w", key, err)
		}
		for _, bd := range bundles {
			pb, err := cluster.NewPlanBundle(bd, pkgs[bd.Package])
			if err != nil {
				return nil, fmt.Errorf("catalog of CatalogSource %s: bundle %s: %w", key, bd.Name, err)
			}
			if !objects {
				pb.Objects = nil // only the CSV is read
			}
			out[[2]string{key, bd.Package + "/" + bd.Name}] = pb
		}
	}
	return out, nil
}

// walkBundles reads bundles from a catalog's files, in one walk.
func walkBundles(fsys fs.FS) bundleReader {
	return func(ctx context.Context, want map[[2]string]bool) (map[string]*declcfg.Package, []*declcfg.Bundle, error) {
		pkgs := map[string]*declcfg.Package{}
		var bundles []*declcfg.Bundle
		var mu sync.Mutex
		err := declcfg.Walk(ctx, fsys, func(b *declcfg.Blob) error {
			switch b.Schema {
			case declcfg.SchemaPackage:
				// Decoded values are slices of the blob, whose bytes the
				// walk reuses: each is copied first.
				p, err := declcfg.DecodePackage(bytes.Clone(b.JSON))
				if err == nil {
					mu.Lock()
					pkgs[p.Name] = &p
					mu.Unlock()
				}
			case declcfg.SchemaBundle:
				if want[[2]string{b.Package, b.Name}] {
					bd, err := declcfg.DecodeBundle(bytes.Clone(b.JSON))
					if err != nil {
						return err
					}
					mu.Lock()
					bundles = append(bundles, &bd)
					mu.Unlock()
				}
			}
			return nil
		})
		return pkgs, bundles, err
	}
}

// operatorGroups adds the OperatorGroup verdicts of the CSVs the sync
// keeps (installed) or installs.
func (q *QueryCluster) operatorGroups(s *cluster.State, cn *ClusterNamespace, pbs map[[2]string]*cluster.PlanBundle) {
	rules := s.GroupRules()
	for _, csv := range s.CSVsIn(cn.Namespace) {
		cn.OperatorGroups = append(cn.OperatorGroups, rules.Verdict(csv))
	}
	if cn.Answer == nil || cn.Answer.Status != install.Installable {
		return
	}
	for _, op := range cn.Answer.Operators {
		if op.UpToDate {
			continue
		}
		pb := pbs[[2]string{op.CatalogSourceNamespace + "/" + op.CatalogSource, op.Package + "/" + op.Bundle}]
		if pb == nil || len(pb.CSVJSON) == 0 {
			continue
		}
		var csv v1alpha1.ClusterServiceVersion
		if err := json.Unmarshal(pb.CSVJSON, &csv); err != nil {
			continue
		}
		csv.Namespace = cn.Namespace
		cn.OperatorGroups = append(cn.OperatorGroups, rules.Verdict(&csv))
	}
}

// plan makes the namespace's InstallPlan.
func (q *QueryCluster) plan(ctx context.Context, s *cluster.State, cn *ClusterNamespace, pbs map[[2]string]*cluster.PlanBundle) (*ClusterPlan, error) {
	if cn.Answer == nil || cn.Answer.Status != install.Installable {
		return nil, nil
	}
	var ops []cluster.PlanOperator
	var notUnpacked []string
	for _, op := range cn.Answer.Operators {
		if op.UpToDate {
			continue
		}
		pb := pbs[[2]string{op.CatalogSourceNamespace + "/" + op.CatalogSource, op.Package + "/" + op.Bundle}]
		if pb == nil {
			return nil, fmt.Errorf("bundle %s of CatalogSource %s/%s: not found in its catalog's files", op.Bundle, op.CatalogSourceNamespace, op.CatalogSource)
		}
		po := cluster.PlanOperator{Bundle: pb, Source: cluster.CatalogRef{Name: op.CatalogSource, Namespace: op.CatalogSourceNamespace},
			Channel: op.Channel, Replaces: op.Replaces, NewSubscription: op.GeneratedSubscription != ""}
		if pb.Image != "" && !pb.HasObjects() {
			if q.BundleImages != nil {
				pull := q.pulled
				if pull == nil {
					pull = func(ctx context.Context, image string) (*cluster.PlanBundle, error) {
						return pullPlanBundle(ctx, q.BundleImages, image)
					}
				}
				u, err := pull(ctx, pb.Image)
				if err != nil {
					return nil, fmt.Errorf("bundle %s: %w", op.Bundle, err)
				}
				po.Unpacked = u
			} else {
				notUnpacked = append(notUnpacked, op.Bundle)
			}
		}
		ops = append(ops, po)
	}
	p, err := cluster.NewPlan(cn.Namespace, ops)
	if err != nil {
		return nil, err
	}
	applied := p.Applied
	if applied == nil {
		applied = p.Steps
	}
	cp := &ClusterPlan{Plan: p, Effects: s.Effects(cn.Namespace, applied), NotUnpacked: notUnpacked}
	if cp.Permissions, err = cluster.Permissions(applied, s); err != nil {
		return nil, err
	}
	return cp, nil
}

// pullPlanBundle renders a bundle image as the InstallPlan's unpack job
// does.
func pullPlanBundle(ctx context.Context, sources SourceResolver, image string) (*cluster.PlanBundle, error) {
	src, err := sources.Resolve(ctx, image)
	if err != nil {
		return nil, err
	}
	if src.Close != nil {
		defer src.Close()
	}
	if src.Config == nil || len(src.Config.Bundles) != 1 {
		return nil, fmt.Errorf("%s is not a bundle image", image)
	}
	return cluster.NewUnpackedBundle(&src.Config.Bundles[0])
}
