package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Builders for the restated cases: a State is built from objects as OLM's
// tests build their fake cluster.

func namespaceObj(name string, labels map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

type ogOpt func(*operatorsv1.OperatorGroup)

func operatorGroup(ns, name string, opts ...ogOpt) *operatorsv1.OperatorGroup {
	og := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for _, o := range opts {
		o(og)
	}
	return og
}

func targeting(ns ...string) ogOpt {
	return func(og *operatorsv1.OperatorGroup) { og.Spec.TargetNamespaces = ns }
}

func selecting(labels map[string]string) ogOpt {
	return func(og *operatorsv1.OperatorGroup) {
		og.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
	}
}

func withStatus(ns ...string) ogOpt {
	return func(og *operatorsv1.OperatorGroup) { og.Status.Namespaces = ns }
}

func providing(apis string) ogOpt {
	return func(og *operatorsv1.OperatorGroup) {
		if og.Annotations == nil {
			og.Annotations = map[string]string{}
		}
		og.Annotations[operatorsv1.OperatorGroupProvidedAPIsAnnotationKey] = apis
	}
}

func static(og *operatorsv1.OperatorGroup) { og.Spec.StaticProvidedAPIs = true }

type csvOpt func(*v1alpha1.ClusterServiceVersion)

var allSupported = []v1alpha1.InstallMode{
	{Type: v1alpha1.InstallModeTypeOwnNamespace, Supported: true},
	{Type: v1alpha1.InstallModeTypeSingleNamespace, Supported: true},
	{Type: v1alpha1.InstallModeTypeMultiNamespace, Supported: true},
	{Type: v1alpha1.InstallModeTypeAllNamespaces, Supported: true},
}

// csvObj is OLM's test helper csv(): every install mode supported.
func csvObj(ns, name string, opts ...csvOpt) *v1alpha1.ClusterServiceVersion {
	c := &v1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	c.Spec.InstallModes = allSupported
	for _, o := range opts {
		o(c)
	}
	return c
}

// owning adds an owned CRD as OLM's crd(name, version, group) helper
// names it: plural name, group, version, kind name.
func owning(name, version, group string) csvOpt {
	return func(c *v1alpha1.ClusterServiceVersion) {
		c.Spec.CustomResourceDefinitions.Owned = append(c.Spec.CustomResourceDefinitions.Owned,
			v1alpha1.CRDDescription{Name: name + "." + group, Version: version, Kind: name})
	}
}

func owningAPIService(group, version, kind string) csvOpt {
	return func(c *v1alpha1.ClusterServiceVersion) {
		c.Spec.APIServiceDefinitions.Owned = append(c.Spec.APIServiceDefinitions.Owned,
			v1alpha1.APIServiceDescription{Group: group, Version: version, Kind: kind})
	}
}

func requiringAPIService(group, version, kind string) csvOpt {
	return func(c *v1alpha1.ClusterServiceVersion) {
		c.Spec.APIServiceDefinitions.Required = append(c.Spec.APIServiceDefinitions.Required,
			v1alpha1.APIServiceDescription{Group: group, Version: version, Kind: kind})
	}
}

func modes(m ...v1alpha1.InstallMode) csvOpt {
	return func(c *v1alpha1.ClusterServiceVersion) { c.Spec.InstallModes = m }
}

func inPhase(phase v1alpha1.ClusterServiceVersionPhase, reason v1alpha1.ConditionReason, message string) csvOpt {
	return func(c *v1alpha1.ClusterServiceVersion) {
		c.Status.Phase, c.Status.Reason, c.Status.Message = phase, reason, message
	}
}

// annotated is the CSV's OperatorGroup annotations (OLM's
// defaultTemplateAnnotations and the like).
func annotated(group, groupNamespace, targets string) csvOpt {
	return func(c *v1alpha1.ClusterServiceVersion) {
		c.Annotations = map[string]string{
			operatorsv1.OperatorGroupAnnotationKey:          group,
			operatorsv1.OperatorGroupNamespaceAnnotationKey: groupNamespace,
			operatorsv1.OperatorGroupTargetsAnnotationKey:   targets,
		}
	}
}

func stateOf(objs ...any) *State {
	s := &State{Skipped: map[string]int{}}
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.Namespace:
			s.Namespaces = append(s.Namespaces, o)
		case *operatorsv1.OperatorGroup:
			s.OperatorGroups = append(s.OperatorGroups, o)
		case *v1alpha1.ClusterServiceVersion:
			s.CSVs = append(s.CSVs, o)
		default:
			panic("stateOf: not a kind of the state")
		}
	}
	s.sort()
	return s
}

// want is a verdict's decisive part.
type want struct {
	ok      bool
	skipped bool
	phase   v1alpha1.ClusterServiceVersionPhase
	reason  v1alpha1.ConditionReason
	message string
	mode    v1alpha1.InstallModeType
	// annotations, when not nil, are the CSV's OperatorGroup annotations
	// when OLM is done.
	annotations map[string]string
	// groupAPIs, when not nil, is the group's olm.providedAPIs when OLM
	// is done (it changed it).
	groupAPIs *string
	// why, steps, notes: substrings of the words.
	why, steps, notes []string
}

func ptr(s string) *string { return &s }

func failed(reason v1alpha1.ConditionReason, message string) want {
	return want{phase: v1alpha1.CSVPhaseFailed, reason: reason, message: message}
}

func (w want) with(f func(*want)) want { f(&w); return w }

