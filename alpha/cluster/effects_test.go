package cluster

import (
	"path/filepath"
	"strings"
	"testing"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fastopm/fastopm/pkg/bundle"
)

func planCRD(name string, stored ...string) *apiextensionsv1.CustomResourceDefinition {
	c := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}}
	c.Status.StoredVersions = stored
	return c
}

func planOf(t *testing.T, f *planFixture, ns string, names ...string) []*Step {
	t.Helper()
	var steps []*Step
	for _, n := range names {
		s, err := PlanSteps(f.bundles[n], ns, CatalogRef{"fixture", "olm"}, "")
		if err != nil {
			t.Fatal(err)
		}
		steps = append(steps, s...)
	}
	return OrderSteps(steps)
}

func effectOf(t *testing.T, es []Effect, kind, name string) Effect {
	t.Helper()
	for _, e := range es {
		if e.Kind == kind && e.Name == name {
			return e
		}
	}
	t.Fatalf("no effect for %s %s", kind, name)
	return Effect{}
}

// TestEffects restates what OLM v0.46.0's ExecutePlan does with each kind
// of step (catalog/operator.go, step.go, step_ensurer.go).
func TestEffects(t *testing.T) {
	f := loadPlanFixture(t)
	steps := planOf(t, f, "ns", "a.v2", "b.v1")
	installed := &v1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Name: "a.v2", Namespace: "ns"}}
	sub := &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Name: "a-alpha-fixture-olm", Namespace: "ns"}}
	subStep, err := SubscriptionStep("ns", "a", "alpha", CatalogRef{"fixture", "olm"}, "a.v2")
	if err != nil {
		t.Fatal(err)
	}
	withSub := append(append([]*Step{}, steps...), subStep)

	tests := []struct {
		name        string
		state       *State
		steps       []*Step
		kind, obj   string
		action      Action
		status      v1alpha1.StepStatus
		detail      string // a part of the detail
		namespace   string
		notReached  bool
		wantNothing bool
	}{
		{name: "new CSV", state: &State{}, kind: KindCSV, obj: "b.v1", action: ActionCreate, status: v1alpha1.StepStatusCreated, namespace: "ns"},
		{name: "CSV present is kept", state: &State{CSVs: []*v1alpha1.ClusterServiceVersion{installed}}, kind: KindCSV, obj: "a.v2",
			action: ActionPresent, status: v1alpha1.StepStatusPresent, detail: "never updates a CSV"},
		{name: "CSV of another namespace", state: &State{CSVs: []*v1alpha1.ClusterServiceVersion{{ObjectMeta: metav1.ObjectMeta{Name: "a.v2", Namespace: "other"}}}},
			kind: KindCSV, obj: "a.v2", action: ActionCreate},
		{name: "new Subscription", state: &State{}, steps: withSub, kind: KindSubscription, obj: "a-alpha-fixture-olm", action: ActionCreate, detail: "olm.generated-by", notReached: true},
		{name: "Subscription present", state: &State{Subscriptions: []*v1alpha1.Subscription{sub}}, steps: withSub, kind: KindSubscription, obj: "a-alpha-fixture-olm",
			action: ActionPresent, status: v1alpha1.StepStatusPresent, notReached: true},
		{name: "no CRDs in the state", state: &State{}, kind: KindCRD, obj: "things.example.com", action: ActionUnknown,
			detail: "unknown: the state holds no CustomResourceDefinition", namespace: ""},
		{name: "CRD not among the state's", state: &State{CRDs: []*apiextensionsv1.CustomResourceDefinition{planCRD("other.example.com", "v1")}},
			kind: KindCRD, obj: "things.example.com", action: ActionCreate, status: v1alpha1.StepStatusWaitingForAPI, detail: "not among the state's 1 CRDs"},
		{name: "CRD update keeps the stored versions", state: &State{CRDs: []*apiextensionsv1.CustomResourceDefinition{planCRD("things.example.com", "v1")}},
			kind: KindCRD, obj: "things.example.com", action: ActionUpdate, status: v1alpha1.StepStatusPresent, detail: "stored versions v1: kept"},
		{name: "CRD update drops a stored version", state: &State{CRDs: []*apiextensionsv1.CustomResourceDefinition{planCRD("things.example.com", "v1alpha1", "v1")}},
			kind: KindCRD, obj: "things.example.com", action: ActionFail,
			detail: `risk of data loss updating "things.example.com": new CRD removes version v1alpha1 that is listed as a stored version on the existing CRD`},
		{name: "ServiceAccount", state: &State{}, kind: "ServiceAccount", obj: "b-operator", action: ActionUnknown,
			detail: "unknown: the state holds no ServiceAccount; OLM creates it, or updates it if it exists", namespace: "ns", notReached: true},
		{name: "bundle Secret", state: &State{}, kind: "BundleSecret", obj: "b-webhook-cert", action: ActionUnknown, detail: "the state holds no Secret"},
		{name: "bundle ClusterRole", state: &State{}, kind: "ClusterRole", obj: "b-metrics-reader", action: ActionUnknown, detail: "relabelled olm.owner=b.v1", namespace: "", notReached: true},
		{name: "supported kind", state: &State{}, kind: "PrometheusRule", obj: "b-rules", action: ActionUnknown, detail: "its API (monitoring.coreos.com/v1) must be served", namespace: "ns"},
		{name: "unsupported kind", state: &State{}, kind: "Deployment", obj: "b-extra-", action: ActionFail, status: v1alpha1.StepStatusUnsupportedResource,
			detail: "the plan fails (the InstallPlan contains invalid data)"},
		// The plan stops at the Deployment: the steps after it (the
		// bundle's ClusterRole, the generated RBAC, the Subscription) are
		// not reached.
		{name: "before the failure", state: &State{}, kind: "RoleBinding", obj: "test-rb", action: ActionUnknown, notReached: false},
		{name: "OperatorGroup service account", state: &State{OperatorGroups: []*operatorsv1.OperatorGroup{{ObjectMeta: metav1.ObjectMeta{Name: "og", Namespace: "ns"},
			Spec: operatorsv1.OperatorGroupSpec{ServiceAccountName: "installer"}}}},
			kind: "ConfigMap", obj: "b-config", action: ActionUnknown, detail: "permissions of ServiceAccount ns/installer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := tt.steps
			if st == nil {
				st = steps
			}
			es := tt.state.Effects("ns", st)
			if len(es) != len(st) {
				t.Fatalf("%d effects for %d steps", len(es), len(st))
			}
			e := effectOf(t, es, tt.kind, tt.obj)
			if e.Action != tt.action || (tt.status != "" && e.Status != tt.status) || !strings.Contains(e.Detail, tt.detail) || e.NotReached != tt.notReached {
				t.Errorf("effect %+v\nwant action %s, status %q, notReached %v, detail containing %q", e, tt.action, tt.status, tt.notReached, tt.detail)
			}
			if tt.namespace != "" || tt.kind == KindCRD || tt.kind == "ClusterRole" {
				if e.Namespace != tt.namespace {
					t.Errorf("namespace %q, want %q", e.Namespace, tt.namespace)
				}
			}
			if st[e.Step].Resource.Name != e.Name || e.Resolving != st[e.Step].Resolving {
				t.Errorf("effect %d names step %s", e.Step, st[e.Step].Resource.Name)
			}
		})
	}
}

