package cluster

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
	"github.com/fastopm/fastopm/pkg/bundle"
)

// planFixture is the catalog of testdata/plan, read once.
type planFixture struct {
	bundles map[string]*PlanBundle // by bundle name
	raw     map[string]*declcfg.Bundle
}

func loadPlanFixture(t *testing.T) *planFixture {
	t.Helper()
	cfg, err := declcfg.LoadFS(context.Background(), os.DirFS(filepath.Join("testdata", "plan", "catalog")))
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string]*declcfg.Package{}
	for i := range cfg.Packages {
		pkgs[cfg.Packages[i].Name] = &cfg.Packages[i]
	}
	f := &planFixture{bundles: map[string]*PlanBundle{}, raw: map[string]*declcfg.Bundle{}}
	for i := range cfg.Bundles {
		bd := &cfg.Bundles[i]
		pb, err := NewPlanBundle(bd, pkgs[bd.Package])
		if err != nil {
			t.Fatalf("bundle %s: %v", bd.Name, err)
		}
		f.bundles[bd.Name] = pb
		f.raw[bd.Name] = bd
	}
	return f
}

// olmStepsRecord is one line of testdata/plan/olm-steps.jsonl.
type olmStepsRecord struct {
	Type      string  `json:"type"`
	Catalog   string  `json:"catalog"`
	CatalogNS string  `json:"catalogNamespace"`
	Package   string  `json:"package"`
	Channel   string  `json:"channel"`
	Bundle    string  `json:"bundle"`
	Namespace string  `json:"namespace"`
	Replaces  string  `json:"replaces"`
	Steps     []*Step `json:"steps"`
	Error     string  `json:"error"`
}

func readOLMSteps(t *testing.T) []olmStepsRecord {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "plan", "olm-steps.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []olmStepsRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r olmStepsRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func planStepJSON(t *testing.T, s *Step) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// firstDiff shows a around the first byte where it differs from b.
func planFirstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo, hi := max(0, i-120), min(len(a), i+120)
	return a[lo:hi]
}

// compareBundleSteps compares our steps of one bundle with OLM's: the CSV
// and the bundle's other objects in order (the first `ordered` steps), the
// generated RBAC after them as a set (OLM's order across service accounts
// is random).
func compareBundleSteps(t *testing.T, what string, olm, ours []*Step, ordered int) {
	t.Helper()
	if len(olm) != len(ours) {
		t.Errorf("%s: %d steps, OLM has %d", what, len(ours), len(olm))
		return
	}
	ordered = min(ordered, len(olm))
	for i := 0; i < ordered; i++ {
		if a, b := planStepJSON(t, olm[i]), planStepJSON(t, ours[i]); a != b {
			t.Errorf("%s: step %d (%s %s) differs:\nOLM  …%s…\nours …%s…", what, i, olm[i].Resource.Kind, olm[i].Resource.Name, planFirstDiff(a, b), planFirstDiff(b, a))
			return
		}
	}
	var a, b []string
	for i := ordered; i < len(olm); i++ {
		a, b = append(a, planStepJSON(t, olm[i])), append(b, planStepJSON(t, ours[i]))
	}
	slices.Sort(a)
	slices.Sort(b)
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("%s: generated RBAC differs:\nOLM  …%s…\nours …%s…", what, planFirstDiff(a[i], b[i]), planFirstDiff(b[i], a[i]))
			return
		}
	}
}

// objectSteps counts the steps before the generated RBAC: the CSV and the
// bundle's other objects.
func objectSteps(b *PlanBundle) int {
	n := 1
	for _, o := range b.Objects {
		if !property.IsCSV(o, nil) {
			n++
		}
	}
	return n
}

