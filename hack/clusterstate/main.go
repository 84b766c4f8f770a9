// Command clusterstate writes the state of a cluster built from real
// catalogs, for measuring `opm alpha query cluster` (docs/performance.md):
// Subscriptions spread over namespaces, each with its OperatorGroup (one
// AllNamespaces group in openshift-operators, the others targeting their
// own namespace, one namespace or two), half of them with an installed CSV
// (an older bundle of the channel, the CSV built from the bundle as OLM's
// InstallPlan writes it: alpha/cluster's PlanSteps, with the
// operatorframework.io/properties annotation, then what olm-operator adds),
// the InstallPlan that installed it, its CRDs, the CSVs OLM copies into
// every namespace an AllNamespaces group targets, and a CatalogSource per
// catalog in openshift-marketplace.
//
//	go run ./hack/clusterstate \
//	    -catalog openshift-marketplace/community-operators=../shared/catalogs/community-operators-v4.22 \
//	    -catalog openshift-marketplace/certified-operators=../shared/catalogs/certified-operators-v4.16 \
//	    -catalog openshift-marketplace/okderators=../shared/catalogs/okderators \
//	    -catalog openshift-marketplace/percona-everest=../shared/catalogs/percona-everest \
//	    -subscriptions 200 -namespaces 40 -state DIR [-must-gather DIR -size 1GiB]
//
// -state writes one file per kind, each a List as `kubectl get KIND -A -o
// yaml` writes it. -must-gather writes the same objects as `oc adm
// must-gather` lays them out (`oc adm inspect`: one file per object under
// namespaces/NS/operators.coreos.com/RESOURCE/, docs/cluster.md), with the
// copies of the AllNamespaces CSVs in every namespace of the cluster
// (the state's and OpenShift's own), padded to -size with what a
// must-gather also holds and the reader does not open: container logs,
// events, ConfigMap, Pod and Deployment lists, cluster-scoped resources.
// The same -seed writes the same files.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/fastopm/fastopm/alpha/cluster"
	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
)

type catalogFlags []string

func (c *catalogFlags) String() string     { return strings.Join(*c, ",") }
func (c *catalogFlags) Set(s string) error { *c = append(*c, s); return nil }

func main() {
	var o options
	flag.Var(&o.catalogs, "catalog", "NAMESPACE/NAME=DIR: a catalog and the CatalogSource that serves it (repeatable)")
	flag.IntVar(&o.subscriptions, "subscriptions", 200, "Subscriptions in all")
	flag.IntVar(&o.namespaces, "namespaces", 40, "namespaces with Subscriptions (openshift-operators, with an AllNamespaces OperatorGroup, is one)")
	flag.IntVar(&o.appNamespaces, "app-namespaces", 100, "namespaces without Subscriptions besides OpenShift's own (each gets the copies of the AllNamespaces CSVs)")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the choices")
	flag.StringVar(&o.state, "state", "", "write the state here: a directory of one List file per kind")
	flag.StringVar(&o.mustGather, "must-gather", "", "write the same objects as a must-gather here")
	size := flag.String("size", "1GiB", "the must-gather's size, padded with files the reader does not open")
	flag.Parse()
	var err error
	if o.size, err = parseSize(*size); err != nil {
		fail(err)
	}
	if len(o.catalogs) == 0 || (o.state == "" && o.mustGather == "") {
		fail(errors.New("give -catalog NAMESPACE/NAME=DIR (repeatable) and -state DIR or -must-gather DIR"))
	}
	st, err := generate(context.Background(), o)
	if err != nil {
		fail(err)
	}
	fmt.Println(st)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "clusterstate:", err)
	os.Exit(2)
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"G", 1e9}, {"M", 1e6}, {"K", 1e3}} {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = n, u.m
			break
		}
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("size %q: expected a number with an optional unit (GiB, MiB, KiB, G, M, K)", s)
	}
	return int64(n * float64(mult)), nil
}

type options struct {
	catalogs      catalogFlags
	subscriptions int
	namespaces    int
	appNamespaces int
	seed          uint64
	state         string
	mustGather    string
	size          int64
}

