package crdsafety

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// readPair reads testdata/pairs/NAME.old.json and .new.json.
func readPair(t testing.TB, name string) (CRD, CRD) {
	t.Helper()
	var out [2]CRD
	for i, side := range []string{"old", "new"} {
		data, err := os.ReadFile(filepath.Join("testdata", "pairs", name+"."+side+".json"))
		if err != nil {
			t.Fatal(err)
		}
		c, ok, err := ParseManifest(data)
		if err != nil || !ok {
			t.Fatalf("%s.%s: %v %v", name, side, ok, err)
		}
		out[i] = c
	}
	return out[0], out[1]
}

func pairNames(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "pairs", "*.old.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no pairs: %v", err)
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".old.json"))
	}
	return names
}

// TestRealPairs: CRDs of updates of real catalogs (testdata/README.md),
// what each OLM does with them.
func TestRealPairs(t *testing.T) {
	t.Parallel()
	c := newChecker(t)
	tests := []struct {
		pair string
		// want are lines of the report, whole.
		want []string
		v0   Verdict
		v1   Verdict
	}{
		{"eda-connectcontrollerconfigs", []string{
			`CRD connectcontrollerconfigs.config.eda.nokia.com: scope: scope changed : "Namespaced" -> "Cluster" (OLM v0 and v1 refuse it)`,
		}, Refuses, Refuses},
		{"minio-policybindings", []string{
			"CRD policybindings.sts.min.io v1alpha1 ^.status: existingFieldRemoval: removed field (OLM v1 refuses it)",
			"CRD policybindings.sts.min.io v1beta1 ^.status: existingFieldRemoval: removed field (OLM v1 refuses it)",
		}, "", Refuses},
		{"stackable-listenerclasses", []string{
			`CRD listenerclasses.listeners.stackable.tech v1alpha1 ^.spec.serviceExternalTrafficPolicy: default: default value removed : "\"Local\"" (OLM v1 refuses it)`,
			"CRD listenerclasses.listeners.stackable.tech v1alpha1 ^.spec.serviceExternalTrafficPolicy: nullable: nullable added : false -> true (OLM v1 refuses it)",
		}, "", Refuses},
		{"stackable-s3connections", []string{
			"CRD s3connections.s3.stackable.tech v1alpha1 ^.spec.port: maximum: maximum constraint added when there was none previously : 65535 (OLM v1 refuses it; OLM v0 refuses it if an existing resource breaks it)",
		}, IfResourcesBreak, Refuses},
		{"percona-pxcbackups", []string{
			// Pruning unknown fields from now on fails no validation.
			"CRD perconaxtradbclusterbackups.pxc.percona.com v1 ^.spec: unhandled: unhandled changes found (XPreserveUnknownFields &true -> nil) (OLM v1 refuses it)",
		}, "", Refuses},
		{"victoriametrics-vmrules", []string{
			`CRD vmrules.operator.victoriametrics.com v1beta1 ^.spec.groups.items.rules.items.expr: type: type changed : "" -> "string" (OLM v1 refuses it; OLM v0 refuses it if an existing resource breaks it)`,
			`CRD vmrules.operator.victoriametrics.com v1beta1 ^.spec.groups.items.rules.items.expr: unhandled: unhandled changes found (AnyOf <complex value> -> nil; XIntOrString true -> false) (OLM v1 refuses it; OLM v0 refuses it if an existing resource breaks it)`,
			"CRD vmrules.operator.victoriametrics.com v1beta1 ^.spec.groups.items.rules.items.expr.anyOf[0]: existingFieldRemoval: removed field (OLM v1 refuses it)",
		}, IfResourcesBreak, Refuses},
		{"amd-deviceconfigs", []string{
			// As operator-controller words go-cmp's diff of the
			// additionalProperties that the new version describes.
			`CRD deviceconfigs.amd.com v1alpha1 ^.status.nodeModuleStatus: unhandled: unhandled changes found ("bootId" <empty> -> {Type: "string"}; "status" <empty> -> {; Description <empty> -> "UpgradeState captures the state of the upgrade process on a node"; Type <empty> -> "string"; "upgradeStartTime" <empty> -> {Type: "string"}) (OLM v1 refuses it; OLM v0 refuses it if an existing resource breaks it)`,
		}, IfResourcesBreak, Refuses},
	}
	for _, tc := range tests {
		t.Run(tc.pair, func(t *testing.T) {
			o, n := readPair(t, tc.pair)
			res := Result{Changes: compareCRDs(t, c, []CRD{o}, []CRD{n})}
			var lines []string
			for _, ch := range res.Changes {
				lines = append(lines, ch.String())
			}
			for _, w := range tc.want {
				if !slices.Contains(lines, w) {
					t.Errorf("report lacks\n  %s\nreport:\n  %s", w, strings.Join(lines, "\n  "))
				}
			}
			if v0, v1 := res.Refusals(); v0 != tc.v0 || v1 != tc.v1 {
				t.Errorf("refusals %q %q, want %q %q", v0, v1, tc.v0, tc.v1)
			}
		})
	}
}

// TestSameAnswer: Checker compares two schemas node by node
// (schemaTree), with crdify's comparators; crdify's own runner on the
// whole CRDs must give the same answer, on the real pairs and on every
// case of operator-controller's tests (TestSameAnswerRandom: on random
// ones).
func TestSameAnswer(t *testing.T) {
	t.Parallel()
	c := newChecker(t)
	check := func(t *testing.T, o, n CRD) {
		got := compareOne(t, c, o, n)
		want := referenceChanges(t, o, n)
		if !sameChanges(got, want) {
			t.Errorf("Checker:\n%s\ncrdify:\n%s", report(got), report(want))
		}
		if len(want) == 0 && o.Digest != n.Digest && !strings.Contains(o.Name, "crontabs") {
			t.Errorf("no change found: the pair tests nothing")
		}
	}
	for _, name := range pairNames(t) {
		t.Run(name, func(t *testing.T) {
			o, n := readPair(t, name)
			check(t, o, n)
		})
	}
	for _, tc := range operatorControllerCases() {
		t.Run(tc.name, func(t *testing.T) {
			check(t, toCRD(t, tc.old()), toCRD(t, tc.new()))
		})
	}
}

func report(cs []Change) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString("  " + c.String() + "\n")
	}
	return b.String()
}