// TestPlanStepsMatchOLM compares PlanSteps and SubscriptionStep with what
// OLM v0.46.0's NewStepsFromBundle and NewSubscriptionStepResource wrote
// for every bundle of the fixture catalog, in two namespaces: the same
// steps, names, kinds and manifest bytes, or the same error.
func TestPlanStepsMatchOLM(t *testing.T) {
	f := loadPlanFixture(t)
	records := readOLMSteps(t)
	var bundles, subs, errs int
	for _, r := range records {
		b := f.bundles[r.Bundle]
		if b == nil {
			t.Fatalf("bundle %s is not in the fixture catalog", r.Bundle)
		}
		src := CatalogRef{Name: r.Catalog, Namespace: r.CatalogNS}
		what := r.Type + " " + r.Bundle + " in " + r.Namespace
		switch r.Type {
		case "subscription":
			subs++
			s, err := SubscriptionStep(r.Namespace, r.Package, r.Channel, src, r.Bundle)
			if err != nil {
				t.Fatal(err)
			}
			compareBundleSteps(t, what, r.Steps, []*Step{s}, 1)
		case "bundle":
			bundles++
			steps, err := PlanSteps(b, r.Namespace, src, r.Replaces)
			if r.Error != "" {
				errs++
				if err == nil || err.Error() != r.Error {
					t.Errorf("%s: error %v, OLM's is %q", what, err, r.Error)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", what, err)
				continue
			}
			compareBundleSteps(t, what, r.Steps, steps, objectSteps(b))
		default:
			t.Fatalf("record type %q", r.Type)
		}
	}
	// The fixture's cases are all there: 14 bundles (5 of them OLM's
	// errors) and 14 channel entries, in two namespaces each.
	if bundles != 28 || subs != 28 || errs != 10 {
		t.Errorf("compared %d bundle records (%d errors) and %d subscription records; want 28 (10) and 28", bundles, errs, subs)
	}
}

// TestPlanStepsCases restates the cases of OLM's resolver tests on the
// steps of single bundles, each an assertion on what OLM's recorded
// output holds as well (TestPlanStepsMatchOLM compares the bytes).
func TestPlanStepsCases(t *testing.T) {
	f := loadPlanFixture(t)
	src := CatalogRef{Name: "fixture", Namespace: "olm"}
	kinds := func(steps []*Step) []string {
		var out []string
		for _, s := range steps {
			out = append(out, s.Resource.Kind+" "+s.Resource.Name)
		}
		return out
	}
	steps := func(t *testing.T, name, ns, replaces string) []*Step {
		t.Helper()
		s, err := PlanSteps(f.bundles[name], ns, src, replaces)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range s {
			if st.Status != v1alpha1.StepStatusUnknown || st.Resolving != name {
				t.Errorf("step %s %s: resolving %q, status %q", st.Resource.Kind, st.Resource.Name, st.Resolving, st.Status)
			}
			if !strings.HasSuffix(st.Resource.Manifest, "}\n") {
				t.Errorf("step %s %s: manifest does not end with a line break", st.Resource.Kind, st.Resource.Name)
			}
		}
		return s
	}

	t.Run("NewSubscription/Permissions/ClusterPermissions", func(t *testing.T) {
		got := kinds(steps(t, "a.v1", "ns", ""))
		want := []string{
			"ClusterServiceVersion a.v1",
			"CustomResourceDefinition things.example.com",
			"ServiceAccount test-sa",
			"Role a.v1-test-sa-", "RoleBinding a.v1-test-sa-",
			"ClusterRole a.v1-", "ClusterRoleBinding a.v1-",
		}
		if len(got) != len(want) {
			t.Fatalf("steps %q", got)
		}
		for i := range want {
			if !strings.HasPrefix(got[i], want[i]) {
				t.Errorf("step %d is %q, want %q…", i, got[i], want[i])
			}
		}
	})
	t.Run("don't create default service accounts", func(t *testing.T) {
		for _, s := range steps(t, "a.v2", "ns", "a.v1") {
			if s.Resource.Kind == "ServiceAccount" {
				t.Errorf("a ServiceAccount step for %s", s.Resource.Name)
			}
		}
	})
	t.Run("replaces and the properties annotation", func(t *testing.T) {
		s := steps(t, "a.v2", "ns", "a.v0-installed")
		var csv v1alpha1.ClusterServiceVersion
		if err := json.Unmarshal([]byte(s[0].Resource.Manifest), &csv); err != nil {
			t.Fatal(err)
		}
		if csv.Spec.Replaces != "a.v0-installed" || csv.Namespace != "ns" {
			t.Errorf("CSV replaces %q in %q", csv.Spec.Replaces, csv.Namespace)
		}
		want := `{"properties":[{"type":"olm.package","value":{"packageName":"a","version":"2.0.0"}},{"type":"olm.gvk","value":{"group":"example.com","kind":"Thing","version":"v1"}},{"type":"olm.gvk","value":{"group":"example.com","kind":"Thing","version":"v2"}}]}`
		if got := csv.Annotations[StepPropertiesAnnotation]; got != want {
			t.Errorf("properties annotation\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("AdditionalBundleObjects", func(t *testing.T) {
		got := kinds(steps(t, "b.v1", "ns", ""))
		want := []string{
			"ClusterServiceVersion b.v1", "CustomResourceDefinition widgets.example.com",
			"RoleBinding test-rb", "Service test-service", "BundleSecret b-webhook-cert",
			"ConfigMap b-config", "PrometheusRule b-rules", "Deployment b-extra-",
			"ClusterRole b-metrics-reader", "ServiceAccount b-operator",
		}
		if !slices.Equal(got[:len(want)], want) {
			t.Errorf("steps %q", got)
		}
	})
	t.Run("generated names", func(t *testing.T) {
		var long, max64 int
		for _, s := range steps(t, "names.v1", "ns", "") {
			if n := len(s.Resource.Name); n > 63 {
				// OLM cuts the base only when base and hash exceed 63
				// characters: at exactly 63 the name has 64.
				max64++
				if n != 64 {
					t.Errorf("%s %s: %d characters", s.Resource.Kind, s.Resource.Name, n)
				}
			} else if n == 63 {
				long++
			}
		}
		if long == 0 || max64 == 0 {
			t.Errorf("%d names of 63 characters, %d of 64: the fixture should have both", long, max64)
		}
	})
	t.Run("ClusterRole names depend on the namespace", func(t *testing.T) {
		names := func(ns string) []string {
			var out []string
			for _, s := range steps(t, "test-csv.v1.1.0", ns, "") {
				if s.Resource.Kind == "ClusterRole" || s.Resource.Kind == "Role" {
					out = append(out, s.Resource.Kind+" "+s.Resource.Name)
				}
			}
			return out
		}
		a, b := names("test-namespace"), names("second-namespace")
		for i := range a {
			if strings.HasPrefix(a[i], "ClusterRole ") == (a[i] == b[i]) {
				t.Errorf("%s in test-namespace, %s in second-namespace", a[i], b[i])
			}
		}
	})
}

// olmResolved is testdata/plan/olm-resolve.json: OLM's ResolveSteps per
// namespace.
type olmResolved struct {
	Namespace     string                  `json:"namespace"`
	Steps         []*Step                 `json:"steps"`
	BundleLookups []v1alpha1.BundleLookup `json:"bundleLookups"`
	Error         string                  `json:"error"`
}

// TestNewPlanMatchesOLMResolveSteps compares NewPlan with the steps and
// BundleLookups of OLM's ResolveSteps over the same resolutions: the same
// steps (as a set: OLM ranges over the resolved bundles and the service
// accounts in a random order), in OrderSteps' groups (CSVs, CRDs, the
// rest), and the same BundleLookups.
func TestNewPlanMatchesOLMResolveSteps(t *testing.T) {
	f := loadPlanFixture(t)
	raw, err := os.ReadFile(filepath.Join("testdata", "plan", "olm-resolve.json"))
	if err != nil {
		t.Fatal(err)
	}
	var olm []olmResolved
	if err := json.Unmarshal(raw, &olm); err != nil {
		t.Fatal(err)
	}
	ops := map[string][]PlanOperator{
		"plan-ns": {
			{Bundle: f.bundles["b.v1"], Source: CatalogRef{"fixture", "plan-ns"}, Channel: "beta"},
			{Bundle: f.bundles["imaged.v1.0.0"], Source: CatalogRef{"fixture", "plan-ns"}, Channel: "stable"},
			{Bundle: f.bundles["a.v1"], Source: CatalogRef{"fixture", "plan-ns"}, Channel: "alpha", NewSubscription: true},
		},
		"upgrade-ns": {
			{Bundle: f.bundles["a.v2"], Source: CatalogRef{"fixture", "upgrade-ns"}, Channel: "alpha", Replaces: "a.v1"},
		},
	}
	if len(olm) != len(ops) {
		t.Fatalf("%d namespaces recorded", len(olm))
	}
	group := func(s *Step) int {
		switch s.Resource.Kind {
		case v1alpha1.ClusterServiceVersionKind:
			return 0
		case KindCRD:
			return 1
		}
		return 2
	}
	for _, o := range olm {
		p, err := NewPlan(o.Namespace, ops[o.Namespace])
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Steps) != len(o.Steps) {
			t.Fatalf("%s: %d steps, OLM has %d", o.Namespace, len(p.Steps), len(o.Steps))
		}
		var a, b []string
		for i := range p.Steps {
			a, b = append(a, planStepJSON(t, o.Steps[i])), append(b, planStepJSON(t, p.Steps[i]))
			if group(p.Steps[i]) != group(o.Steps[i]) {
				t.Errorf("%s: step %d is a %s, OLM's a %s", o.Namespace, i, p.Steps[i].Resource.Kind, o.Steps[i].Resource.Kind)
			}
		}
		slices.Sort(a)
		slices.Sort(b)
		for i := range a {
			if a[i] != b[i] {
				t.Errorf("%s: steps differ:\nOLM  …%s…\nours …%s…", o.Namespace, planFirstDiff(a[i], b[i]), planFirstDiff(b[i], a[i]))
				break
			}
		}
		got, _ := json.Marshal(p.BundleLookups)
		want, _ := json.Marshal(o.BundleLookups)
		if string(got) != string(want) {
			t.Errorf("%s: bundle lookups\n%s\nOLM's\n%s", o.Namespace, got, want)
		}
	}
}

func TestOrderSteps(t *testing.T) {
	mk := func(kind, name string) *Step { return &Step{Resource: v1alpha1.StepResource{Kind: kind, Name: name}} }
	in := []*Step{mk("Role", "r1"), mk(KindCRD, "c1"), mk(KindCSV, "v1"), mk("ServiceAccount", "s"), mk(KindCRD, "c2"), mk(KindCSV, "v2")}
	var got []string
	for _, s := range OrderSteps(in) {
		got = append(got, s.Resource.Name)
	}
	if want := []string{"v1", "v2", "c1", "c2", "r1", "s"}; !slices.Equal(got, want) {
		t.Errorf("order %q, want %q", got, want)
	}
}

func TestNewPlanError(t *testing.T) {
	f := loadPlanFixture(t)
	_, err := NewPlan("ns", []PlanOperator{{Bundle: f.bundles["bad-strategy.v1"], Source: CatalogRef{"c", "olm"}}})
	if err == nil || err.Error() != "failed to turn bundle into steps: unrecognized install strategy" {
		t.Errorf("error %v", err)
	}
}

// olmUnpacked is one line of testdata/plan/olm-unpacked.jsonl: OLM's steps
// for a bundle directory of testdata/bundles unpacked as from its image.
type olmUnpacked struct {
	Bundle  string                `json:"bundle"`
	Lookup  v1alpha1.BundleLookup `json:"lookup"`
	Steps   []*Step               `json:"steps"`
	Applied []string              `json:"appliedManifestSHA256"`
	Error   string                `json:"error"`
}

// TestUnpackedStepsMatchOLM compares UnpackedSteps with the steps OLM
// v0.46.0 adds for a bundle with an image once unpacked, over the real
// bundle directories of testdata/bundles read as `opm render` reads a
// bundle image: the steps as the InstallPlan records them (references to
// the ConfigMap), and the manifests OLM applies (their SHA-256).
func TestUnpackedStepsMatchOLM(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "plan", "olm-unpacked.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	n := 0
	for sc.Scan() {
		var r olmUnpacked
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		n++
		bd, _, err := bundle.RenderDir(filepath.Join("..", "..", "testdata", "bundles", r.Bundle), bundle.Options{})
		if err != nil {
			t.Fatalf("%s: %v", r.Bundle, err)
		}
		pb, err := NewUnpackedBundle(bd)
		if err != nil {
			t.Fatalf("%s: %v", r.Bundle, err)
		}
		steps, applied, err := UnpackedSteps(pb, &r.Lookup, "operators")
		if r.Error != "" || err != nil {
			if err == nil || err.Error() != r.Error {
				t.Errorf("%s: error %v, OLM's %q", r.Bundle, err, r.Error)
			}
			continue
		}
		ordered := objectSteps(pb)
		compareBundleSteps(t, r.Bundle, r.Steps, steps, ordered)
		if len(applied) != len(r.Applied) {
			t.Errorf("%s: %d applied steps, OLM has %d", r.Bundle, len(applied), len(r.Applied))
			continue
		}
		var got, want []string
		for i, a := range applied {
			sum := fmt.Sprintf("%x", sha256.Sum256([]byte(a.Resource.Manifest)))
			if i < ordered && sum != r.Applied[i] {
				t.Errorf("%s: the manifest of step %d (%s %s) differs from OLM's", r.Bundle, i, a.Resource.Kind, a.Resource.Name)
			}
			got, want = append(got, sum), append(want, r.Applied[i])
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: the manifests of the generated RBAC differ from OLM's", r.Bundle)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 28 {
		t.Errorf("%d bundles compared, want the 28 of testdata/bundles", n)
	}
}

// TestNewPlanUnpacked checks where NewPlan puts the steps of a bundle with
// an image whose content is given, as OLM's unpackBundles does: after the
// ordered steps, manifests replaced by references, the lookup's
// conditions gone; Applied holds the manifests.
func TestNewPlanUnpacked(t *testing.T) {
	f := loadPlanFixture(t)
	bd, _, err := bundle.RenderDir(filepath.Join("..", "..", "testdata", "bundles", "hyperfoil-bundle-0.26.0"), bundle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	image, err := NewUnpackedBundle(bd)
	if err != nil {
		t.Fatal(err)
	}
	src := CatalogRef{"fixture", "plan-ns"}
	p, err := NewPlan("plan-ns", []PlanOperator{
		{Bundle: f.bundles["imaged.v1.0.0"], Source: src, Channel: "stable", Unpacked: image},
		{Bundle: f.bundles["a.v1"], Source: src, Channel: "alpha", NewSubscription: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.BundleLookups) != 1 || p.BundleLookups[0].Conditions != nil || p.BundleLookups[0].Path != "quay.io/example/imaged-bundle:v1.0.0" {
		t.Errorf("lookups %+v", p.BundleLookups)
	}
	if len(p.Steps) != len(p.Applied) || len(p.Steps) != 8+9 {
		t.Fatalf("%d steps, %d applied", len(p.Steps), len(p.Applied))
	}
	// a.v1's 7 steps and its Subscription, ordered; then hyperfoil's 9,
	// not reordered (its CSV comes after a.v1's Subscription).
	if p.Steps[0].Resolving != "a.v1" || p.Steps[7].Resource.Kind != KindSubscription || p.Steps[8].Resource.Kind != KindCSV {
		t.Errorf("order: %v", planKinds(p.Steps))
	}
	ref := `{"kind":"ConfigMap","name":"` + UnpackConfigMapName("quay.io/example/imaged-bundle:v1.0.0") + `","namespace":"plan-ns","catalogSourceName":"fixture","catalogSourceNamespace":"plan-ns","replaces":"",`
	for i, s := range p.Steps[8:] {
		if !strings.HasPrefix(s.Resource.Manifest, ref) || s.Resolving != "hyperfoil-operator.v0.26.0" {
			t.Errorf("step %d: %s", 8+i, s.Resource.Manifest)
		}
		if a := p.Applied[8+i]; a.Resource.Name != s.Resource.Name || a.Resource.Manifest == s.Resource.Manifest {
			t.Errorf("applied step %d: %.80s", 8+i, a.Resource.Manifest)
		}
	}
	if len(UnpackConfigMapName("x")) != 63 {
		t.Error("the ConfigMap name is not 63 characters")
	}
}

func planKinds(steps []*Step) []string {
	var out []string
	for _, s := range steps {
		out = append(out, s.Resolving+":"+s.Resource.Kind)
	}
	return out
}