// TestEffectsCRDVersions covers the CRD manifests OLM's step builder
// refuses or warns about.
func TestEffectsCRDVersions(t *testing.T) {
	st := func(manifest string) []*Step {
		return []*Step{{Resolving: "x.v1", Resource: v1alpha1.StepResource{Kind: KindCRD, Name: "things.example.com", Manifest: manifest}}}
	}
	s := &State{CRDs: []*apiextensionsv1.CustomResourceDefinition{planCRD("things.example.com", "v1")}}
	e := s.Effects("ns", st(`{"apiVersion":"apiextensions.k8s.io/v2","kind":"CustomResourceDefinition","metadata":{"name":"things.example.com"}}`))[0]
	if e.Action != ActionFail || !strings.Contains(e.Detail, "CRD APIVersion from manifest not supported: v2") {
		t.Errorf("v2: %+v", e)
	}
	e = s.Effects("ns", st(`{"apiVersion":"apiextensions.k8s.io/v1beta1","kind":"CustomResourceDefinition","metadata":{"name":"things.example.com"},"spec":{"version":"v1"}}`))[0]
	if e.Action != ActionUpdate || !strings.Contains(e.Detail, "Kubernetes 1.22") {
		t.Errorf("v1beta1: %+v", e)
	}
	e = s.Effects("ns", st(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"things.example.com"},"spec":{"versions":[{"name":"v2"}],"conversion":{"strategy":"Webhook"}}}`))[0]
	if e.Action != ActionFail || !strings.Contains(e.Detail, "removes version v1") {
		t.Errorf("dropped v1: %+v", e)
	}
	e = s.Effects("ns", st(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"things.example.com"},"spec":{"versions":[{"name":"v1"}],"conversion":{"strategy":"Webhook"}}}`))[0]
	if e.Action != ActionUpdate || !strings.Contains(e.Detail, "Webhook conversion a failure is only a warning") {
		t.Errorf("webhook: %+v", e)
	}
	e = s.Effects("ns", st(`{`))[0]
	if e.Action != ActionFail {
		t.Errorf("bad manifest: %+v", e)
	}
}