// pkgInfo is a package of a catalog, as the generator uses it.
type pkgInfo struct {
	cat     *catInfo
	name    string
	pkg     *declcfg.Package
	channel string
	// chain is the channel's replaces chain, its head first.
	chain    []*declcfg.Bundle
	replaces map[string]string // bundle → the entry's replaces
	modes    map[string]bool   // install modes the head supports
	owned    []string          // the head's olm.gvk, as Kind.version.group
	// needs are the packages (olm.package.required) and APIs
	// (olm.gvk.required) its bundles require.
	needPkgs, needAPIs []string
}

type catInfo struct {
	namespace, name, dir string
	priority             int
	pkgs                 []*pkgInfo
	// provides are the packages and the APIs (olm.gvk) of its bundles.
	providesPkgs, providesAPIs map[string]bool
}

// object is a Kubernetes object as JSON-able maps.
type object = map[string]any

// world is what is generated.
type world struct {
	rng        *rand.Rand
	clock      time.Time
	serial     int
	namespaces []string // with Subscriptions, openshift-operators first
	others     []string // without: OpenShift's own and applications'
	catalogs   []*catInfo
	kinds      map[string][]object // by kind
	copies     []object            // the installed CSVs of openshift-operators, to copy
	crds       map[string]bool
}

func (w *world) uid() string {
	w.serial++
	h := sha256.Sum256([]byte(strconv.Itoa(w.serial)))
	x := hex.EncodeToString(h[:16])
	return x[:8] + "-" + x[8:12] + "-4" + x[13:16] + "-8" + x[17:20] + "-" + x[20:32]
}

func (w *world) stamp() string {
	w.clock = w.clock.Add(time.Duration(w.rng.IntN(600)) * time.Second)
	return w.clock.Format(time.RFC3339)
}

func (w *world) meta(name, ns string) object {
	m := object{"name": name, "uid": w.uid(), "resourceVersion": strconv.Itoa(100000 + w.serial*7), "creationTimestamp": w.stamp(), "generation": 1}
	if ns != "" {
		m["namespace"] = ns
	}
	return m
}

func (w *world) add(kind string, o object) { w.kinds[kind] = append(w.kinds[kind], o) }

func generate(ctx context.Context, o options) (string, error) {
	w := &world{rng: rand.New(rand.NewPCG(o.seed, 25)), clock: time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC), kinds: map[string][]object{}, crds: map[string]bool{}}
	for i, c := range o.catalogs {
		key, dir, ok := strings.Cut(c, "=")
		ns, name, ok2 := strings.Cut(key, "/")
		if !ok || !ok2 || ns == "" || name == "" || dir == "" {
			return "", fmt.Errorf("-catalog %q: expected NAMESPACE/NAME=DIR", c)
		}
		ci := &catInfo{namespace: ns, name: name, dir: dir, priority: -100 * i}
		if err := loadCatalog(ctx, ci); err != nil {
			return "", err
		}
		w.catalogs = append(w.catalogs, ci)
	}
	if err := w.build(o); err != nil {
		return "", err
	}
	var summary []string
	for _, k := range slices.Sorted(func(y func(string) bool) {
		for k := range w.kinds {
			if !y(k) {
				return
			}
		}
	}) {
		summary = append(summary, fmt.Sprintf("%d %s", len(w.kinds[k]), k))
	}
	out := strings.Join(summary, ", ") + fmt.Sprintf("; %d installed CSVs of openshift-operators copied", len(w.copies))
	if o.state != "" {
		if err := w.writeState(o.state); err != nil {
			return "", err
		}
	}
	if o.mustGather != "" {
		n, files, err := w.writeMustGather(o.mustGather, o.size)
		if err != nil {
			return "", err
		}
		out += fmt.Sprintf("; must-gather: %d files, %d bytes", files, n)
	}
	return out, nil
}