func checkVerdict(t *testing.T, v *GroupVerdict, w want) {
	t.Helper()
	if v.OK != w.ok || v.Skipped != w.skipped || v.Phase != w.phase || v.Reason != w.reason || v.Message != w.message {
		t.Errorf("verdict: ok=%v skipped=%v %q %q %q\nwant:    ok=%v skipped=%v %q %q %q\nwhy: %s\nsteps: %q\nnotes: %q",
			v.OK, v.Skipped, v.Phase, v.Reason, v.Message, w.ok, w.skipped, w.phase, w.reason, w.message, v.Why, v.Steps, v.Notes)
	}
	if w.mode != "" && v.InstallMode != w.mode {
		t.Errorf("install mode %q, want %q", v.InstallMode, w.mode)
	}
	if w.annotations != nil && !equalMaps(v.CSVAnnotations, w.annotations) {
		t.Errorf("CSV annotations %v, want %v", v.CSVAnnotations, w.annotations)
	}
	if w.groupAPIs != nil && (v.GroupProvidedAPIs == nil || *v.GroupProvidedAPIs != *w.groupAPIs) {
		got := "(unchanged)"
		if v.GroupProvidedAPIs != nil {
			got = *v.GroupProvidedAPIs
		}
		t.Errorf("group's olm.providedAPIs %q, want %q", got, *w.groupAPIs)
	}
	for _, s := range w.why {
		if !strings.Contains(v.Why, s) {
			t.Errorf("why %q lacks %q", v.Why, s)
		}
	}
	for _, s := range w.steps {
		if !strings.Contains(strings.Join(v.Steps, "\n"), s) {
			t.Errorf("steps %q lack %q", v.Steps, s)
		}
	}
	for _, s := range w.notes {
		if !strings.Contains(strings.Join(v.Notes, "\n"), s) {
			t.Errorf("notes %q lack %q", v.Notes, s)
		}
	}
	if v.Why == "" {
		t.Error("no words for people")
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

type verdictCase struct {
	name  string
	state *State
	csv   *v1alpha1.ClusterServiceVersion
	want  want
}

func runVerdictCases(t *testing.T, cases []verdictCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkVerdict(t, c.state.OperatorGroupVerdict(c.csv), c.want)
		})
	}
}