func TestIsSupportedKind(t *testing.T) {
	for kind, want := range map[string]bool{
		KindCSV: true, KindCRD: true, "BundleSecret": true, "ConfigMap": true, "NetworkPolicy": true, "ConsolePlugin": true,
		"Deployment": false, "MutatingWebhookConfiguration": false, "APIService": false, "Secret": true, "Job": false,
	} {
		if got := IsSupportedKind(kind); got != want {
			t.Errorf("IsSupportedKind(%s) = %v", kind, got)
		}
	}
}

// TestReferences: the steps of an unpacked bundle as the InstallPlan
// holds them carry references, not manifests.
func TestReferences(t *testing.T) {
	f := loadPlanFixture(t)
	bd, _, err := bundle.RenderDir(filepath.Join("..", "..", "testdata", "bundles", "hyperfoil-bundle-0.26.0"), bundle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	image, err := NewUnpackedBundle(bd)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan("ns", []PlanOperator{{Bundle: f.bundles["imaged.v1.0.0"], Source: CatalogRef{"fixture", "olm"}, Unpacked: image}})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range p.Steps {
		if !IsUnpackedReference(s.Resource.Manifest) || IsUnpackedReference(p.Applied[i].Resource.Manifest) {
			t.Errorf("step %d: reference %v, applied reference %v", i, IsUnpackedReference(s.Resource.Manifest), IsUnpackedReference(p.Applied[i].Resource.Manifest))
		}
	}
	if _, err := Permissions(p.Steps, nil); err == nil || !strings.Contains(err.Error(), "Plan.Applied") {
		t.Errorf("Permissions of references: %v", err)
	}
	if ps, err := Permissions(p.Applied, nil); err != nil || len(ps) != 1 || len(ps[0].Rules) == 0 {
		t.Errorf("Permissions of the applied steps: %v, %+v", err, ps)
	}
	s := &State{CRDs: []*apiextensionsv1.CustomResourceDefinition{planCRD("hyperfoils.hyperfoil.io", "v1alpha1", "v1alpha2")}}
	if e := effectOf(t, s.Effects("ns", p.Steps), KindCRD, "hyperfoils.hyperfoil.io"); e.Action != ActionUpdate || !strings.Contains(e.Detail, "ConfigMap") {
		t.Errorf("CRD reference: %+v", e)
	}
	if e := effectOf(t, (&State{}).Effects("ns", p.Steps), KindCRD, "hyperfoils.hyperfoil.io"); e.Action != ActionUnknown {
		t.Errorf("CRD reference, no CRDs: %+v", e)
	}
	if e := effectOf(t, s.Effects("ns", p.Applied), KindCRD, "hyperfoils.hyperfoil.io"); e.Action != ActionFail {
		t.Errorf("CRD manifest dropping the stored v1alpha1: %+v", e)
	}
}

func TestWriteStepsText(t *testing.T) {
	f := loadPlanFixture(t)
	steps := planOf(t, f, "ns", "a.v1")
	var b strings.Builder
	if err := WriteStepsText(&b, steps, (&State{}).Effects("ns", steps)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2*len(steps) {
		t.Fatalf("%d lines for %d steps:\n%s", len(lines), len(steps), b.String())
	}
	if want := "  0 ClusterServiceVersion a.v1 (operators.coreos.com/v1alpha1) for a.v1: create"; lines[0] != want {
		t.Errorf("first line %q, want %q", lines[0], want)
	}
	if lines[4] != "  2 ServiceAccount test-sa (v1) for a.v1: unknown" || !strings.HasPrefix(lines[5], "      unknown: the state holds no ServiceAccount") {
		t.Errorf("lines %q", lines[4:6])
	}
	b.Reset()
	if err := WriteStepsText(&b, steps[:1], nil); err != nil || b.String() != "  0 ClusterServiceVersion a.v1 (operators.coreos.com/v1alpha1) for a.v1\n" {
		t.Errorf("without effects: %q, %v", b.String(), err)
	}
}