// loadCatalog reads a catalog's packages: the default channel of each,
// its replaces chain, what its head supports and provides.
func loadCatalog(ctx context.Context, ci *catInfo) error {
	cfg, err := declcfg.LoadFS(ctx, os.DirFS(ci.dir))
	if err != nil {
		return fmt.Errorf("catalog %s: %w", ci.dir, err)
	}
	bundles := map[string]*declcfg.Bundle{}
	ci.providesPkgs, ci.providesAPIs = map[string]bool{}, map[string]bool{}
	for i := range cfg.Bundles {
		b := &cfg.Bundles[i]
		bundles[b.Package+"/"+b.Name] = b
		ci.providesPkgs[b.Package] = true
		for _, prop := range b.Properties {
			if prop.Type == property.TypeGVK {
				var g property.GVK
				if json.Unmarshal(prop.Value, &g) == nil {
					ci.providesAPIs[g.Kind+"."+g.Version+"."+g.Group] = true
				}
			}
		}
	}
	channels := map[string]*declcfg.Channel{}
	for i := range cfg.Channels {
		ch := &cfg.Channels[i]
		channels[ch.Package+"/"+ch.Name] = ch
	}
	for i := range cfg.Packages {
		p := &cfg.Packages[i]
		ch := channels[p.Name+"/"+p.DefaultChannel]
		if ch == nil {
			continue
		}
		pi := &pkgInfo{cat: ci, name: p.Name, pkg: p, channel: ch.Name, replaces: map[string]string{}, modes: map[string]bool{}}
		replaced := map[string]bool{}
		byName := map[string]declcfg.ChannelEntry{}
		for _, e := range ch.Entries {
			byName[e.Name] = e
			pi.replaces[e.Name] = e.Replaces
			replaced[e.Replaces] = true
			for _, s := range e.Skips {
				replaced[s] = true
			}
		}
		var head string
		for _, e := range ch.Entries {
			if !replaced[e.Name] && (head == "" || e.Name > head) {
				head = e.Name
			}
		}
		for n, seen := head, map[string]bool{}; n != "" && !seen[n]; n = byName[n].Replaces {
			seen[n] = true
			b := bundles[p.Name+"/"+n]
			if b == nil {
				break
			}
			pi.chain = append(pi.chain, b)
		}
		if len(pi.chain) == 0 {
			continue
		}
		pb, err := cluster.NewPlanBundle(pi.chain[0], p)
		if err != nil || len(pb.CSVJSON) == 0 {
			continue
		}
		var csv v1alpha1.ClusterServiceVersion
		if err := json.Unmarshal(pb.CSVJSON, &csv); err != nil {
			continue
		}
		for _, m := range csv.Spec.InstallModes {
			if m.Supported {
				pi.modes[string(m.Type)] = true
			}
		}
		for _, prop := range pi.chain[0].Properties {
			if prop.Type == property.TypeGVK {
				var g property.GVK
				if json.Unmarshal(prop.Value, &g) == nil {
					pi.owned = append(pi.owned, g.Kind+"."+g.Version+"."+g.Group)
				}
			}
		}
		for _, b := range pi.chain {
			for _, prop := range b.Properties {
				switch prop.Type {
				case property.TypeGVKRequired:
					var g property.GVKRequired
					if json.Unmarshal(prop.Value, &g) == nil {
						pi.needAPIs = append(pi.needAPIs, g.Kind+"."+g.Version+"."+g.Group)
					}
				case property.TypePackageRequired:
					var r property.PackageRequired
					if json.Unmarshal(prop.Value, &r) == nil {
						pi.needPkgs = append(pi.needPkgs, r.PackageName)
					}
				}
			}
		}
		ci.pkgs = append(ci.pkgs, pi)
	}
	sort.Slice(ci.pkgs, func(i, j int) bool { return ci.pkgs[i].name < ci.pkgs[j].name })
	return nil
}