// TestOperatorGroupTransitionCSV restates the OperatorGroup cases of OLM
// v0.46.0's TestTransitionCSV (pkg/controller/operators/olm/
// operator_test.go), under OLM's names. OLM's test runs one sync; the
// verdict is where OLM's syncs settle, so a case whose one sync only
// writes something (AddAPIs, RemoveAPIs, new annotations) is checked for
// that write and for what the next sync decides.
//
// Two things of OLM's fixtures are restated as they act, not as they
// read. Its defaultOperatorGroup has an empty spec and status.namespaces
// [ns]; OLM's OperatorGroup sync would make that all namespaces, so here
// the group has spec.targetNamespaces [ns], which gives OLM's status. And
// the table's addAnnotation calls all change the one defaultOperatorGroup
// while the table is built, so every case runs with the last annotation
// written, olm.providedAPIs "c1.v1.g1,a1Kind.v1.a1". The cases with a fake
// API reconciler (buildFakeAPIIntersectionReconcilerThatReturns) get a
// state in which OLM's real ReconcileAPIIntersection returns that result.
// (Their csvWithStatusReason helper returns the CSV unchanged, so OLM's
// "Failed…" cases run without the reason their names give; here the CSV
// has it, and the outcome is the one the name says.)
func TestOperatorGroupTransitionCSV(t *testing.T) {
	const ns = "ns"
	defaultGroup := func(opts ...ogOpt) *operatorsv1.OperatorGroup {
		return operatorGroup(ns, "default", append([]ogOpt{targeting(ns), withStatus(ns), providing("c1.v1.g1,a1Kind.v1.a1")}, opts...)...)
	}
	defaultAnnotations := annotated("default", ns, ns)
	csv1 := func(opts ...csvOpt) *v1alpha1.ClusterServiceVersion {
		return csvObj(ns, "csv1", append([]csvOpt{defaultAnnotations, owning("c1", "v1", "g1")}, opts...)...)
	}
	// Another group, elsewhere, targeting every namespace, and the CSV
	// there that provides c1 (or c2): what makes OLM's reconciler find the
	// CSV's API provided by an intersecting group.
	rival := operatorGroup("other", "rival", withStatus(""), providing("c1.v1.g1"))
	holder := csvObj("other", "holder", owning("c1", "v1", "g1"))
	rival2 := operatorGroup("other", "rival", withStatus(""), providing("c2.v1.g1"))
	holder2 := csvObj("other", "holder", owning("c2", "v1", "g1"))
	okWant := want{ok: true, mode: v1alpha1.InstallModeTypeOwnNamespace,
		annotations: map[string]string{operatorsv1.OperatorGroupAnnotationKey: "default", operatorsv1.OperatorGroupNamespaceAnnotationKey: ns, operatorsv1.OperatorGroupTargetsAnnotationKey: ns}}

	runVerdictCases(t, []verdictCase{
		{"SingleCSVNoneToPending/CRD", stateOf(defaultGroup(), csv1()), csv1(), okWant},
		{"SingleCSVNoneToPending/APIService/Required",
			stateOf(defaultGroup()), csvObj(ns, "csv1", defaultAnnotations, requiringAPIService("a1", "corev1", "a1Kind")), okWant},
		{"SingleCSVFailedToPending/InstallModes/Owned/PreviouslyUnsupported", stateOf(defaultGroup()),
			csv1(inPhase(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonUnsupportedOperatorGroup, "")), okWant},
		{"SingleCSVFailedToPending/InstallModes/Owned/PreviouslyNoOperatorGroups", stateOf(defaultGroup()),
			csv1(inPhase(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonNoOperatorGroup, "")), okWant},
		{"SingleCSVFailedToPending/InstallModes/Owned/PreviouslyTooManyOperatorGroups", stateOf(defaultGroup()),
			csv1(inPhase(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonTooManyOperatorGroups, "")), okWant},
		{"SingleCSVSucceededToFailed/InstallModes/Owned/Unsupported", stateOf(defaultGroup()),
			csv1(inPhase(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful, ""),
				modes(v1alpha1.InstallMode{Type: v1alpha1.InstallModeTypeSingleNamespace, Supported: false})),
			failed(v1alpha1.CSVReasonUnsupportedOperatorGroup, "OwnNamespace InstallModeType not supported, cannot configure to watch own namespace").
				with(func(w *want) {
					w.mode = v1alpha1.InstallModeTypeOwnNamespace
					w.why = []string{"this CSV supports no install mode"}
				})},
		{"SingleCSVSucceededToFailed/InstallModes/Owned/NoOperatorGroups", stateOf(),
			csv1(inPhase(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful, "")),
			failed(v1alpha1.CSVReasonNoOperatorGroup, "csv in namespace with no operatorgroups").
				with(func(w *want) {
					w.why = []string{"namespace ns has no OperatorGroup", "spec.targetNamespaces: [ns] (OwnNamespace)"}
				})},
		{"SingleCSVSucceededToFailed/InstallModes/Owned/TooManyOperatorGroups",
			stateOf(defaultGroup(), operatorGroup(ns, "default-2", targeting(ns), withStatus(ns))),
			csv1(inPhase(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful, "")),
			failed(v1alpha1.CSVReasonTooManyOperatorGroups, "csv created in namespace with multiple operatorgroups, can't pick one automatically").
				with(func(w *want) {
					w.why = []string{"2 OperatorGroups (ns/default, ns/default-2)", "delete all but one"}
					w.notes = []string{"with ns/default alone, the CSV would fit", "with ns/default-2 alone, the CSV would fit", "MultipleOperatorGroup"}
				})},
		// OLM's group has status [ns, new-namespace] and the CSV the
		// annotation ns: its sync rewrites the annotation; the next one
		// finds a MultiNamespace install, which the CSV supports.
		{"SingleCSVSucceededToSucceeded/OperatorGroupChanged",
			stateOf(operatorGroup(ns, "default", targeting(ns, "new-namespace"), withStatus(ns, "new-namespace"), providing("c1.v1.g1"))),
			csv1(inPhase(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful, "")),
			want{ok: true, mode: v1alpha1.InstallModeTypeMultiNamespace,
				annotations: map[string]string{operatorsv1.OperatorGroupAnnotationKey: "default", operatorsv1.OperatorGroupNamespaceAnnotationKey: ns, operatorsv1.OperatorGroupTargetsAnnotationKey: "new-namespace,ns"},
				steps:       []string{`olm.targetNamespaces="new-namespace,ns"`}}},
		// APIConflict: the group does not list c2, which the rival, over
		// every namespace, provides.
		{"SingleCSVNoneToFailed/InterOperatorGroupOwnerConflict",
			stateOf(defaultGroup(), rival2, holder2),
			csv1(owning("c2", "v1", "g1")),
			failed(v1alpha1.CSVReasonInterOperatorGroupOwnerConflict, "intersecting operatorgroups provide the same apis").
				with(func(w *want) {
					w.why = []string{"OperatorGroup other/rival (which targets all namespaces) provides c2.v1.g1, and both groups cover ns"}
					w.notes = []string{"deletes the CSV's deployments"}
				})},
		// AddAPIs: OLM adds c2 to the group and, on the next sync, goes on.
		{"SingleCSVNoneToNone/AddAPIs", stateOf(defaultGroup()), csv1(owning("c2", "v1", "g1")),
			// OLM's OperatorGroup sync leaves a1Kind in the annotation: the
			// CSV, in phase None, provides c2, which it does not list.
			okWant.with(func(w *want) {
				w.groupAPIs = ptr("a1Kind.v1.a1,c1.v1.g1,c2.v1.g1")
				w.steps = []string{"OLM adds c2.v1.g1 to the olm.providedAPIs annotation of OperatorGroup ns/default"}
			})},
		// RemoveAPIs: the group lists c1, and so does an intersecting
		// group: OLM removes c1 from this group, and on the next sync the
		// CSV conflicts.
		{"SingleCSVNoneToNone/RemoveAPIs", stateOf(defaultGroup(), rival, holder), csv1(),
			failed(v1alpha1.CSVReasonInterOperatorGroupOwnerConflict, "intersecting operatorgroups provide the same apis").
				with(func(w *want) {
					w.groupAPIs = ptr("")
					w.steps = []string{"OLM removes c1.v1.g1 from the olm.providedAPIs annotation of OperatorGroup ns/default"}
				})},
		{"SingleCSVNoneToFailed/StaticOperatorGroup/AddAPIs", stateOf(defaultGroup(static)), csv1(owning("c2", "v1", "g1")),
			failed(v1alpha1.CSVReasonCannotModifyStaticOperatorGroupProvidedAPIs, "static provided api operatorgroup cannot be modified by these apis").
				with(func(w *want) { w.why = []string{"does not list c2.v1.g1", "staticProvidedAPIs"} })},
		{"SingleCSVNoneToFailed/StaticOperatorGroup/RemoveAPIs", stateOf(defaultGroup(static), rival, holder), csv1(),
			failed(v1alpha1.CSVReasonCannotModifyStaticOperatorGroupProvidedAPIs, "static provided api operatorgroup cannot be modified by these apis").
				with(func(w *want) { w.why = []string{"OperatorGroup other/rival provide too"} })},
		{"SingleCSVNoneToPending/StaticOperatorGroup/NoAPIConflict", stateOf(defaultGroup(static)), csv1(), okWant},
		{"SingleCSVFailedToPending/InterOperatorGroupOwnerConflict/NoAPIConflict", stateOf(defaultGroup()),
			csv1(inPhase(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonInterOperatorGroupOwnerConflict, MessageInterGroupConflict)), okWant},
		{"SingleCSVFailedToPending/StaticOperatorGroup/CannotModifyStaticOperatorGroupProvidedAPIs/NoAPIConflict", stateOf(defaultGroup(static)),
			csv1(inPhase(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonCannotModifyStaticOperatorGroupProvidedAPIs, MessageStaticProvidedAPIs)), okWant},
		{"SingleCSVFailedToFailed/InterOperatorGroupOwnerConflict/APIConflict",
			stateOf(defaultGroup(), rival2, holder2),
			csv1(owning("c2", "v1", "g1"), inPhase(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonInterOperatorGroupOwnerConflict, MessageInterGroupConflict)),
			failed(v1alpha1.CSVReasonInterOperatorGroupOwnerConflict, MessageInterGroupConflict)},
		{"SingleCSVFailedToFailed/StaticOperatorGroup/CannotModifyStaticOperatorGroupProvidedAPIs/AddAPIs", stateOf(defaultGroup(static)),
			csv1(owning("c2", "v1", "g1"), inPhase(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonCannotModifyStaticOperatorGroupProvidedAPIs, MessageStaticProvidedAPIs)),
			failed(v1alpha1.CSVReasonCannotModifyStaticOperatorGroupProvidedAPIs, MessageStaticProvidedAPIs)},
		{"SingleCSVFailedToFailed/StaticOperatorGroup/CannotModifyStaticOperatorGroupProvidedAPIs/RemoveAPIs", stateOf(defaultGroup(static), rival, holder),
			csv1(inPhase(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonCannotModifyStaticOperatorGroupProvidedAPIs, MessageStaticProvidedAPIs)),
			failed(v1alpha1.CSVReasonCannotModifyStaticOperatorGroupProvidedAPIs, MessageStaticProvidedAPIs)},
	})
}

