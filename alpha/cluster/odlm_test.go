package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const odlmFixtures = "testdata/odlm"

func fixture(names ...string) []string {
	var out []string
	for _, n := range names {
		out = append(out, filepath.Join(odlmFixtures, n))
	}
	return out
}

func readODLM(t *testing.T, paths ...string) *ODLM {
	t.Helper()
	o, err := ReadODLM(context.Background(), paths...)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestReadODLMFixtures(t *testing.T) {
	o := readODLM(t, odlmFixtures)
	var regs, reqs []string
	for _, r := range o.Registries {
		regs = append(regs, fmt.Sprintf("%s/%s:%d", r.Namespace, r.Name, len(r.Spec.Operators)))
	}
	for _, r := range o.Requests {
		reqs = append(reqs, r.Namespace+"/"+r.Name)
	}
	wantRegs := []string{"cpfs-services/common-service:97", "default/example-service:2", "ibm-common-services/common-service:17"}
	wantReqs := []string{"cp4d/cloudpak-required-common-service", "cp4d/cross-namespace", "cpfs-services/edb-keycloak-request", "default/example-service", "ibm-common-services/common-service"}
	if !slices.Equal(regs, wantRegs) || !slices.Equal(reqs, wantReqs) {
		t.Errorf("registries %v, requests %v; want %v, %v", regs, reqs, wantRegs, wantReqs)
	}
	if o.Files != 8 || len(o.Skipped) != 0 {
		t.Errorf("files %d, skipped %v; want 8 files, none skipped", o.Files, o.Skipped)
	}
	if got := o.Origin(ObjectKey{KindOperandRegistry, "ibm-common-services", "common-service"}); got != fixture("cp4d-deployment-operand-registry.yaml")[0]+":3: items[0]" {
		t.Errorf("origin %q", got)
	}
	// ODLM's defaults, as GetOperandRegistry and GetRegistryKey apply them.
	cp4d := o.Registry("ibm-common-services", "common-service")
	for _, c := range []struct {
		entry                     string
		scope, mode, ns, approval string
		source, sourceNs, channel string
		hasScope, hasMode, hasSrc bool
	}{
		{entry: "ibm-mongodb-operator", scope: "private", mode: "namespace", ns: "ibm-common-services", approval: "Automatic", source: "opencloud-operators", sourceNs: "openshift-marketplace", channel: "v3"},
		{entry: "ibm-licensing-operator", scope: "public", mode: "namespace", ns: "ibm-common-services", approval: "Automatic", source: "opencloud-operators", sourceNs: "openshift-marketplace", channel: "v3"},
		{entry: "redhat-marketplace-operator", scope: "public", mode: "namespace", ns: "openshift-redhat-marketplace", approval: "Automatic", source: "certified-operators", sourceNs: "openshift-marketplace", channel: "stable"},
		{entry: "ibm-db2u-operator", scope: "public", mode: "namespace", ns: "ibm-common-services", approval: "Automatic", channel: "v1.1"},
	} {
		op := cp4d.Operator(c.entry)
		if op == nil {
			t.Fatalf("no entry %s", c.entry)
		}
		got := []string{op.Scope, op.InstallMode, op.Namespace, string(op.InstallPlanApproval), op.SourceName, op.SourceNamespace, op.Channel}
		if want := []string{c.scope, c.mode, c.ns, c.approval, c.source, c.sourceNs, c.channel}; !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", c.entry, got, want)
		}
	}
	sample := o.Registry("default", "example-service")
	if op := sample.Operator("jaeger"); op.InstallMode != "cluster" || op.Scope != "private" || op.Namespace != "default" {
		t.Errorf("jaeger: %+v", op)
	}
	if r := o.Requests[0]; r.Spec.Requests[0].RegistryNamespace != "ibm-common-services" {
		t.Errorf("cloudpak request: registryNamespace %q", r.Spec.Requests[0].RegistryNamespace)
	}
	if r := o.Requests[3]; r.Spec.Requests[0].RegistryNamespace != "default" {
		t.Errorf("sample request: registryNamespace %q, want the request's namespace", r.Spec.Requests[0].RegistryNamespace)
	}
	cs := o.Registry("cpfs-services", "common-service")
	if kc := cs.Operator("keycloak-operator"); kc.Channel != "stable-v24" || !slices.Equal(kc.FallbackChannels, []string{"stable-v22"}) || kc.Namespace != "cpfs-services" {
		t.Errorf("keycloak-operator: %+v", kc)
	}
	if cs.Annotations[odlmExcludedCatalogs] != "certified-operators,community-operators,redhat-marketplace,ibm-cp-automation-foundation-catalog,operatorhubio-catalog" {
		t.Errorf("excluded-catalogsource %q", cs.Annotations[odlmExcludedCatalogs])
	}
}

func TestReadODLMDefaults(t *testing.T) {
	dir := writeFiles(t, map[string]string{"r.yaml": `apiVersion: operator.ibm.com/v1alpha1
kind: OperandRegistry
metadata: {name: reg, namespace: ns1}
spec:
  operators:
  - {name: a, packageName: pa, channel: v1}
  - {name: b, packageName: pb, channel: v1, scope: public, installMode: cluster, namespace: other, installPlanApproval: Manual}
  - {name: c, packageName: pc, channel: v1, installMode: no-op, targetNamespaces: []}
---
apiVersion: operator.ibm.com/v1alpha1
kind: OperandRequest
metadata: {name: req, namespace: ns2}
spec:
  requests:
  - registry: reg
    operands: [{name: a}]
  - registry: reg
    registryNamespace: ns1
    operands: [{name: b}]
`})
	o := readODLM(t, dir)
	reg := o.Registries[0]
	want := []ODLMOperator{
		{Name: "a", PackageName: "pa", Channel: "v1", Scope: "private", InstallMode: "namespace", Namespace: "ns1", InstallPlanApproval: "Automatic"},
		{Name: "b", PackageName: "pb", Channel: "v1", Scope: "public", InstallMode: "cluster", Namespace: "other", InstallPlanApproval: "Manual"},
		{Name: "c", PackageName: "pc", Channel: "v1", Scope: "private", InstallMode: "no-op", Namespace: "ns1", InstallPlanApproval: "Automatic", TargetNamespaces: []string{}},
	}
	if !reflect.DeepEqual(reg.Spec.Operators, want) {
		t.Errorf("operators:\n%+v\nwant\n%+v", reg.Spec.Operators, want)
	}
	req := o.Requests[0].Spec.Requests
	if req[0].RegistryNamespace != "ns2" || req[1].RegistryNamespace != "ns1" {
		t.Errorf("registryNamespace %q, %q; want ns2 (the request's), ns1", req[0].RegistryNamespace, req[1].RegistryNamespace)
	}
}