// The namespaces of OpenShift itself (part of them): a must-gather holds
// each, and the AllNamespaces CSVs are copied into each.
var openshiftNamespaces = []string{
	"default", "kube-system", "kube-public", "kube-node-lease", "openshift", "openshift-apiserver", "openshift-apiserver-operator",
	"openshift-authentication", "openshift-authentication-operator", "openshift-cloud-controller-manager", "openshift-cloud-credential-operator",
	"openshift-cluster-machine-approver", "openshift-cluster-node-tuning-operator", "openshift-cluster-samples-operator",
	"openshift-cluster-storage-operator", "openshift-cluster-version", "openshift-config", "openshift-config-managed",
	"openshift-config-operator", "openshift-console", "openshift-console-operator", "openshift-controller-manager",
	"openshift-controller-manager-operator", "openshift-dns", "openshift-dns-operator", "openshift-etcd", "openshift-etcd-operator",
	"openshift-image-registry", "openshift-ingress", "openshift-ingress-canary", "openshift-ingress-operator", "openshift-insights",
	"openshift-kube-apiserver", "openshift-kube-apiserver-operator", "openshift-kube-controller-manager",
	"openshift-kube-controller-manager-operator", "openshift-kube-scheduler", "openshift-kube-scheduler-operator",
	"openshift-kube-storage-version-migrator", "openshift-machine-api", "openshift-machine-config-operator", "openshift-marketplace",
	"openshift-monitoring", "openshift-multus", "openshift-network-diagnostics", "openshift-network-operator", "openshift-oauth-apiserver",
	"openshift-operator-lifecycle-manager", "openshift-ovn-kubernetes", "openshift-service-ca", "openshift-service-ca-operator",
	"openshift-user-workload-monitoring",
}

var teams = []string{"payments", "search", "ml", "data", "web", "edge", "billing", "identity", "storage", "observability"}

// group is a namespace's OperatorGroup and what it asks of a CSV.
type group struct {
	ns      string
	mode    string   // the install mode its targets make
	targets []string // nil: all namespaces
	pkgs    []*pkgInfo
	owned   map[string]bool
}

func (w *world) build(o options) error {
	// Packages whose dependencies no catalog offers would block their
	// namespace as a whole: left out (versions are not checked, so a few
	// still may).
	pkgs, apis := map[string]bool{}, map[string]bool{}
	for _, c := range w.catalogs {
		for k := range c.providesPkgs {
			pkgs[k] = true
		}
		for k := range c.providesAPIs {
			apis[k] = true
		}
	}
	var all []*pkgInfo
	for _, c := range w.catalogs {
		for _, p := range c.pkgs {
			if !slices.ContainsFunc(p.needPkgs, func(n string) bool { return !pkgs[n] }) && !slices.ContainsFunc(p.needAPIs, func(a string) bool { return !apis[a] }) {
				all = append(all, p)
			}
		}
	}
	if len(all) == 0 {
		return errors.New("the catalogs have no package with a CSV")
	}
	nns := max(o.namespaces, 1)
	w.namespaces = []string{"openshift-operators"}
	for i := 1; i < nns; i++ {
		w.namespaces = append(w.namespaces, fmt.Sprintf("%s-%02d", teams[i%len(teams)], i))
	}
	groups := make([]*group, nns)
	groups[0] = &group{ns: "openshift-operators", mode: "AllNamespaces", owned: map[string]bool{}}
	for i := 1; i < nns; i++ {
		g := &group{ns: w.namespaces[i], mode: "OwnNamespace", targets: []string{w.namespaces[i]}, owned: map[string]bool{}}
		switch {
		case i%10 == 3 && i+1 < nns: // watches the next namespace
			g.mode, g.targets = "SingleNamespace", []string{w.namespaces[i+1]}
		case i%10 == 7 && i+1 < nns:
			g.mode, g.targets = "MultiNamespace", []string{w.namespaces[i], w.namespaces[i+1]}
		}
		groups[i] = g
	}
	// openshift-operators holds a sixth of the Subscriptions; the rest
	// are spread over the other namespaces, 1 to 9 each.
	counts := make([]int, nns)
	counts[0] = o.subscriptions / 6
	if nns == 1 {
		counts[0] = o.subscriptions
	}
	for left := o.subscriptions - counts[0]; left > 0 && nns > 1; left-- {
		counts[1+w.rng.IntN(nns-1)]++
	}
	// A package in openshift-operators provides its APIs to every
	// namespace: no other group may provide them too.
	global := map[string]bool{}
	fits := func(g *group, p *pkgInfo) bool {
		if !p.modes[g.mode] || slices.ContainsFunc(g.pkgs, func(q *pkgInfo) bool { return q.name == p.name }) {
			return false
		}
		for _, api := range p.owned {
			if g.owned[api] || (g.mode != "AllNamespaces" && global[api]) {
				return false
			}
		}
		return true
	}
	for i, g := range groups {
		for tries := 0; len(g.pkgs) < counts[i] && tries < 50*counts[i]; tries++ {
			p := all[w.rng.IntN(len(all))]
			if !fits(g, p) || (i == 0 && slices.ContainsFunc(groups[1:], func(h *group) bool { return slices.Contains(h.pkgs, p) })) {
				continue
			}
			g.pkgs = append(g.pkgs, p)
			for _, api := range p.owned {
				g.owned[api] = true
				if i == 0 {
					global[api] = true
				}
			}
		}
	}
	for _, c := range w.catalogs {
		w.catalogSource(c)
	}
	w.others = slices.Clone(openshiftNamespaces)
	for i := range o.appNamespaces {
		w.others = append(w.others, fmt.Sprintf("app-%s-%03d", teams[i%len(teams)], i))
	}
	for _, ns := range w.allNamespaces() {
		w.namespace(ns)
	}
	n := 0
	for _, g := range groups {
		var installed []object
		for _, p := range g.pkgs {
			n++
			csv, err := w.subscription(g, p, n%2 == 0)
			if err != nil {
				return err
			}
			if csv != nil {
				installed = append(installed, csv)
			}
		}
		w.operatorGroup(g, installed)
		if g.targets == nil {
			w.copies = installed
		}
	}
	if n < o.subscriptions {
		fmt.Fprintf(os.Stderr, "clusterstate: %d Subscriptions made of %d asked: the catalogs have too few packages that fit\n", n, o.subscriptions)
	}
	return nil
}