// TestOperatorGroupSyncOperatorGroups restates the cases of OLM
// v0.46.0's TestSyncOperatorGroups and TestOperatorGroupConditions that
// decide the group's targets or a CSV's reason, under OLM's names.
func TestOperatorGroupSyncOperatorGroups(t *testing.T) {
	const opNS, targetNS = "operator-ns", "target-ns"
	appA := map[string]string{"app": "app-a"}
	// OLM's operatorCSV: csv1, every install mode, owns c1 of
	// fake.api.group, phase None.
	operatorCSV := func(opts ...csvOpt) *v1alpha1.ClusterServiceVersion {
		return csvObj(opNS, "csv1", append([]csvOpt{owning("c1", "v1", "fake.api.group")}, opts...)...)
	}
	annotations := func(targets *string) map[string]string {
		a := map[string]string{operatorsv1.OperatorGroupAnnotationKey: "operator-group-1", operatorsv1.OperatorGroupNamespaceAnnotationKey: opNS}
		if targets != nil {
			a[operatorsv1.OperatorGroupTargetsAnnotationKey] = *targets
		}
		return a
	}
	targetsOf := func(s *State, og *operatorsv1.OperatorGroup) GroupTargets { return s.GroupTargets(og) }

	t.Run("NoMatchingNamespace/NoCSVs", func(t *testing.T) {
		og := operatorGroup(opNS, "operator-group-1", selecting(map[string]string{"a": "app-a"}))
		tg := targetsOf(stateOf(namespaceObj(opNS, nil), namespaceObj(targetNS, nil), og), og)
		if tg.From != TargetsFromSelector || tg.AllNamespaces || len(tg.Namespaces) != 0 || tg.status != nil {
			t.Errorf("targets %+v, want none from the selector (OLM: status {})", tg)
		}
	})
	t.Run("MatchingNamespace/NoCSVs", func(t *testing.T) {
		og := operatorGroup(opNS, "operator-group-1", selecting(appA))
		tg := targetsOf(stateOf(namespaceObj(opNS, nil), namespaceObj(targetNS, appA), og), og)
		if tg.From != TargetsFromSelector || strings.Join(tg.Namespaces, ",") != targetNS {
			t.Errorf("targets %+v, want [target-ns] from the selector", tg)
		}
		if !strings.Contains(tg.Note, "first changes the group's status.namespaces from [] to [target-ns]") {
			t.Errorf("note %q", tg.Note)
		}
	})
	t.Run("AllNamespaces/CSVPresent/Found/PruneMissingProvidedAPI/StaticProvidedAPIs", func(t *testing.T) {
		og := operatorGroup(opNS, "operator-group-1", providing("missing.fake.api.group"), static)
		s := stateOf(namespaceObj(opNS, appA), og)
		tg := targetsOf(s, og)
		if !tg.AllNamespaces || tg.From != TargetsFromAll {
			t.Errorf("targets %+v, want all namespaces", tg)
		}
		// A static group keeps the API no CSV provides.
		if r := s.GroupRules(); r.surfaces[0].apis.String() != "missing.fake.api.group" || len(r.surfaces[0].pruned) != 0 {
			t.Errorf("static group's provided APIs %q (pruned %v), want missing.fake.api.group kept", r.surfaces[0].apis.String(), r.surfaces[0].pruned)
		}
	})

	runVerdictCases(t, []verdictCase{
		{"NoMatchingNamespace/CSVPresent",
			stateOf(namespaceObj(opNS, nil), namespaceObj(targetNS, nil), operatorGroup(opNS, "operator-group-1", selecting(map[string]string{"a": "app-a"}))),
			operatorCSV(),
			failed(v1alpha1.CSVReasonNoTargetNamespaces, "no targetNamespaces are matched operatorgroups namespace selection").
				with(func(w *want) {
					w.annotations = annotations(nil)
					w.why = []string{"selects no namespace", "a=app-a", "none of the state's 2 Namespaces"}
				})},
		{"MatchingNamespace/CSVPresent/Found",
			stateOf(namespaceObj(opNS, appA), namespaceObj(targetNS, appA), operatorGroup(opNS, "operator-group-1", selecting(appA))),
			operatorCSV(),
			want{ok: true, mode: v1alpha1.InstallModeTypeMultiNamespace, annotations: annotations(ptr(opNS + "," + targetNS)), groupAPIs: ptr("c1.v1.fake.api.group")}},
		{"MatchingNamespace/CSVPresent/Found/ExplicitTargetNamespaces",
			stateOf(namespaceObj(opNS, nil), namespaceObj(targetNS, nil), operatorGroup(opNS, "operator-group-1", targeting(opNS, targetNS))),
			operatorCSV(),
			want{ok: true, mode: v1alpha1.InstallModeTypeMultiNamespace, annotations: annotations(ptr(opNS + "," + targetNS)), groupAPIs: ptr("c1.v1.fake.api.group")}},
		{"AllNamespaces/CSVPresent/Found",
			stateOf(namespaceObj(opNS, appA), namespaceObj(targetNS, appA), operatorGroup(opNS, "operator-group-1")),
			operatorCSV(),
			want{ok: true, mode: v1alpha1.InstallModeTypeAllNamespaces, annotations: annotations(ptr("")), groupAPIs: ptr("c1.v1.fake.api.group")}},
		{"AllNamespaces/CSVPresent/InstallModeNotSupported",
			stateOf(namespaceObj(opNS, nil), namespaceObj(targetNS, nil), operatorGroup(opNS, "operator-group-1")),
			operatorCSV(modes(v1alpha1.InstallMode{Type: v1alpha1.InstallModeTypeAllNamespaces, Supported: false})),
			failed(v1alpha1.CSVReasonUnsupportedOperatorGroup, "AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces").
				with(func(w *want) {
					w.annotations = annotations(ptr(""))
					w.mode = v1alpha1.InstallModeTypeAllNamespaces
				})},
		// TestOperatorGroupConditions: two groups in a namespace get
		// condition MultipleOperatorGroup; the CSV, TooManyOperatorGroups.
		{"BadOperatorGroup/MultipleOperatorGroups",
			stateOf(namespaceObj(opNS, nil),
				operatorGroup(opNS, "operator-group-1", targeting(opNS)),
				operatorGroup(opNS, "operator-group-2", targeting(opNS, "some-namespace"))),
			operatorCSV(),
			failed(v1alpha1.CSVReasonTooManyOperatorGroups, MessageTooManyOperatorGroups).
				with(func(w *want) {
					w.notes = []string{`condition MultipleOperatorGroup (reason MultipleOperatorGroupsFound: "Multiple OperatorGroup found in the same namespace")`,
						"with operator-ns/operator-group-2 alone, the CSV would fit"}
				})},
	})

	// TestOperatorGroupConditions' BadOperatorGroup/MissingServiceAccount:
	// OLM's OperatorGroup sync fails at the service account, before it
	// writes the status; the status in the state stays.
	t.Run("BadOperatorGroup/MissingServiceAccount", func(t *testing.T) {
		og := operatorGroup(opNS, "operator-group-1", targeting(opNS), withStatus("elsewhere"))
		og.Spec.ServiceAccountName = "nonexistingSA"
		og.Status.Conditions = []metav1.Condition{{Type: operatorsv1.OperatorGroupServiceAccountCondition, Status: metav1.ConditionTrue,
			Reason: operatorsv1.OperatorGroupServiceAccountReason, Message: "ServiceAccount nonexistingSA not found"}}
		s := stateOf(namespaceObj(opNS, nil), og)
		tg := s.GroupTargets(og)
		if tg.From != TargetsFromStatus || strings.Join(tg.Namespaces, ",") != "elsewhere" || !strings.Contains(tg.Stuck, "ServiceAccount nonexistingSA not found") {
			t.Errorf("targets %+v, want the status as the state has it", tg)
		}
		checkVerdict(t, s.OperatorGroupVerdict(operatorCSV()), want{ok: true, mode: v1alpha1.InstallModeTypeSingleNamespace,
			annotations: annotations(ptr("elsewhere"))})
		// Without the condition, OLM's sync goes through and writes the
		// spec's targets.
		og.Status.Conditions = nil
		if tg := s.GroupTargets(og); tg.From != TargetsFromTargetNamespaces || strings.Join(tg.Namespaces, ",") != opNS {
			t.Errorf("targets %+v, want [operator-ns] from targetNamespaces", tg)
		}
	})
}

