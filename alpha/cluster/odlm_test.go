package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
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
	if got := o.Origin(ObjectKey{KindOperandRegistry, "ibm-common-services", "common-service"}); got != fixture("cp4d-deployment-operand-registry.yaml")[0]+": items[0]" {
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