func TestReadODLMInputs(t *testing.T) {
	reg := func(name string) string {
		return `{"apiVersion": "operator.ibm.com/v1alpha1", "kind": "OperandRegistry", "metadata": {"name": "` + name + `", "namespace": "ns"}, "spec": {"operators": [{"name": "a", "packageName": "p", "channel": "v1"}]}}`
	}
	o := readODLM(t, writeFiles(t, map[string]string{
		// JSON, a JSON List, a stream of two JSON objects, YAML with other kinds.
		"a.json":    reg("a"),
		"b.json":    `{"apiVersion": "v1", "kind": "List", "items": [` + reg("b") + `, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}]}`,
		"c.json":    reg("c") + "\n" + reg("d"),
		"d.yaml":    "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata: {name: s}\n---\napiVersion: operator.ibm.com/v1beta1\nkind: OperandRegistry\nmetadata: {name: x, namespace: ns}\n---\napiVersion: operator.ibm.com/v1alpha1\nkind: OperandConfig\nmetadata: {name: x, namespace: ns}\n",
		"e.yaml":    "# the same object again: kept once\n" + reg("a"),
		"f.txt":     "not read",
		"sub/g.yml": "apiVersion: operator.ibm.com/v1alpha1\nkind: OperandRegistryList\nitems:\n- " + reg("e") + "\n",
	}))
	var names []string
	for _, r := range o.Registries {
		names = append(names, r.Name)
	}
	if !slices.Equal(names, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("registries %v", names)
	}
	wantSkipped := map[string]int{"ConfigMap": 1, "Subscription": 1, "OperandRegistry (operator.ibm.com/v1beta1)": 1, "OperandConfig": 1}
	if !reflect.DeepEqual(o.Skipped, wantSkipped) || o.Files != 6 {
		t.Errorf("skipped %v, files %d; want %v, 6", o.Skipped, o.Files, wantSkipped)
	}
}

func TestReadODLMErrors(t *testing.T) {
	const head = "apiVersion: operator.ibm.com/v1alpha1\nkind: OperandRegistry\nmetadata: {name: r, namespace: ns}\n"
	const reqHead = "apiVersion: operator.ibm.com/v1alpha1\nkind: OperandRequest\nmetadata: {name: q, namespace: ns}\n"
	for _, c := range []struct {
		name, body, want string
	}{
		{"malformed YAML", head + "spec: {}\n---\n" + head + "spec:\n  operators: [\n", "r.yaml:10: did not find expected node content"},
		{"no name", "apiVersion: operator.ibm.com/v1alpha1\nkind: OperandRegistry\nmetadata: {namespace: ns}\n", "r.yaml: OperandRegistry without metadata.name"},
		{"no namespace", "apiVersion: operator.ibm.com/v1alpha1\nkind: OperandRequest\nmetadata: {name: q}\nspec: {requests: []}\n", "r.yaml: OperandRequest q without metadata.namespace (a namespaced kind)"},
		{"operators not a list", head + "spec: {operators: {name: a}}\n", "r.yaml: OperandRegistry ns/r: json: cannot unmarshal object into Go struct field OperandRegistrySpec.spec.operators of type []cluster.ODLMOperator"},
		{"entry without name", head + "spec: {operators: [{packageName: p, channel: v1}]}\n", "r.yaml: OperandRegistry ns/r: spec.operators[0] has no name"},
		{"entry without package", head + "spec: {operators: [{name: a, channel: v1}]}\n", "r.yaml: OperandRegistry ns/r: spec.operators[0] (a) has no packageName"},
		{"bad scope", head + "spec: {operators: [{name: a, packageName: p, channel: v1, scope: Public}]}\n", `r.yaml: OperandRegistry ns/r: spec.operators[0] (a): scope "Public" is neither public nor private`},
		{"request without registry", reqHead + "spec: {requests: [{operands: [{name: a}]}]}\n", "r.yaml: OperandRequest ns/q: spec.requests[0] has no registry"},
		{"operand without name", reqHead + "spec: {requests: [{registry: r, operands: [{kind: X}]}]}\n", "r.yaml: OperandRequest ns/q: spec.requests[0].operands[0] has no name"},
		{"twice, other content", head + "spec: {operators: [{name: a, packageName: p, channel: v1}]}\n---\n" + head + "spec: {operators: [{name: a, packageName: p, channel: v2}]}\n",
			"r.yaml:6: OperandRegistry ns/r is also in "},
		{"not an object", "- a\n- b\n", "r.yaml: not a Kubernetes object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"r.yaml": c.body})
			_, err := ReadODLM(context.Background(), filepath.Join(dir, "r.yaml"))
			if err == nil || !strings.HasPrefix(err.Error(), "odlm: ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v; want odlm: …%s…", err, c.want)
			}
		})
	}
	if _, err := ReadODLM(context.Background(), "testdata/odlm/no-such-file.yaml"); err == nil || !strings.Contains(err.Error(), "no-such-file.yaml") {
		t.Errorf("missing file: %v", err)
	}
}

// catalogs is a PackageManifests over a few catalogs in
// openshift-marketplace (the global namespace) and ns1.
func catalogs(cs ...CatalogPackages) *PackageManifests {
	return &PackageManifests{GlobalNamespace: "openshift-marketplace", Catalogs: cs}
}