// TestOperatorGroupSupports restates api v0.45.0's TestSupports
// (pkg/operators/v1alpha1/clusterserviceversion_test.go), each case as a
// group whose targets are the case's namespaces and a CSV in
// "operators" with the case's install modes. Supports itself is api's,
// called as it is; what is checked is that the group's targets reach it
// as OLM hands them over.
func TestOperatorGroupSupports(t *testing.T) {
	const opNS = "operators"
	set := func(own, single, multi, all bool) []v1alpha1.InstallMode {
		return []v1alpha1.InstallMode{
			{Type: v1alpha1.InstallModeTypeOwnNamespace, Supported: own},
			{Type: v1alpha1.InstallModeTypeSingleNamespace, Supported: single},
			{Type: v1alpha1.InstallModeTypeMultiNamespace, Supported: multi},
			{Type: v1alpha1.InstallModeTypeAllNamespaces, Supported: all},
		}
	}
	// group: spec.targetNamespaces = the case's namespaces, or an empty
	// spec for [""] (all namespaces); a list holding "" with others is
	// one OLM refuses to compute, so the group keeps it in its status.
	group := func(namespaces ...string) *operatorsv1.OperatorGroup {
		switch {
		case len(namespaces) == 1 && namespaces[0] == "":
			return operatorGroup(opNS, "og")
		case slices.Contains(namespaces, ""):
			return operatorGroup(opNS, "og", targeting(namespaces...), withStatus(namespaces...))
		}
		return operatorGroup(opNS, "og", targeting(namespaces...))
	}
	unsupported := func(msg string) want { return failed(v1alpha1.CSVReasonUnsupportedOperatorGroup, msg) }
	cases := []struct {
		name       string
		modes      []v1alpha1.InstallMode
		namespaces []string
		want       want
	}{
		{"OwnNamespace/OperatorNamespace/Supported", set(true, false, false, false), []string{opNS}, want{ok: true, mode: v1alpha1.InstallModeTypeOwnNamespace}},
		{"SingleNamespace/OtherNamespace/Supported", set(false, true, false, false), []string{"ns-0"}, want{ok: true, mode: v1alpha1.InstallModeTypeSingleNamespace}},
		{"MultiNamespace/OtherNamespaces/Supported", set(false, false, true, false), []string{"ns-0", "ns-2"}, want{ok: true, mode: v1alpha1.InstallModeTypeMultiNamespace}},
		{"AllNamespaces/NamespaceAll/Supported", set(false, false, false, true), []string{""}, want{ok: true, mode: v1alpha1.InstallModeTypeAllNamespaces}},
		{"OwnNamespace/OperatorNamespace/Unsupported", set(false, true, true, true), []string{opNS},
			unsupported("OwnNamespace InstallModeType not supported, cannot configure to watch own namespace")},
		{"OwnNamespace/IncludesOperatorNamespace/Unsupported", set(false, true, true, true), []string{"ns-0", opNS},
			unsupported("OwnNamespace InstallModeType not supported, cannot configure to watch own namespace").
				with(func(w *want) { w.why = []string{"among them the CSV's own namespace operators"} })},
		{"MultiNamespace/OtherNamespaces/Unsupported", set(true, true, false, true), []string{"ns-0", "ns-1"},
			unsupported("MultiNamespace InstallModeType not supported, cannot configure to watch 2 namespaces")},
		{"SingleNamespace/OtherNamespace/Unsupported", set(true, false, true, true), []string{"ns-0"},
			unsupported("SingleNamespace InstallModeType not supported, cannot configure to watch one namespace")},
		{"AllNamespaces/NamespaceAll/Unsupported", set(true, true, true, false), []string{""},
			unsupported("AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces").
				with(func(w *want) {
					w.why = []string{"targets all namespaces (AllNamespaces); this CSV supports only OwnNamespace, SingleNamespace and MultiNamespace: create it in a namespace whose OperatorGroup targets only its own namespace, one namespace or several namespaces"}
				})},
		{"AllNamespaces/IncludingNamespaceAll/Unsupported", set(true, true, true, true), []string{"", "ns-0"},
			unsupported("operatorgroup has invalid selected namespaces, NamespaceAll found when |selected namespaces| > 1")},
		{"MultiNamespace/OtherNamespaces/EmptyInstallModeSet/Unsupported", nil, []string{"ns-0", "ns-1"},
			unsupported("MultiNamespace InstallModeType not supported, cannot configure to watch 2 namespaces")},
		{"SingleNamespace/OtherNamespace/EmptyInstallModeSet/Unsupported", nil, []string{"ns-0"},
			unsupported("SingleNamespace InstallModeType not supported, cannot configure to watch one namespace")},
		{"AllNamespaces/NamespaceAll/EmptyInstallModeSet/Unsupported", nil, []string{""},
			unsupported("AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces").
				with(func(w *want) { w.why = []string{"this CSV supports no install mode"} })},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := stateOf(group(c.namespaces...))
			checkVerdict(t, s.OperatorGroupVerdict(csvObj(opNS, "csv", modes(c.modes...))), c.want)
		})
	}
	// NoNamespaces and NoNamespaces/EmptyInstallModeSet/Unsupported
	// ("cannot configure to watch zero namespaces") cannot happen through
	// OLM: a group with no targets writes no olm.targetNamespaces, and
	// the CSV fails NoTargetNamespaces before Supports is asked.
	t.Run("NoNamespaces", func(t *testing.T) {
		s := stateOf(namespaceObj(opNS, nil), operatorGroup(opNS, "og", selecting(map[string]string{"x": "y"})))
		checkVerdict(t, s.OperatorGroupVerdict(csvObj(opNS, "csv")), failed(v1alpha1.CSVReasonNoTargetNamespaces, MessageNoTargetNamespaces))
	})
}