// allNamespaces are the cluster's namespaces, openshift-operators first.
func (w *world) allNamespaces() []string { return slices.Concat(w.namespaces, w.others) }

func (w *world) namespace(ns string) {
	m := w.meta(ns, "")
	delete(m, "generation")
	m["labels"] = map[string]any{"kubernetes.io/metadata.name": ns, "pod-security.kubernetes.io/audit": "restricted", "pod-security.kubernetes.io/warn": "restricted"}
	m["annotations"] = map[string]any{
		"openshift.io/sa.scc.mcs":                 fmt.Sprintf("s0:c%d,c%d", 20+w.serial%900, 5+w.serial%17),
		"openshift.io/sa.scc.supplemental-groups": fmt.Sprintf("%d/10000", 1000000000+w.serial*10000),
		"openshift.io/sa.scc.uid-range":           fmt.Sprintf("%d/10000", 1000000000+w.serial*10000),
	}
	if strings.HasPrefix(ns, "openshift") {
		m["labels"].(map[string]any)["openshift.io/cluster-monitoring"] = "true"
	}
	w.add("Namespace", object{"apiVersion": "v1", "kind": "Namespace", "metadata": m,
		"spec": object{"finalizers": []any{"kubernetes"}}, "status": object{"phase": "Active"}})
}

func (w *world) catalogSource(c *catInfo) {
	m := w.meta(c.name, c.namespace)
	m["annotations"] = map[string]any{"operatorframework.io/managed-by": "marketplace-operator", "target.workload.openshift.io/management": `{"effect": "PreferredDuringScheduling"}`}
	w.add("CatalogSource", object{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource", "metadata": m,
		"spec": object{
			"displayName": c.name, "publisher": "Red Hat", "sourceType": "grpc", "priority": c.priority,
			"image":          "registry.redhat.io/redhat/" + c.name + "-index:v4.16",
			"grpcPodConfig":  object{"nodeSelector": object{"kubernetes.io/os": "linux", "node-role.kubernetes.io/master": ""}, "priorityClassName": "system-cluster-critical", "securityContextConfig": "restricted"},
			"updateStrategy": object{"registryPoll": object{"interval": "10m"}},
		},
		"status": object{
			"connectionState":         object{"address": fmt.Sprintf("%s.%s.svc:50051", c.name, c.namespace), "lastConnect": w.stamp(), "lastObservedState": "READY"},
			"latestImageRegistryPoll": w.stamp(),
			"registryService":         object{"createdAt": w.stamp(), "port": "50051", "protocol": "grpc", "serviceName": c.name, "serviceNamespace": c.namespace},
		}})
}