func TestPackageManifests(t *testing.T) {
	p := catalogs(
		CatalogPackages{"openshift-marketplace", "b", 0, map[string][]string{"p": {"v1"}}},
		CatalogPackages{"ns1", "a", 5, map[string][]string{"p": {"v2"}}},
		CatalogPackages{"ns2", "c", 0, map[string][]string{"p": {"v3"}}},
		CatalogPackages{"openshift-marketplace", "d", 0, map[string][]string{"q": {"v1"}}},
	)
	names := func(pcs []PackageCatalog) (out []string) {
		for _, pc := range pcs {
			out = append(out, pc.Namespace+"/"+pc.Name)
		}
		return out
	}
	if got := names(p.PackageCatalogs("ns1", "p")); !slices.Equal(got, []string{"ns1/a", "openshift-marketplace/b"}) {
		t.Errorf("ns1: %v", got)
	}
	if got := names(p.PackageCatalogs("openshift-marketplace", "p")); !slices.Equal(got, []string{"openshift-marketplace/b"}) {
		t.Errorf("global: %v", got)
	}
	if got := names(p.PackageCatalogs("ns3", "r")); got != nil {
		t.Errorf("unknown package: %v", got)
	}
}

func TestChooseCatalog(t *testing.T) {
	mk := func(ns, name string, prio int, chs ...string) CatalogPackages {
		return CatalogPackages{ns, name, prio, map[string][]string{"pkg": chs}}
	}
	const om = "openshift-marketplace"
	for _, c := range []struct {
		name                    string
		cat                     PackageCatalogs
		source, sourceNs, ch    string
		fallbacks, excluded     []string
		odlmCat                 string
		wantSrc, wantNs, wantCh string
		wantHow                 string
	}{
		{name: "no PackageManifest: as written", cat: catalogs(CatalogPackages{om, "other", 0, map[string][]string{"another": {"v1"}}}), source: "s", sourceNs: om, ch: "v1", wantSrc: "s", wantNs: om, wantCh: "v1", wantHow: "no PackageManifest"},
		{name: "no PackageManifests at all (nil)", source: "", sourceNs: "", ch: "v1", wantCh: "v1", wantHow: "as written"},
		{name: "source given, channel there", cat: catalogs(mk(om, "s", 0, "v1", "v2"), mk(om, "t", 9, "v1")), source: "s", sourceNs: om, ch: "v1", wantSrc: "s", wantNs: om, wantCh: "v1"},
		{name: "source given, highest fallback there", cat: catalogs(mk(om, "s", 0, "v4.0", "v4.2", "v4.10")), source: "s", sourceNs: om, ch: "v5", fallbacks: []string{"v4.2", "v4.10", "v4.0"}, wantSrc: "s", wantNs: om, wantCh: "v4.10", wantHow: "fallback channel v4.10"},
		{name: "source given, fallback looked up by its version (ODLM's quirk)", cat: catalogs(mk(om, "s", 0, "stable-v1.25")), source: "s", sourceNs: om, ch: "stable", fallbacks: []string{"stable-v1.25"}, wantHow: "no catalog"},
		{name: "source given, fallback found by its version", cat: catalogs(mk(om, "s", 0, "v1.25")), source: "s", sourceNs: om, ch: "stable", fallbacks: []string{"stable-v1.25"}, wantSrc: "s", wantNs: om, wantCh: "stable-v1.25"},
		{name: "source given, not offering the package", cat: catalogs(mk(om, "t", 0, "v1")), source: "s", sourceNs: om, ch: "v1", wantHow: "the registry's catalog openshift-marketplace/s has neither"},
		{name: "only sourceName: chosen among catalogs", cat: catalogs(mk(om, "t", 0, "v1")), source: "s", ch: "v1", wantSrc: "t", wantNs: om, wantCh: "v1"},
		{name: "the operator's namespace first", cat: catalogs(mk(om, "a", 100, "v1"), mk("ns1", "z", -5, "v1")), ch: "v1", wantSrc: "z", wantNs: "ns1", wantCh: "v1", wantHow: "preferred to openshift-marketplace/a"},
		{name: "then priority", cat: catalogs(mk(om, "a", 0, "v1"), mk(om, "b", 10, "v1")), ch: "v1", wantSrc: "b", wantNs: om, wantCh: "v1"},
		{name: "then ODLM's catalog", cat: catalogs(mk(om, "a", 0, "v1"), mk(om, "b", 0, "v1")), ch: "v1", odlmCat: om + "/b", wantSrc: "b", wantNs: om, wantCh: "v1"},
		{name: "then name", cat: catalogs(mk(om, "b", 0, "v1"), mk(om, "a", 0, "v1")), ch: "v1", wantSrc: "a", wantNs: om, wantCh: "v1"},
		{name: "only catalogs offering the channel", cat: catalogs(mk(om, "a", 0, "v2"), mk(om, "b", 0, "v1")), ch: "v1", wantSrc: "b", wantNs: om, wantCh: "v1"},
		{name: "excluded by name", cat: catalogs(mk(om, "certified-operators", 0, "v1"), mk(om, "b", -1, "v1")), ch: "v1", excluded: []string{"certified-operators"}, wantSrc: "b", wantNs: om, wantCh: "v1", wantHow: "excluded by the registry's excluded-catalogsource annotation: openshift-marketplace/certified-operators"},
		{name: "excluded: ODLM does not trim the annotation's spaces", cat: catalogs(mk(om, "a", 0, "v1"), mk(om, "b", 1, "v1")), ch: "v1", excluded: []string{"x", " b"}, wantSrc: "b", wantNs: om, wantCh: "v1"},
		{name: "all excluded", cat: catalogs(mk(om, "certified-operators", 0, "v1")), ch: "v1", excluded: []string{"certified-operators"}, wantHow: "no catalog in namespace ns1 offers"},
		{name: "fallback: highest version any catalog offers", cat: catalogs(mk(om, "a", 0, "stable-v1.22"), mk(om, "b", 0, "stable-v1.22", "stable-v1.25")), ch: "stable", fallbacks: []string{"stable-v1.22", "stable-v1.25"}, wantSrc: "b", wantNs: om, wantCh: "stable-v1.25"},
		{name: "fallback: its catalogs sorted", cat: catalogs(mk(om, "b", 0, "v1.22"), mk(om, "a", 0, "v1.22")), ch: "stable", fallbacks: []string{"v1.22"}, wantSrc: "a", wantNs: om, wantCh: "v1.22"},
		{name: "no channel, no fallback", cat: catalogs(mk(om, "a", 0, "v2")), ch: "v1", fallbacks: []string{"v0.9"}, wantHow: `no catalog in namespace ns1 offers channel "v1" of pkg or a fallback channel "v0.9"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			op := &ODLMOperator{Name: "e", PackageName: "pkg", Namespace: "ns1", SourceName: c.source, SourceNamespace: c.sourceNs, Channel: c.ch, FallbackChannels: c.fallbacks}
			odlmName, odlmNs := "", ""
			if c.odlmCat != "" {
				odlmNs, odlmName, _ = strings.Cut(c.odlmCat, "/")
			}
			got := chooseCatalog(c.cat, op, "ns1", odlmName, odlmNs, c.excluded)
			if got.source != c.wantSrc || got.sourceNamespace != c.wantNs || got.channel != c.wantCh || !strings.Contains(got.how, c.wantHow) {
				t.Errorf("got %q %q %q (%s); want %q %q %q (…%s…)", got.source, got.sourceNamespace, got.channel, got.how, c.wantSrc, c.wantNs, c.wantCh, c.wantHow)
			}
		})
	}
}

func TestODLMSemver(t *testing.T) {
	for in, want := range map[string]string{"stable-v1.25": "v1.25", "v3": "v3", "v4.0": "v4.0", "4.5": "4.5", "stable": "v0.0.0", "v1.2.3.4": "v1.2.3", "beta-2": "2", "stable-v26": "v26"} {
		if got := findSemantic(in); got != want {
			t.Errorf("findSemantic(%q) = %q, want %q", in, got, want)
		}
	}
	// As x/mod/semver sorts them: invalid first (by text), v1 == v1.0.0
	// broken by text, numbers by value.
	l := []string{"v10", "v2.1", "4.5", "v01", "v1.0.0", "v1", "v2.10", "v0.0.0", "2"}
	sortByVersion(l)
	if want := []string{"2", "4.5", "v01", "v0.0.0", "v1", "v1.0.0", "v2.1", "v2.10", "v10"}; !slices.Equal(l, want) {
		t.Errorf("sorted %v, want %v", l, want)
	}
	ann := map[string]string{"ns.a.x/request": "v4.1", "ns.b.x/request": "v4.0", "ns.c.x/operatorNamespace": "v1", "ns.d.x/request": "stable"}
	// "stable" is v0.0.0 to ODLM: a valid version, the lowest.
	for cur, want := range map[string]string{"v4.1": "v4.1", "v5": "stable", "": "stable"} {
		if got := minSemverFromAnnotations(ann, cur); got != want {
			t.Errorf("minSemverFromAnnotations(cur %q) = %q, want %q", cur, got, want)
		}
	}
	if got := minSemverFromAnnotations(map[string]string{"ns.a.x/request": "4.5"}, "v1"); got != "" {
		t.Errorf("no valid version: %q", got)
	}
}

// subLine is a Subscription in one line: namespace/name channel
// source@sourceNamespace approval.
func subLine(s *v1alpha1.Subscription) string {
	return fmt.Sprintf("%s/%s %s %s@%s %s", s.Namespace, s.Name, s.Spec.Channel, s.Spec.CatalogSource, s.Spec.CatalogSourceNamespace, s.Spec.InstallPlanApproval)
}

func subLines(a *ODLMAnswer) []string {
	var out []string
	for _, s := range a.Subscriptions {
		out = append(out, subLine(s))
	}
	return out
}

func ogLines(a *ODLMAnswer) []string {
	var out []string
	for _, og := range a.OperatorGroups {
		out = append(out, fmt.Sprintf("%s/%s %v", og.Namespace, og.Name, og.Spec.TargetNamespaces))
	}
	return out
}

// outcomeLine is an outcome in one line: operand action subscription
// phase problem.
func outcomeLines(a *ODLMAnswer) []string {
	var out []string
	for _, o := range a.Outcomes {
		l := fmt.Sprintf("%s %s %s %s", o.Operand, o.Action, o.Subscription, o.Phase)
		if o.Problem != "" {
			l += ": " + o.Problem
		}
		out = append(out, l)
	}
	return out
}

func checkLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n  %s\nwant\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestODLMSampleSubscriptions(t *testing.T) {
	o := readODLM(t, fixture("odlm-sample-operandregistry.yaml", "odlm-sample-operandrequest.yaml")...)
	a := o.Subscriptions(nil, nil)
	checkLines(t, "subscriptions", subLines(a), []string{
		"default/mongodb-atlas-kubernetes stable community-operators@openshift-marketplace Automatic",
		"openshift-operators/jaeger stable community-operators@openshift-marketplace Automatic",
	})
	// installMode cluster: no OperatorGroup (openshift-operators has
	// one); the other entry's namespace gets ODLM's.
	checkLines(t, "operator groups", ogLines(a), []string{"default/operand-deployment-lifecycle-manager-operatorgroup [default]"})
	checkLines(t, "outcomes", outcomeLines(a), []string{
		"jaeger create openshift-operators/jaeger Installing",
		"mongodb-atlas-kubernetes create default/mongodb-atlas-kubernetes Installing",
	})
	if a.Outcomes[0].OperatorGroup != "" || a.Outcomes[1].OperatorGroup != "default/operand-deployment-lifecycle-manager-operatorgroup" {
		t.Errorf("OperatorGroups of the outcomes: %q, %q", a.Outcomes[0].OperatorGroup, a.Outcomes[1].OperatorGroup)
	}
	// The whole Subscription, as generateClusterObjects builds it.
	want := &v1alpha1.Subscription{
		TypeMeta: metav1.TypeMeta{APIVersion: "operators.coreos.com/v1alpha1", Kind: "Subscription"},
		ObjectMeta: metav1.ObjectMeta{Name: "jaeger", Namespace: "openshift-operators",
			Labels: map[string]string{"operator.ibm.com/opreq-control": "true"},
			Annotations: map[string]string{
				"default.example-service/registry":                 "true",
				"default.example-service/config":                   "true",
				"default.example-service.jaeger/request":           "stable",
				"default.example-service.jaeger/operatorNamespace": "openshift-operators",
			}},
		Spec: &v1alpha1.SubscriptionSpec{Channel: "stable", Package: "jaeger", CatalogSource: "community-operators", CatalogSourceNamespace: "openshift-marketplace", InstallPlanApproval: "Automatic"},
	}
	if !reflect.DeepEqual(a.Subscriptions[1], want) {
		g, _ := json.Marshal(a.Subscriptions[1])
		w, _ := json.Marshal(want)
		t.Errorf("jaeger's Subscription:\n%s\nwant\n%s", g, w)
	}
	og := a.OperatorGroups[0]
	if og.Kind != "OperatorGroup" || og.APIVersion != "operators.coreos.com/v1" || og.Labels[ODLMLabel] != "true" {
		t.Errorf("OperatorGroup %+v", og)
	}
	// A namespace with an OperatorGroup gets none.
	st := &State{OperatorGroups: []*operatorsv1.OperatorGroup{{ObjectMeta: metav1.ObjectMeta{Name: "og", Namespace: "default"}}}}
	if a := o.Subscriptions(nil, st); len(a.OperatorGroups) != 0 || len(a.Subscriptions) != 2 {
		t.Errorf("with an OperatorGroup in default: %v, %v", ogLines(a), subLines(a))
	}
}

func TestODLMCommonServices38(t *testing.T) {
	cp4d := fixture("cp4d-deployment-operand-registry.yaml")[0]
	t.Run("install.md's request", func(t *testing.T) {
		o := readODLM(t, cp4d, fixture("ibm-common-service-operator-install-operandrequest.yaml")[0])
		a := o.Subscriptions(nil, nil)
		var want []string
		for _, p := range []string{"ibm-auditlogging-operator-app", "ibm-cert-manager-operator", "ibm-commonui-operator-app", "ibm-healthcheck-operator-app", "ibm-iam-operator",
			"ibm-ingress-nginx-operator-app", "ibm-licensing-operator-app", "ibm-management-ingress-operator-app", "ibm-mongodb-operator-app", "ibm-monitoring-exporters-operator-app",
			"ibm-monitoring-grafana-operator-app", "ibm-monitoring-prometheusext-operator-app", "ibm-platform-api-operator-app"} {
			want = append(want, "ibm-common-services/"+p+" v3 opencloud-operators@openshift-marketplace Automatic")
		}
		checkLines(t, "subscriptions", subLines(a), want)
		checkLines(t, "operator groups", ogLines(a), []string{"ibm-common-services/operand-deployment-lifecycle-manager-operatorgroup [ibm-common-services]"})
		if len(a.Problems()) != 0 || len(a.Outcomes) != 13 {
			t.Errorf("outcomes %v", outcomeLines(a))
		}
		// The private ibm-mongodb-operator is requested from its
		// registry's namespace: allowed.
		if a.Outcomes[1].Operand != "ibm-mongodb-operator" || a.Outcomes[1].Action != ODLMCreate || a.Outcomes[1].OperatorGroup != "" || a.Outcomes[0].OperatorGroup == "" {
			t.Errorf("outcomes %+v %+v", a.Outcomes[0], a.Outcomes[1])
		}
	})
	t.Run("from another namespace", func(t *testing.T) {
		o := readODLM(t, cp4d, fixture("ours-cross-namespace-request.yaml")[0])
		a := o.Subscriptions(nil, nil)
		checkLines(t, "subscriptions", subLines(a), []string{"ibm-common-services/ibm-licensing-operator-app v3 opencloud-operators@openshift-marketplace Automatic"})
		checkLines(t, "outcomes", outcomeLines(a), []string{
			"ibm-mongodb-operator none  : subscription ibm-mongodb-operator is a private operator. It can only be request within the OperandRegistry namespace",
			"ibm-licensing-operator create ibm-common-services/ibm-licensing-operator-app Installing",
			"ibm-metering-operator none  Not Found: Not found subscription ibm-metering-operator in the cluster",
			" none  : Not found operandregistry cp4d/no-such-registry in the cluster",
			"ibm-iam-operator none  : not reconciled: ODLM stops reconciling the OperandRequest at its failing spec.requests[1]",
		})
		want := [][]ODLMCondition{
			{{"OutofScope", "True", "subscription ibm-mongodb-operator is a private operator", "subscription ibm-mongodb-operator is a private operator. It can only be request within the OperandRegistry namespace"}},
			{{"Creating", "True", "Creating subscription", "Creating subscription ibm-licensing-operator-app"}},
			{{"NotFound", "True", "Not found subscription", "Not found subscription ibm-metering-operator in the cluster"}},
			{{"NotFound", "True", "Not found operandregistry", "Not found operandregistry cp4d/no-such-registry in the cluster"}},
			nil,
		}
		for i, w := range want {
			if !reflect.DeepEqual(a.Outcomes[i].Conditions, w) {
				t.Errorf("outcome %d: conditions %v, want %v", i, a.Outcomes[i].Conditions, w)
			}
		}
		if n := len(a.Problems()); n != 4 {
			t.Errorf("%d problems, want 4", n)
		}
	})
	t.Run("the registry alone", func(t *testing.T) {
		// Every entry, as requested from the registry's namespace.
		a := readODLM(t, cp4d).Subscriptions(nil, nil)
		if len(a.Subscriptions) != 16 {
			t.Errorf("%d subscriptions, want 16: %v", len(a.Subscriptions), subLines(a))
		}
		for _, s := range a.Subscriptions {
			if s.Annotations["ibm-common-services.common-service.ibm-events-operator/request"] != "" && s.Name != "ibm-events-operator" {
				t.Errorf("annotation of another entry on %s", s.Name)
			}
		}
		checkLines(t, "operator groups", ogLines(a), []string{
			"ibm-common-services/operand-deployment-lifecycle-manager-operatorgroup [ibm-common-services]",
			"openshift-redhat-marketplace/operand-deployment-lifecycle-manager-operatorgroup [openshift-redhat-marketplace]",
		})
		last := a.Outcomes[len(a.Outcomes)-1]
		if !last.Implied || last.Request != "ibm-common-services/common-service" || last.Operand != "ibm-db2u-operator" || last.Phase != "Failed" ||
			last.Problem != "failed to find catalogsource for subscription ibm-common-services/db2u-operator" {
			t.Errorf("db2u (no sourceName): %+v", last)
		}
		if i := slices.IndexFunc(a.Subscriptions, func(s *v1alpha1.Subscription) bool { return s.Name == "redhat-marketplace-operator" }); i < 0 || subLine(a.Subscriptions[i]) != "openshift-redhat-marketplace/redhat-marketplace-operator stable certified-operators@openshift-marketplace Automatic" {
			t.Errorf("redhat-marketplace-operator: %v", subLines(a))
		}
	})
}

// The certified catalog carries none of IBM's common-services packages.
func TestODLMCertifiedCatalogMismatch(t *testing.T) {
	certified := catalogs(CatalogPackages{"openshift-marketplace", "certified-operators", 0, map[string][]string{
		"cpd-platform-operator": {"v6.1"}, "trident-operator": {"stable"},
	}})
	t.Run("3.8.0: the registry's catalog, as written", func(t *testing.T) {
		o := readODLM(t, fixture("cp4d-deployment-operand-registry.yaml", "ibm-common-service-operator-install-operandrequest.yaml")...)
		a := o.Subscriptions(certified, nil)
		if len(a.Subscriptions) != 13 || len(a.Problems()) != 0 {
			t.Fatalf("%v %v", subLines(a), outcomeLines(a))
		}
		for i, s := range a.Subscriptions {
			if s.Spec.CatalogSource != "opencloud-operators" || !strings.HasPrefix(a.Outcomes[i].Catalog, "no PackageManifest ") {
				t.Errorf("%s: %s (%s)", s.Name, s.Spec.CatalogSource, a.Outcomes[i].Catalog)
			}
		}
	})
	t.Run("4.19: no catalog, no Subscription", func(t *testing.T) {
		o := readODLM(t, fixture("ibm-common-service-operator-common-service.yaml", "ibm-common-service-operator-edb-keycloak-request.yaml")...)
		a := o.Subscriptions(certified, nil)
		checkLines(t, "outcomes", outcomeLines(a), []string{"edb-keycloak none  Failed: failed to find catalogsource for subscription cpfs-operators/cloud-native-postgresql"})
		checkLines(t, "operator groups", ogLines(a), []string{"cpfs-operators/operand-deployment-lifecycle-manager-operatorgroup [cpfs-operators]"})
	})
	t.Run("4.19: certified-operators excluded even if it had the package", func(t *testing.T) {
		o := readODLM(t, fixture("ibm-common-service-operator-common-service.yaml", "ibm-common-service-operator-edb-keycloak-request.yaml")...)
		withPG := catalogs(CatalogPackages{"openshift-marketplace", "certified-operators", 0, map[string][]string{"cloud-native-postgresql": {"stable", "stable-v1.25"}}})
		a := o.Subscriptions(withPG, nil)
		if len(a.Subscriptions) != 0 || !strings.Contains(a.Outcomes[0].Catalog, "excluded by the registry's excluded-catalogsource annotation: openshift-marketplace/certified-operators") {
			t.Errorf("%v %+v", subLines(a), a.Outcomes[0])
		}
	})
}

// ibmCatalog is IBM's catalog with the channels the tests need.
var ibmCatalog = catalogs(
	CatalogPackages{"openshift-marketplace", "ibm-operator-catalog", 0, map[string][]string{
		"cloud-native-postgresql":    {"stable-v1.22", "stable-v1.25"},
		"ibm-mongodb-operator-app":   {"v4.0", "v4.1", "v4.2"},
		"ibm-iam-operator":           {"v4.17", "v4.18"},
		"ibm-licensing-operator-app": {"v4.2"},
	}},
	CatalogPackages{"openshift-marketplace", "opencloud-operators", 0, map[string][]string{
		"ibm-mongodb-operator-app": {"v4.0", "v4.1", "v4.2"},
	}},
)

func TestODLMCommonServices419(t *testing.T) {
	reg := fixture("ibm-common-service-operator-common-service.yaml")[0]
	t.Run("edb-keycloak: fallback channel of IBM's catalog", func(t *testing.T) {
		o := readODLM(t, reg, fixture("ibm-common-service-operator-edb-keycloak-request.yaml")[0])
		a := o.Subscriptions(ibmCatalog, nil)
		checkLines(t, "subscriptions", subLines(a), []string{"cpfs-operators/cloud-native-postgresql stable-v1.25 ibm-operator-catalog@openshift-marketplace Automatic"})
		if want := `catalog openshift-marketplace/ibm-operator-catalog, fallback channel stable-v1.25 (no catalog offers "stable")`; a.Outcomes[0].Catalog != want {
			t.Errorf("catalog %q, want %q", a.Outcomes[0].Catalog, want)
		}
	})
	request := func(ns, name string, operands ...string) *OperandRequest {
		r := &OperandRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		req := ODLMRequest{Registry: "common-service", RegistryNamespace: "cpfs-services"}
		for _, op := range operands {
			req.Operands = append(req.Operands, ODLMOperand{Name: op})
		}
		r.Spec.Requests = []ODLMRequest{req}
		return r
	}
	t.Run("two requests, one package: channel conflict", func(t *testing.T) {
		o := readODLM(t, reg)
		o.Requests = []*OperandRequest{request("cpfs-services", "a", "ibm-im-mongodb-operator-v4.1"), request("cpfs-services", "b", "ibm-im-mongodb-operator-v4.0")}
		a := o.Subscriptions(ibmCatalog, nil)
		checkLines(t, "subscriptions", subLines(a), []string{"cpfs-operators/ibm-mongodb-operator-app v4.1 ibm-operator-catalog@openshift-marketplace Automatic"})
		checkLines(t, "outcomes", outcomeLines(a), []string{
			"ibm-im-mongodb-operator-v4.1 create cpfs-operators/ibm-mongodb-operator-app Installing",
			`ibm-im-mongodb-operator-v4.0 update cpfs-operators/ibm-mongodb-operator-app Failed: channel conflict: the Subscription cpfs-operators/ibm-mongodb-operator-app is on channel "v4.1", neither the entry's channel "v4.0" nor a fallback (none given) (ODLM's condition NoConflict False: "No channel conflict on subscription ibm-im-mongodb-operator-v4.0 in the scope")`,
		})
		s := a.Subscriptions[0]
		for k, v := range map[string]string{
			"cpfs-services.a.ibm-im-mongodb-operator-v4.1/request": "v4.1", "cpfs-services.b.ibm-im-mongodb-operator-v4.0/request": "v4.0",
			"cpfs-services.b.ibm-im-mongodb-operator-v4.0/config": "ibm-im-mongodb-operator-v4.0", "cpfs-services.b.ibm-im-mongodb-operator-v4.0/operatorNamespace": "cpfs-operators",
		} {
			if s.Annotations[k] != v {
				t.Errorf("annotation %s = %q, want %q", k, s.Annotations[k], v)
			}
		}
	})
	t.Run("ODLM's Subscription of the state: the lowest requested channel", func(t *testing.T) {
		o := readODLM(t, reg)
		o.Requests = []*OperandRequest{request("cpfs-services", "b", "ibm-im-mongodb-operator-v4.0")}
		old := &v1alpha1.Subscription{
			ObjectMeta: metav1.ObjectMeta{Name: "ibm-mongodb-operator-app", Namespace: "cpfs-operators", Labels: map[string]string{ODLMLabel: "true"},
				Annotations: map[string]string{"cpfs-services.old.ibm-mongodb-operator/request": "v4.2"}},
			Spec: &v1alpha1.SubscriptionSpec{Package: "ibm-mongodb-operator-app", Channel: "v3.23", CatalogSource: "opencloud-operators", CatalogSourceNamespace: "openshift-marketplace", InstallPlanApproval: "Manual"},
		}
		st := &State{Subscriptions: []*v1alpha1.Subscription{old}}
		a := o.Subscriptions(ibmCatalog, st)
		checkLines(t, "subscriptions", subLines(a), []string{"cpfs-operators/ibm-mongodb-operator-app v4.0 ibm-operator-catalog@openshift-marketplace Automatic"})
		checkLines(t, "outcomes", outcomeLines(a), []string{"ibm-im-mongodb-operator-v4.0 update cpfs-operators/ibm-mongodb-operator-app Updating"})
		if old.Spec.Channel != "v3.23" {
			t.Error("the state's Subscription was changed")
		}
		if len(a.OperatorGroups) != 0 {
			t.Errorf("an update creates no OperatorGroup: %v", ogLines(a))
		}
	})
	t.Run("ODLM's Subscription of the state on another channel: a conflict, the spec left", func(t *testing.T) {
		o := readODLM(t, reg)
		o.Requests = []*OperandRequest{request("cpfs-services", "b", "ibm-im-mongodb-operator-v4.0")}
		old := &v1alpha1.Subscription{
			ObjectMeta: metav1.ObjectMeta{Name: "ibm-mongodb-operator-app", Namespace: "cpfs-operators", Labels: map[string]string{ODLMLabel: "true"},
				Annotations: map[string]string{"cpfs-services.old.ibm-mongodb-operator/request": "v4.2"}},
			Spec: &v1alpha1.SubscriptionSpec{Package: "ibm-mongodb-operator-app", Channel: "v4.2", CatalogSource: "opencloud-operators", CatalogSourceNamespace: "openshift-marketplace", InstallPlanApproval: "Manual"},
		}
		a := o.Subscriptions(ibmCatalog, &State{Subscriptions: []*v1alpha1.Subscription{old}})
		checkLines(t, "subscriptions", subLines(a), []string{"cpfs-operators/ibm-mongodb-operator-app v4.2 opencloud-operators@openshift-marketplace Manual"})
		if o := a.Outcomes[0]; o.Action != ODLMUpdate || o.Phase != "Failed" || !strings.HasPrefix(o.Problem, "channel conflict") {
			t.Errorf("outcome %+v", o)
		}
	})
	t.Run("a Subscription ODLM did not create", func(t *testing.T) {
		o := readODLM(t, reg)
		o.Requests = []*OperandRequest{request("cpfs-services", "b", "ibm-im-mongodb-operator-v4.0", "ibm-im-operator-v4.18")}
		mine := &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Name: "mongo", Namespace: "cpfs-operators"},
			Spec: &v1alpha1.SubscriptionSpec{Package: "ibm-mongodb-operator-app", Channel: "v4.2", CatalogSource: "opencloud-operators", CatalogSourceNamespace: "openshift-marketplace"}}
		a := o.Subscriptions(ibmCatalog, &State{Subscriptions: []*v1alpha1.Subscription{mine}})
		checkLines(t, "subscriptions", subLines(a), []string{"cpfs-operators/ibm-iam-operator v4.18 ibm-operator-catalog@openshift-marketplace Automatic"})
		checkLines(t, "outcomes", outcomeLines(a), []string{"ibm-im-mongodb-operator-v4.0 ignore cpfs-operators/mongo ", "ibm-im-operator-v4.18 create cpfs-operators/ibm-iam-operator Installing"})
		if a.Outcomes[0].Note != "Subscription mongo in namespace cpfs-operators isn't created by ODLM. Ignore update/delete it." {
			t.Errorf("note %q", a.Outcomes[0].Note)
		}
	})
	t.Run("a Subscription named as the entry, in the registry's namespace", func(t *testing.T) {
		// GetSubscription looks in the operator's and the registry's
		// namespaces for the entry's name or package.
		o := readODLM(t, reg)
		o.Requests = []*OperandRequest{request("cpfs-services", "b", "ibm-im-operator-v4.18")}
		named := &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Name: "ibm-im-operator-v4.18", Namespace: "cpfs-services"},
			Spec: &v1alpha1.SubscriptionSpec{Package: "something-else"}}
		a := o.Subscriptions(ibmCatalog, &State{Subscriptions: []*v1alpha1.Subscription{named}})
		checkLines(t, "outcomes", outcomeLines(a), []string{"ibm-im-operator-v4.18 ignore cpfs-services/ibm-im-operator-v4.18 "})
	})
	t.Run("ODLM's Subscription without spec, by name", func(t *testing.T) {
		o := readODLM(t, reg)
		o.Requests = []*OperandRequest{request("cpfs-services", "b", "ibm-im-operator-v4.18")}
		bare := &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Name: "ibm-im-operator-v4.18", Namespace: "cpfs-operators", Labels: map[string]string{ODLMLabel: "true"}}}
		a := o.Subscriptions(ibmCatalog, &State{Subscriptions: []*v1alpha1.Subscription{bare}})
		checkLines(t, "subscriptions", subLines(a), []string{"cpfs-operators/ibm-im-operator-v4.18 v4.18 ibm-operator-catalog@openshift-marketplace Automatic"})
	})
	t.Run("two Subscriptions of the package", func(t *testing.T) {
		o := readODLM(t, reg)
		r := request("cpfs-services", "b", "ibm-im-mongodb-operator-v4.0")
		r.Spec.Requests = append(r.Spec.Requests, ODLMRequest{Registry: "common-service", RegistryNamespace: "cpfs-services", Operands: []ODLMOperand{{Name: "ibm-im-operator-v4.18"}}})
		o.Requests = []*OperandRequest{r}
		st := &State{Subscriptions: []*v1alpha1.Subscription{
			{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "cpfs-operators"}, Spec: &v1alpha1.SubscriptionSpec{Package: "ibm-mongodb-operator-app"}},
			{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "cpfs-services"}, Spec: &v1alpha1.SubscriptionSpec{Package: "ibm-mongodb-operator-app"}},
		}}
		a := o.Subscriptions(ibmCatalog, st)
		checkLines(t, "outcomes", outcomeLines(a), []string{
			"ibm-im-mongodb-operator-v4.0 none  : there are multiple subscriptions using package ibm-mongodb-operator-app",
			"ibm-im-operator-v4.18 none  : not reconciled: ODLM stops reconciling the OperandRequest at its failing spec.requests[0]",
		})
	})
	t.Run("no-op and user-managed", func(t *testing.T) {
		o := readODLM(t, reg)
		cs := o.Registries[0]
		i := slices.IndexFunc(cs.Spec.Operators, func(op ODLMOperator) bool { return op.Name == "ibm-im-operator-v4.18" })
		cs.Spec.Operators[i].UserManaged = true
		o.Requests = []*OperandRequest{request("cpfs-services", "b", "ibm-licensing-operator", "ibm-im-operator-v4.18")}
		a := o.Subscriptions(ibmCatalog, nil)
		checkLines(t, "outcomes", outcomeLines(a), []string{"ibm-licensing-operator none  Running", "ibm-im-operator-v4.18 none  Running"})
		if c := a.Outcomes[0].Conditions; len(c) != 1 || c[0] != (ODLMCondition{"NotFound", "True", "operandregistry is not suitable", "ibm-licensing-operator is in maintenance status"}) {
			t.Errorf("no-op conditions %v", c)
		}
		if n := a.Outcomes[1].Note; n != "Skip installing operator ibm-iam-operator because it is managed by user" {
			t.Errorf("user-managed note %q", n)
		}
		// ODLM deletes the Subscription it made of a now user-managed
		// operator, unless labelled not to.
		made := &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Name: "ibm-iam-operator", Namespace: "cpfs-operators", Labels: map[string]string{ODLMLabel: "true"}},
			Spec: &v1alpha1.SubscriptionSpec{Package: "ibm-iam-operator"}}
		a = o.Subscriptions(ibmCatalog, &State{Subscriptions: []*v1alpha1.Subscription{made}})
		if !slices.Equal(a.Deleted, []ObjectKey{{KindSubscription, "cpfs-operators", "ibm-iam-operator"}}) || a.Outcomes[1].Action != ODLMDelete {
			t.Errorf("deleted %v, outcome %+v", a.Deleted, a.Outcomes[1])
		}
		made.Labels[odlmNotUninstallLabel] = "true"
		if a = o.Subscriptions(ibmCatalog, &State{Subscriptions: []*v1alpha1.Subscription{made}}); len(a.Deleted) != 0 || a.Outcomes[1].Action != ODLMNone {
			t.Errorf("do-not-uninstall: deleted %v, outcome %+v", a.Deleted, a.Outcomes[1])
		}
	})
	t.Run("ODLM's own catalog among equals", func(t *testing.T) {
		o := readODLM(t, reg)
		o.Requests = []*OperandRequest{request("cpfs-services", "b", "ibm-im-mongodb-operator-v4.0")}
		odlmSub := &v1alpha1.Subscription{
			ObjectMeta: metav1.ObjectMeta{Name: "operand-deployment-lifecycle-manager-app", Namespace: "cpfs-operators", Labels: map[string]string{"operators.coreos.com/ibm-odlm.cpfs-operators": ""}},
			Spec:       &v1alpha1.SubscriptionSpec{Package: "ibm-odlm", CatalogSource: "opencloud-operators", CatalogSourceNamespace: "openshift-marketplace"},
		}
		a := o.Subscriptions(ibmCatalog, &State{Subscriptions: []*v1alpha1.Subscription{odlmSub}})
		checkLines(t, "subscriptions", subLines(a), []string{"cpfs-operators/ibm-mongodb-operator-app v4.0 opencloud-operators@openshift-marketplace Automatic"})
		if a.ODLMCatalog != "openshift-marketplace/opencloud-operators" {
			t.Errorf("ODLM's catalog %q", a.ODLMCatalog)
		}
		// ODLM's label names at most 63 characters.
		long := "a-namespace-whose-name-is-long-enough-to-be-cut-by-odlm-0123"
		odlmSub.Namespace = long
		odlmSub.Labels = map[string]string{"operators.coreos.com/" + ("ibm-odlm." + long)[:63]: ""}
		if a := o.Subscriptions(ibmCatalog, &State{Subscriptions: []*v1alpha1.Subscription{odlmSub}}); a.ODLMCatalog != "openshift-marketplace/opencloud-operators" {
			t.Errorf("ODLM's catalog, long namespace: %q", a.ODLMCatalog)
		}
		odlmSub.Labels = map[string]string{"operators.coreos.com/ibm-odlm." + long: ""}
		if a := o.Subscriptions(ibmCatalog, &State{Subscriptions: []*v1alpha1.Subscription{odlmSub}}); a.ODLMCatalog != "" {
			t.Errorf("ODLM's catalog, uncut label: %q", a.ODLMCatalog)
		}
		// Without it, by name.
		a = o.Subscriptions(ibmCatalog, nil)
		checkLines(t, "subscriptions", subLines(a), []string{"cpfs-operators/ibm-mongodb-operator-app v4.0 ibm-operator-catalog@openshift-marketplace Automatic"})
	})
}