// TestOperatorGroupRules: the rules' corners OLM's own tests do not
// reach, each read from OLM v0.46.0's code (docs/cluster.md) and checked
// against OLM's code by the differential harness.
func TestOperatorGroupRules(t *testing.T) {
	const ns = "ns"
	ownSingle := modes(v1alpha1.InstallMode{Type: v1alpha1.InstallModeTypeOwnNamespace, Supported: true},
		v1alpha1.InstallMode{Type: v1alpha1.InstallModeTypeSingleNamespace, Supported: true},
		v1alpha1.InstallMode{Type: v1alpha1.InstallModeTypeMultiNamespace, Supported: false},
		v1alpha1.InstallMode{Type: v1alpha1.InstallModeTypeAllNamespaces, Supported: false})
	runVerdictCases(t, []verdictCase{
		{"AllNamespacesGroup/OwnAndSingleCSV", stateOf(operatorGroup(ns, "global")), csvObj(ns, "etcd.v1", ownSingle),
			failed(v1alpha1.CSVReasonUnsupportedOperatorGroup, "AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces").
				with(func(w *want) {
					w.why = []string{"OperatorGroup ns/global targets all namespaces (AllNamespaces); this CSV supports only OwnNamespace and SingleNamespace: create it in a namespace whose OperatorGroup targets only its own namespace or one namespace, or change the group's targets"}
				})},
		{"NoRetry/Skipped", stateOf(), csvObj(ns, "c", inPhase(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonComponentFailedNoRetry, "install strategy failed: x")),
			want{skipped: true, phase: v1alpha1.CSVPhaseFailed, reason: v1alpha1.CSVReasonComponentFailedNoRetry, message: "install strategy failed: x"}},
		{"CRDNameWithoutDot/Skipped", stateOf(operatorGroup(ns, "og")),
			csvObj(ns, "c", func(c *v1alpha1.ClusterServiceVersion) {
				c.Spec.CustomResourceDefinitions.Required = []v1alpha1.CRDDescription{{Name: "nodot", Version: "v1", Kind: "K"}}
			}, inPhase(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful, "ok")),
			want{skipped: true, phase: v1alpha1.CSVPhaseSucceeded, reason: v1alpha1.CSVReasonInstallSuccessful, message: "ok", why: []string{"error parsing crd name: nodot"}}},
		{"TooManyOperatorGroups/AlreadyTheReason", stateOf(operatorGroup(ns, "a"), operatorGroup(ns, "b")),
			csvObj(ns, "c", inPhase(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonTooManyOperatorGroups, "an older message")),
			want{phase: v1alpha1.CSVPhasePending, reason: v1alpha1.CSVReasonTooManyOperatorGroups, message: "an older message", notes: []string{"OLM leaves its status as it is"}}},
		{"InvalidInstallModes/ThenConflict",
			stateOf(operatorGroup(ns, "og", targeting(ns)), operatorGroup("other", "rival", providing("K.v1.example.com")),
				csvObj("other", "holder", owningAPIService("example.com", "v1", "K"))),
			csvObj(ns, "c", owningAPIService("example.com", "v1", "K"), modes(append(allSupported, v1alpha1.InstallMode{Type: v1alpha1.InstallModeTypeOwnNamespace, Supported: false})...)),
			failed(v1alpha1.CSVReasonInvalidInstallModes, "InstallMode list contains duplicates, cannot make set: [{OwnNamespace true} {SingleNamespace true} {MultiNamespace true} {AllNamespaces true} {OwnNamespace false}]").
				with(func(w *want) {
					w.why = []string{"lists OwnNamespace more than once"}
					w.notes = []string{"then: this CSV's APIs are provided already", "OperatorGroup other/rival (which targets all namespaces) provides K.v1.example.com"}
				})},
		{"Unsupported/ThenStatic",
			stateOf(operatorGroup(ns, "og", static)),
			csvObj(ns, "c", ownSingle, owning("things", "v1", "example.com")),
			failed(v1alpha1.CSVReasonUnsupportedOperatorGroup, "AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces").
				with(func(w *want) { w.notes = []string{"then: OperatorGroup ns/og has spec.staticProvidedAPIs: true"} })},
		// Static group, API to remove, CSV already failed for an
		// InterOperatorGroupOwnerConflict: OLM compares the reason with
		// InterOperatorGroupOwnerConflict and leaves the status.
		{"Static/RemoveAPIs/AlreadyInterOperatorGroupOwnerConflict",
			stateOf(operatorGroup(ns, "og", targeting(ns), providing("c1.v1.g1"), static), operatorGroup("other", "rival", providing("c1.v1.g1")),
				csvObj("other", "holder", owning("c1", "v1", "g1"))),
			csvObj(ns, "c", owning("c1", "v1", "g1"), inPhase(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonInterOperatorGroupOwnerConflict, "older words")),
			want{phase: v1alpha1.CSVPhaseFailed, reason: v1alpha1.CSVReasonInterOperatorGroupOwnerConflict, message: "older words", notes: []string{"not CannotModifyStaticOperatorGroupProvidedAPIs"}}},
		// Groups whose targets do not meet may provide the same API; each
		// group covers its own namespace besides its targets.
		{"DisjointGroups/SameAPI",
			stateOf(operatorGroup("a", "og", targeting("a")), operatorGroup("b", "og", targeting("b"), providing("c1.v1.g1"))),
			csvObj("a", "c", owning("c1", "v1", "g1")),
			want{ok: true, groupAPIs: ptr("c1.v1.g1"), steps: []string{"OLM adds c1.v1.g1"}}},
		// Group b/og targets only c, but covers its own namespace b, which
		// a/og targets.
		{"OwnNamespaceCounts/SameAPI",
			stateOf(operatorGroup("a", "og", targeting("b")), operatorGroup("b", "og", targeting("c"), providing("c1.v1.g1")),
				csvObj("b", "holder", owning("c1", "v1", "g1"))),
			csvObj("a", "x", owning("c1", "v1", "g1")),
			failed(v1alpha1.CSVReasonInterOperatorGroupOwnerConflict, MessageInterGroupConflict).
				with(func(w *want) {
					w.mode = v1alpha1.InstallModeTypeSingleNamespace
					w.why = []string{"OperatorGroup b/og (which targets one namespace, c) provides c1.v1.g1, and both groups cover b"}
				})},
		{"TargetsMeetInAnotherNamespace",
			stateOf(operatorGroup("a", "og", targeting("a", "shared")), operatorGroup("b", "og", targeting("shared"), providing("c1.v1.g1")),
				csvObj("b", "holder", owning("c1", "v1", "g1"))),
			csvObj("a", "c", owning("c1", "v1", "g1")),
			failed(v1alpha1.CSVReasonInterOperatorGroupOwnerConflict, MessageInterGroupConflict).
				with(func(w *want) {
					w.why = []string{"OperatorGroup b/og (which targets one namespace, shared) provides c1.v1.g1, and both groups cover shared"}
				})},
		// An API no CSV of the other group's namespace provides is pruned
		// by OLM's OperatorGroup sync: no conflict.
		{"StaleProvidedAPIPruned",
			stateOf(operatorGroup("a", "og", targeting("a")), operatorGroup("b", "og", providing("c1.v1.g1,c9.v1.g1"),
				func(og *operatorsv1.OperatorGroup) {}), csvObj("b", "holder", owning("c9", "v1", "g1"))),
			csvObj("a", "c", owning("c1", "v1", "g1")),
			want{ok: true, notes: []string{"OperatorGroup b/og lists c1.v1.g1 in its olm.providedAPIs, but no CSV of its namespace provides them"}}},
		// … unless the group is static, or a CSV of its namespace in phase
		// None or Pending provides an API it does not list.
		{"StaleProvidedAPIKeptByPendingCSV",
			stateOf(operatorGroup("a", "og", targeting("a")), operatorGroup("b", "og", providing("c1.v1.g1")),
				csvObj("b", "new", owning("c9", "v1", "g1"), inPhase(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsUnknown, ""))),
			csvObj("a", "c", owning("c1", "v1", "g1")),
			failed(v1alpha1.CSVReasonInterOperatorGroupOwnerConflict, MessageInterGroupConflict)},
		// Which CSV OLM looks at for an API several provide is map order;
		// on its periodic syncs it prunes once it looks at a settled one.
		{"StaleProvidedAPIPrunedDespitePendingCSV",
			stateOf(operatorGroup("a", "og", targeting("a")), operatorGroup("b", "og", providing("c1.v1.g1")),
				csvObj("b", "new", owning("c9", "v1", "g1"), inPhase(v1alpha1.CSVPhasePending, v1alpha1.CSVReasonRequirementsUnknown, "")),
				csvObj("b", "old", owning("c9", "v1", "g1"), inPhase(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful, ""))),
			csvObj("a", "c", owning("c1", "v1", "g1")),
			want{ok: true, notes: []string{"OLM's OperatorGroup sync prunes them"}}},
		// The quirk of operatorGroupAnnotationsDiffer: a CSV annotated ""
		// (all namespaces) under a group whose status.namespaces is empty
		// is taken as up to date, and installs as AllNamespaces.
		{"EmptyStatus/AnnotatedAllNamespaces",
			stateOf(namespaceObj(ns, nil), operatorGroup(ns, "og", selecting(map[string]string{"x": "y"}))),
			csvObj(ns, "c", annotated("og", ns, "")),
			want{ok: true, mode: v1alpha1.InstallModeTypeAllNamespaces, notes: []string{"reads it as all namespaces, not as NoTargetNamespaces"}}},
		{"EmptyStatus/AnnotatedOwnNamespace",
			stateOf(namespaceObj(ns, nil), operatorGroup(ns, "og", selecting(map[string]string{"x": "y"}))),
			csvObj(ns, "c", annotated("og", ns, ns), inPhase(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful, "")),
			failed(v1alpha1.CSVReasonNoTargetNamespaces, MessageNoTargetNamespaces).
				with(func(w *want) {
					// OLM keeps the old olm.targetNamespaces: it writes the
					// annotation only when the status has namespaces.
					w.annotations = map[string]string{operatorsv1.OperatorGroupAnnotationKey: "og", operatorsv1.OperatorGroupNamespaceAnnotationKey: ns, operatorsv1.OperatorGroupTargetsAnnotationKey: ns}
				})},
		// spec.targetNamespaces holding "": OLM cannot compute the targets,
		// keeps the status, and does not check for no targets.
		{"TargetNamespacesWithNamespaceAll/EmptyStatus",
			stateOf(operatorGroup(ns, "og", targeting("", ns))),
			csvObj(ns, "c", inPhase(v1alpha1.CSVPhaseSucceeded, v1alpha1.CSVReasonInstallSuccessful, "fine")),
			want{phase: v1alpha1.CSVPhaseSucceeded, reason: v1alpha1.CSVReasonInstallSuccessful, message: "fine",
				why: []string{"OLM cannot write the CSV's olm.targetNamespaces annotation", "TargetNamespaces cannot contain NamespaceAll: [ ns]"}}},
	})
}