// subscription makes a package's Subscription in g's namespace; installed,
// also the CSV of an older bundle of its channel, the InstallPlan that
// installed it and its CRDs (the CSV is returned).
func (w *world) subscription(g *group, p *pkgInfo, installed bool) (object, error) {
	m := w.meta(p.name, g.ns)
	m["labels"] = map[string]any{"operators.coreos.com/" + p.name + "." + g.ns: ""}
	approval := "Automatic"
	if w.rng.IntN(10) == 0 {
		approval = "Manual"
	}
	spec := object{"name": p.name, "source": p.cat.name, "sourceNamespace": p.cat.namespace, "installPlanApproval": approval}
	if w.rng.IntN(4) != 0 {
		spec["channel"] = p.channel
	}
	sub := object{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription", "metadata": m, "spec": spec}
	var health []any
	for _, c := range w.catalogs {
		health = append(health, object{"catalogSourceRef": object{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource", "name": c.name, "namespace": c.namespace},
			"healthy": true, "lastUpdated": w.stamp()})
	}
	status := object{"catalogHealth": health, "lastUpdated": w.stamp(),
		"conditions": []any{object{"type": "CatalogSourcesUnhealthy", "status": "False", "reason": "AllCatalogSourcesHealthy", "message": "all available catalogsources are healthy", "lastTransitionTime": w.stamp()}}}
	sub["status"] = status
	if !installed {
		w.add("Subscription", sub)
		return nil, nil
	}
	// An older bundle of the channel: one to three behind its head.
	k := 0
	if len(p.chain) > 1 {
		k = 1 + w.rng.IntN(min(3, len(p.chain)-1))
	}
	b := p.chain[k]
	pb, err := cluster.NewPlanBundle(b, p.pkg)
	if err != nil {
		return nil, fmt.Errorf("%s: bundle %s: %w", p.cat.dir, b.Name, err)
	}
	src := cluster.CatalogRef{Name: p.cat.name, Namespace: p.cat.namespace}
	steps, err := cluster.PlanSteps(pb, g.ns, src, p.replaces[b.Name])
	if err != nil || len(steps) == 0 || steps[0].Resource.Kind != v1alpha1.ClusterServiceVersionKind {
		// A bundle without a CSV: the Subscription stays uninstalled.
		w.add("Subscription", sub)
		return nil, nil
	}
	var csv object
	if err := json.Unmarshal([]byte(steps[0].Resource.Manifest), &csv); err != nil {
		return nil, err
	}
	csvName := steps[0].Resource.Name
	cm, _ := csv["metadata"].(map[string]any)
	if cm == nil {
		cm = object{}
		csv["metadata"] = cm
	}
	for k, v := range w.meta(csvName, g.ns) {
		cm[k] = v
	}
	ann, _ := cm["annotations"].(map[string]any)
	if ann == nil {
		ann = object{}
		cm["annotations"] = ann
	}
	targets := ""
	if g.targets != nil {
		targets = strings.Join(g.targets, ",")
	}
	ann["olm.operatorGroup"], ann["olm.operatorNamespace"], ann["olm.targetNamespaces"] = "og-"+g.ns, g.ns, targets
	if g.targets == nil {
		ann["olm.operatorGroup"] = "global-operators"
	}
	labels, _ := cm["labels"].(map[string]any)
	if labels == nil {
		labels = object{}
		cm["labels"] = labels
	}
	labels["olm.managed"] = "true"
	labels["operators.coreos.com/"+p.name+"."+g.ns] = ""
	now := w.stamp()
	csv["status"] = object{
		"phase": "Succeeded", "reason": "InstallSucceeded", "message": "install strategy completed with no errors",
		"lastUpdateTime": now, "lastTransitionTime": now,
		"conditions": []any{
			object{"phase": "Pending", "reason": "RequirementsUnknown", "message": "requirements not yet checked", "lastUpdateTime": now, "lastTransitionTime": now},
			object{"phase": "InstallReady", "reason": "AllRequirementsMet", "message": "all requirements found, attempting install", "lastUpdateTime": now, "lastTransitionTime": now},
			object{"phase": "Installing", "reason": "InstallSucceeded", "message": "waiting for install components to report healthy", "lastUpdateTime": now, "lastTransitionTime": now},
			object{"phase": "Succeeded", "reason": "InstallSucceeded", "message": "install strategy completed with no errors", "lastUpdateTime": now, "lastTransitionTime": now},
		},
		"requirementStatus": []any{object{"group": "operators.coreos.com", "kind": "ClusterServiceVersion", "name": csvName, "status": "Present", "version": "v1alpha1", "message": "CSV minKubeVersion (1.11.0) less than server version (v1.29.6)"}},
	}
	w.add("ClusterServiceVersion", csv)

	// The InstallPlan that installed it: OLM keeps references to the
	// unpacked bundle's ConfigMap, not the manifests, for bundles with an
	// image.
	ipName := "install-" + randomName(w.rng, 5)
	var plan []any
	props := ann[cluster.StepPropertiesAnnotation]
	for _, s := range steps {
		manifest := s.Resource.Manifest
		if pb.Image != "" {
			ref, _ := json.Marshal(object{"kind": "ConfigMap", "name": cluster.UnpackConfigMapName(pb.Image), "namespace": p.cat.namespace,
				"catalogSourceName": p.cat.name, "catalogSourceNamespace": p.cat.namespace, "replaces": p.replaces[b.Name], "properties": props})
			manifest = string(ref)
		}
		plan = append(plan, object{"resolving": s.Resolving, "status": "Created", "resource": object{
			"group": s.Resource.Group, "version": s.Resource.Version, "kind": s.Resource.Kind, "name": s.Resource.Name,
			"sourceName": s.Resource.CatalogSource, "sourceNamespace": s.Resource.CatalogSourceNamespace, "manifest": manifest}})
		if s.Resource.Kind == "CustomResourceDefinition" && s.Resource.Version == "v1" && !w.crds[s.Resource.Name] {
			w.crds[s.Resource.Name] = true
			if crd := w.crd(s.Resource.Manifest); crd != nil {
				w.add("CustomResourceDefinition", crd)
			}
		}
	}
	ipMeta := w.meta(ipName, g.ns)
	ipMeta["ownerReferences"] = []any{object{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription", "name": p.name, "uid": m["uid"], "blockOwnerDeletion": false, "controller": false}}
	w.add("InstallPlan", object{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan", "metadata": ipMeta,
		"spec":   object{"approval": approval, "approved": true, "clusterServiceVersionNames": []any{csvName}, "generation": 1},
		"status": object{"phase": "Complete", "catalogSources": []any{}, "plan": plan, "startTime": w.stamp(), "completionTime": w.stamp()}})

	spec["startingCSV"] = csvName
	status["installedCSV"], status["currentCSV"], status["state"] = csvName, csvName, "AtLatestKnown"
	status["installPlanGeneration"] = 1
	status["installPlanRef"] = object{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan", "name": ipName, "namespace": g.ns, "resourceVersion": ipMeta["resourceVersion"], "uid": ipMeta["uid"]}
	status["installplan"] = object{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan", "name": ipName, "uuid": ipMeta["uid"]}
	w.add("Subscription", sub)
	return csv, nil
}

// crd is a CRD step's manifest as the cluster holds it once created.
func (w *world) crd(manifest string) object {
	var crd object
	if err := json.Unmarshal([]byte(manifest), &crd); err != nil {
		return nil
	}
	name, _ := crd["metadata"].(map[string]any)["name"].(string)
	meta := w.meta(name, "")
	crd["metadata"] = meta
	spec, _ := crd["spec"].(map[string]any)
	var stored []any
	if spec != nil {
		vs, _ := spec["versions"].([]any)
		for _, v := range vs {
			if vm, ok := v.(map[string]any); ok && vm["storage"] == true {
				stored = append(stored, vm["name"])
			}
		}
	}
	names := object{}
	if spec != nil {
		names, _ = spec["names"].(map[string]any)
	}
	crd["status"] = object{"acceptedNames": names, "storedVersions": stored, "conditions": []any{
		object{"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found", "lastTransitionTime": w.stamp()},
		object{"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted", "lastTransitionTime": w.stamp()},
	}}
	return crd
}

func (w *world) operatorGroup(g *group, installed []object) {
	name := "og-" + g.ns
	spec := object{"upgradeStrategy": "Default"}
	status := []any{""}
	if g.targets == nil {
		name = "global-operators"
	} else {
		spec["targetNamespaces"] = g.targets
		status = nil
		for _, t := range g.targets {
			status = append(status, t)
		}
	}
	m := w.meta(name, g.ns)
	var apis []string
	for _, csv := range installed {
		apis = append(apis, ownedCRDs(csv)...)
	}
	slices.Sort(apis)
	if apis = slices.Compact(apis); len(apis) > 0 {
		m["annotations"] = map[string]any{"olm.providedAPIs": strings.Join(apis, ",")}
	}
	w.add("OperatorGroup", object{"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup", "metadata": m, "spec": spec,
		"status": object{"lastUpdated": w.stamp(), "namespaces": status}})
}

// ownedCRDs are a CSV's owned CRDs as olm.providedAPIs lists them.
func ownedCRDs(csv object) []string {
	spec, _ := csv["spec"].(map[string]any)
	crds, _ := spec["customresourcedefinitions"].(map[string]any)
	owned, _ := crds["owned"].([]any)
	var out []string
	for _, o := range owned {
		d, _ := o.(map[string]any)
		name, _ := d["name"].(string)
		kind, _ := d["kind"].(string)
		version, _ := d["version"].(string)
		_, group, ok := strings.Cut(name, ".")
		if ok && kind != "" && version != "" {
			out = append(out, kind+"."+version+"."+group)
		}
	}
	return out
}

func randomName(r *rand.Rand, n int) string {
	const letters = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[r.IntN(len(letters))]
	}
	return string(b)
}

// copyOf is an installed CSV as OLM copies it into a namespace its
// AllNamespaces group targets.
func copyOf(csv object, ns string) object {
	c := make(object, len(csv))
	for k, v := range csv {
		c[k] = v
	}
	m := make(object)
	for k, v := range csv["metadata"].(map[string]any) {
		m[k] = v
	}
	m["namespace"] = ns
	labels := object{"olm.copiedFrom": "openshift-operators"}
	if l, ok := m["labels"].(map[string]any); ok {
		for k, v := range l {
			labels[k] = v
		}
	}
	m["labels"] = labels
	c["metadata"] = m
	st := object{}
	for k, v := range csv["status"].(map[string]any) {
		st[k] = v
	}
	st["reason"], st["message"] = "Copied", "The operator is running in openshift-operators but is managing this namespace"
	c["status"] = st
	return c
}

// kindFiles are the state's files, a List of each kind, as `kubectl get
// RESOURCE -A -o yaml` writes them.
var kindFiles = []struct{ kind, file string }{
	{"Namespace", "namespaces.yaml"},
	{"CatalogSource", "catalogsources.yaml"},
	{"Subscription", "subscriptions.yaml"},
	{"ClusterServiceVersion", "clusterserviceversions.yaml"},
	{"OperatorGroup", "operatorgroups.yaml"},
	{"InstallPlan", "installplans.yaml"},
	{"CustomResourceDefinition", "customresourcedefinitions.yaml"},
}

func (w *world) writeState(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, kf := range kindFiles {
		objs := w.kinds[kf.kind]
		if kf.kind == "ClusterServiceVersion" {
			// `kubectl get csv -A` lists the copies too, one in every
			// namespace but openshift-operators.
			objs = slices.Clone(objs)
			for _, ns := range w.allNamespaces()[1:] {
				for _, c := range w.copies {
					objs = append(objs, copyOf(c, ns))
				}
			}
		}
		if err := writeList(filepath.Join(dir, kf.file), objs); err != nil {
			return err
		}
	}
	return nil
}

// writeList writes objects as a YAML List, as kubectl does.
func writeList(path string, objs []object) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	bw.WriteString("apiVersion: v1\nitems:\n")
	for _, o := range objs {
		y, err := yaml.Marshal(o)
		if err != nil {
			f.Close()
			return err
		}
		for i, line := range bytes.SplitAfter(bytes.TrimSuffix(y, []byte("\n")), []byte("\n")) {
			if i == 0 {
				bw.WriteString("- ")
			} else {
				bw.WriteString("  ")
			}
			bw.Write(line)
		}
		bw.WriteString("\n")
	}
	bw.WriteString("kind: List\nmetadata:\n  resourceVersion: \"\"\n")
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