// TestGroupTargetsWithoutNamespaces: a must-gather holds few Namespace
// objects; a selector is then answered from the group's status.
func TestGroupTargetsWithoutNamespaces(t *testing.T) {
	og := operatorGroup("ops", "og", selecting(map[string]string{"team": "a"}), withStatus("ops", "apps"))
	for name, s := range map[string]*State{
		"none":             stateOf(og),
		"lacks one status": stateOf(og, namespaceObj("ops", map[string]string{"team": "a"})),
	} {
		tg := s.GroupTargets(og)
		if tg.From != TargetsFromStatus || strings.Join(tg.Namespaces, ",") != "apps,ops" || tg.Note == "" {
			t.Errorf("%s: targets %+v, want the status, said so", name, tg)
		}
	}
	s := stateOf(og, namespaceObj("ops", map[string]string{"team": "a"}), namespaceObj("apps", nil), namespaceObj("more", map[string]string{"team": "a"}))
	if tg := s.GroupTargets(og); tg.From != TargetsFromSelector || strings.Join(tg.Namespaces, ",") != "more,ops" || !strings.Contains(tg.Note, "from [apps, ops] to [more, ops]") {
		t.Errorf("targets %+v, want the selector's [more ops]", tg)
	}
	bad := operatorGroup("ops", "bad", func(og *operatorsv1.OperatorGroup) {
		og.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Near"}}}
	}, targeting("ops"), withStatus("x"))
	if tg := s.GroupTargets(bad); tg.From != TargetsFromStatus || tg.Error != `"Near" is not a valid label selector operator` || strings.Join(tg.Namespaces, ",") != "x" {
		t.Errorf("targets %+v, want the status: OLM's selector error comes first", tg)
	}
}

// TestOperatorGroupVerdictFiles reads a state from files and checks the
// verdicts of its CSVs, and of a catalog bundle's CSV not in it, as JSON.
func TestOperatorGroupVerdictFiles(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"namespaces/team-a/operators.coreos.com/operatorgroups/og.yaml": `apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata: {name: og, namespace: team-a}
spec:
  selector: {matchLabels: {team: a}}
status:
  namespaces: [team-a, team-a-apps]
`,
		"namespaces/team-a/operators.coreos.com/clusterserviceversions/etcd.yaml": `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: etcd.v0.9.4
  namespace: team-a
  annotations: {olm.operatorGroup: og, olm.operatorNamespace: team-a, olm.targetNamespaces: "team-a,team-a-apps"}
spec:
  installModes: [{type: OwnNamespace, supported: true}, {type: MultiNamespace, supported: true}]
  customresourcedefinitions:
    owned: [{name: etcdclusters.etcd.database.coreos.com, version: v1beta2, kind: EtcdCluster}]
status: {phase: Succeeded, reason: InstallSucceeded}
`,
	})
	s, err := Read(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	vs := s.OperatorGroupVerdicts()
	if len(vs) != 1 {
		t.Fatalf("%d verdicts", len(vs))
	}
	checkVerdict(t, vs[0], want{ok: true, mode: v1alpha1.InstallModeTypeMultiNamespace})
	if vs[0].Group.Targets.From != TargetsFromStatus {
		t.Errorf("targets from %q, want status (no Namespace objects)", vs[0].Group.Targets.From)
	}
	// A bundle's CSV, not installed: SingleNamespace only.
	bundle := csvObj("team-a", "other.v1", modes(v1alpha1.InstallMode{Type: v1alpha1.InstallModeTypeSingleNamespace, Supported: true}))
	v := s.OperatorGroupVerdict(bundle)
	checkVerdict(t, v, failed(v1alpha1.CSVReasonUnsupportedOperatorGroup, "MultiNamespace InstallModeType not supported, cannot configure to watch 2 namespaces"))
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"csv":"other.v1"`, `"ok":false`, `"phase":"Failed"`, `"reason":"UnsupportedOperatorGroup"`, `"installMode":"MultiNamespace"`,
		`"supportedInstallModes":["SingleNamespace"]`, `"group":{"namespace":"team-a","name":"og","targets":{"namespaces":["team-a","team-a-apps"],"from":"status","selector":"team=a"`,
		`"csvAnnotations":{"olm.operatorGroup":"og","olm.operatorNamespace":"team-a","olm.targetNamespaces":"team-a,team-a-apps"}`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("JSON lacks %s:\n%s", k, b)
		}
	}
}

// ExampleGroupRules_Verdict answers the example of docs/cluster.md: the
// CSVs of a state, then those of two catalog bundles about to be
// installed.
func ExampleGroupRules_Verdict() {
	s, err := Read(context.Background(), "testdata/operatorgroup/state.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	bundles, err := Read(context.Background(), "testdata/operatorgroup/bundles.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	r := s.GroupRules()
	for _, csv := range append(s.CSVs, bundles.CSVs...) {
		v := r.Verdict(csv)
		if v.OK {
			fmt.Printf("%s/%s: fits (%s)\n  %s\n", v.Namespace, v.CSV, v.InstallMode, v.Why)
			continue
		}
		fmt.Printf("%s/%s: %s %s: %s\n  %s\n", v.Namespace, v.CSV, v.Phase, v.Reason, v.Message, v.Why)
	}
	// Output:
	// openshift-operators/etcdoperator.v0.9.4: fits (AllNamespaces)
	//   fits: OperatorGroup openshift-operators/global-operators targets all namespaces, an AllNamespaces install, which the CSV supports; no OperatorGroup whose targets intersect it provides the CSV's APIs
	// openshift-operators/postgresoperator.v5.4.0: Failed UnsupportedOperatorGroup: AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces
	//   OperatorGroup openshift-operators/global-operators targets all namespaces (AllNamespaces); this CSV supports only OwnNamespace and SingleNamespace: create it in a namespace whose OperatorGroup targets only its own namespace or one namespace, or change the group's targets
	// team-a/etcdoperator.v0.9.4: Failed InterOperatorGroupOwnerConflict: intersecting operatorgroups provide the same apis
	//   this CSV's APIs are provided already to namespaces its OperatorGroup team-a/team-a covers (only its own namespace, team-a): OperatorGroup openshift-operators/global-operators (which targets all namespaces) provides EtcdCluster.v1beta2.etcd.database.coreos.com, and both groups cover team-a; OLM allows one provider of an API for a namespace: uninstall the other provider, or make the groups' targets disjoint
}

// TestGroupRulesConcurrent: one GroupRules answers from several
// goroutines (the race detector watches).
func TestGroupRulesConcurrent(t *testing.T) {
	s := stateOf(namespaceObj("a", map[string]string{"team": "a"}), operatorGroup("a", "og", selecting(map[string]string{"team": "a"})),
		operatorGroup("b", "og", providing("c1.v1.g1")), csvObj("b", "holder", owning("c1", "v1", "g1")))
	r := s.GroupRules()
	want := r.Verdict(csvObj("a", "x", owning("c1", "v1", "g1")))
	done := make(chan *GroupVerdict)
	for range 4 {
		go func() { done <- r.Verdict(csvObj("a", "x", owning("c1", "v1", "g1"))) }()
	}
	for range 4 {
		if v := <-done; v.Reason != want.Reason || v.Why != want.Why {
			t.Errorf("verdict %s %q, want %s %q", v.Reason, v.Why, want.Reason, want.Why)
		}
	}
	if want.Reason != v1alpha1.CSVReasonInterOperatorGroupOwnerConflict {
		t.Errorf("reason %s", want.Reason)
	}
}
