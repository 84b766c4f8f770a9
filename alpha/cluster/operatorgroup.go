package cluster

// The OperatorGroup rules of olm-operator, operator-lifecycle-manager
// v0.46.0 (pkg/controller/operators/olm: operator.go
// transitionCSVState and operatorGroupForCSV, operatorgroup.go
// getOperatorGroupTargets and the annotation helpers, groups.go
// NewOperatorGroup and ReconcileAPIIntersection), with operator-framework
// api v0.45.0's InstallModeSet (NewInstallModeSet, Supports), called as
// they are. docs/cluster.md, "OperatorGroup rules", says what each rule
// does and where we differ.

import (
	"fmt"
	"slices"
	"strings"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// OLM's messages for the OperatorGroup rules (operator.go); the install
// mode messages are api's (InstallModeSet.Supports, NewInstallModeSet).
const (
	MessageNoOperatorGroup       = "csv in namespace with no operatorgroups"
	MessageTooManyOperatorGroups = "csv created in namespace with multiple operatorgroups, can't pick one automatically"
	MessageNoTargetNamespaces    = "no targetNamespaces are matched operatorgroups namespace selection"
	MessageMissingTargets        = "csv missing olm.targetNamespaces annotation"
	MessageStaticProvidedAPIs    = "static provided api operatorgroup cannot be modified by these apis"
	MessageInterGroupConflict    = "intersecting operatorgroups provide the same apis"
	// MessageMultipleOperatorGroups is the condition OLM's OperatorGroup
	// sync sets on every group of a namespace with more than one
	// (type MultipleOperatorGroup, reason MultipleOperatorGroupsFound).
	MessageMultipleOperatorGroups = "Multiple OperatorGroup found in the same namespace"
)

// Where a group's targets come from (GroupTargets.From).
const (
	TargetsFromTargetNamespaces = "targetNamespaces" // spec.targetNamespaces
	TargetsFromSelector         = "selector"         // spec.selector over the state's Namespaces
	TargetsFromStatus           = "status"           // status.namespaces, as the state has it
	TargetsFromAll              = "all"              // no targetNamespaces, no selector (or an empty one)
)

// GroupTargets are the namespaces an OperatorGroup targets, as OLM's
// OperatorGroup sync writes them in its status.namespaces and onto its
// CSVs (annotation olm.targetNamespaces).
type GroupTargets struct {
	// AllNamespaces: the group targets every namespace (status.namespaces
	// [""]).
	AllNamespaces bool `json:"allNamespaces,omitempty"`
	// Namespaces are the targets, sorted (none when AllNamespaces or when
	// the group targets no namespace).
	Namespaces []string `json:"namespaces,omitempty"`
	// From says how they were found: targetNamespaces, selector, all, or
	// status (the group's status.namespaces as the state has it, because
	// the state holds no Namespace objects for the selector to match or
	// lacks one the status names, or because OLM's OperatorGroup sync
	// stops before it writes the status: Error, Stuck).
	From string `json:"from"`
	// Selector is the group's label selector, when it has one that counts.
	Selector string `json:"selector,omitempty"`
	// Error is OLM's error computing the targets (a NamespaceAll in
	// spec.targetNamespaces, an invalid selector).
	Error string `json:"error,omitempty"`
	// Stuck says why OLM's OperatorGroup sync stops before it writes
	// status.namespaces and prunes olm.providedAPIs (Error, or the group's
	// service account is missing).
	Stuck string `json:"stuck,omitempty"`
	// Note says why the status was used, or that OLM's OperatorGroup sync
	// will first change the status the state has.
	Note string `json:"note,omitempty"`

	// status is status.namespaces as OLM's OperatorGroup sync leaves it
	// (nil when empty, as the API server stores an empty list), in the
	// order OLM reads it.
	status []string
	// live is what getOperatorGroupTargets returns now (liveErr its
	// error): the CSV sync's NoTargetNamespaces check reads it.
	live     []string
	liveErr  bool
	liveFrom string
}

// annotation is the olm.targetNamespaces annotation OLM writes for these
// targets (operatorsv1.OperatorGroup.BuildTargetNamespaces).
func (t GroupTargets) annotation() string {
	ns := slices.Clone(t.status)
	slices.Sort(ns)
	return strings.Join(ns, ",")
}

func (t GroupTargets) describe(csvNamespace string) string {
	switch {
	case t.AllNamespaces:
		return "all namespaces"
	case len(t.status) == 0:
		return "no namespace"
	case len(t.Namespaces) == 1 && t.Namespaces[0] == csvNamespace:
		return "only its own namespace, " + csvNamespace
	case len(t.Namespaces) == 1:
		return "one namespace, " + t.Namespaces[0]
	}
	return fmt.Sprintf("%d namespaces: %s", len(t.Namespaces), strings.Join(quoteEmpty(t.Namespaces), ", "))
}

func quoteEmpty(ns []string) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		if n == "" {
			n = `"" (all namespaces)`
		}
		out[i] = n
	}
	return out
}

// GroupTargets computes an OperatorGroup's targets as OLM's
// OperatorGroup sync does (operatorgroup.go getOperatorGroupTargets):
// spec.targetNamespaces when it has any; else every namespace when there
// is no selector or an empty one; else the Namespaces the selector
// matches. A selector is matched against the state's Namespace objects,
// unless the state has none or lacks one that the group's
// status.namespaces names (a must-gather holds few Namespaces): then the
// group's status.namespaces is taken as the state has it, and From says
// so. When OLM cannot compute the targets, or its OperatorGroup sync
// stops earlier (the group's service account is missing: condition
// OperatorGroupServiceAccount), the status stays as the state has it.
func (s *State) GroupTargets(og *operatorsv1.OperatorGroup) GroupTargets {
	t := GroupTargets{}
	asIs := nilIfEmpty(slices.Clone(og.Status.Namespaces))
	t.live, t.From, t.Note, t.liveErr = s.liveTargets(og, &t)
	t.liveFrom = t.From
	if t.liveErr {
		t.Stuck = "OLM cannot compute the group's targets (" + t.Error + "): its OperatorGroup sync fails before it writes status.namespaces"
	} else if c := meta.FindStatusCondition(og.Status.Conditions, operatorsv1.OperatorGroupServiceAccountCondition); og.Spec.ServiceAccountName != "" && c != nil && c.Status == metav1.ConditionTrue {
		t.Stuck = fmt.Sprintf("the group's service account is missing (condition %s: %s): OLM's OperatorGroup sync fails before it writes status.namespaces", c.Type, c.Message)
	}
	if t.Stuck != "" {
		t.From, t.Note, t.status = TargetsFromStatus, t.Stuck+", which keeps what the state has", asIs
	} else {
		t.status = t.live
	}
	t.AllNamespaces = len(t.status) == 1 && t.status[0] == ""
	if !t.AllNamespaces {
		t.Namespaces = slices.Sorted(slices.Values(t.status))
	}
	if t.From != TargetsFromStatus && !sameSet(t.status, og.Status.Namespaces) {
		now := "[" + strings.Join(quoteEmpty(t.Namespaces), ", ") + "]"
		if t.AllNamespaces {
			now = "all namespaces"
		}
		t.Note = fmt.Sprintf("OLM's OperatorGroup sync first changes the group's status.namespaces from [%s] to %s",
			strings.Join(quoteEmpty(slices.Sorted(slices.Values(og.Status.Namespaces))), ", "), now)
	}
	return t
}

// liveTargets is getOperatorGroupTargets over the state.
func (s *State) liveTargets(og *operatorsv1.OperatorGroup, t *GroupTargets) (live []string, from, note string, failed bool) {
	asIs := nilIfEmpty(slices.Clone(og.Status.Namespaces))
	// OLM builds the selector first, even when targetNamespaces are set.
	sel, err := metav1.LabelSelectorAsSelector(og.Spec.Selector)
	if err != nil {
		t.Error = err.Error()
		return nil, TargetsFromStatus, "", true
	}
	switch {
	case len(og.Spec.TargetNamespaces) > 0:
		for _, ns := range og.Spec.TargetNamespaces {
			if ns == "" {
				t.Error = fmt.Sprintf("TargetNamespaces cannot contain NamespaceAll: %v", og.Spec.TargetNamespaces)
				return nil, TargetsFromStatus, "", true
			}
			if !slices.Contains(live, ns) {
				live = append(live, ns)
			}
		}
		return live, TargetsFromTargetNamespaces, "", false
	case sel == nil || sel.Empty() || sel == labels.Nothing():
		return []string{""}, TargetsFromAll, "", false
	}
	t.Selector = metav1.FormatLabelSelector(og.Spec.Selector)
	if len(s.Namespaces) == 0 {
		return asIs, TargetsFromStatus, "the state holds no Namespace objects for the selector to match: status.namespaces as the state has it", false
	}
	for _, ns := range og.Status.Namespaces {
		if ns != "" && s.Namespace(ns) == nil {
			return asIs, TargetsFromStatus, "the state holds no Namespace " + ns + ", which the group's status.namespaces names: status.namespaces as the state has it", false
		}
	}
	for _, ns := range s.Namespaces {
		if sel.Matches(labels.Set(ns.Labels)) {
			live = append(live, ns.Name)
		}
	}
	return nilIfEmpty(live), TargetsFromSelector, "", false
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// sameSet is OLM's namespacesChanged, negated.
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			return false
		}
	}
	return true
}

// GroupVerdict is what olm-operator decides for a CSV under the
// OperatorGroup rules, when its syncs of the CSV settle with the rest of
// the state as it is (OLM's OperatorGroup sync having set each group's
// status.namespaces).
type GroupVerdict struct {
	CSV       string `json:"csv"`
	Namespace string `json:"namespace"`
	// OK: the CSV passes every OperatorGroup rule; OLM goes on with it
	// (requirements, then the install).
	OK bool `json:"ok"`
	// Skipped: OLM does not get as far as the OperatorGroup rules (its
	// status reason is InstallComponentFailedNoRetry, or a CRD name OLM
	// cannot parse): the CSV keeps its status.
	Skipped bool `json:"skipped,omitempty"`
	// Phase, Reason and Message are the CSV's status as OLM leaves it,
	// in OLM's words, when it is not OK: phase Failed and the first rule
	// that fails, or the status the CSV already has when OLM leaves it
	// (Skipped, or a reason OLM does not set again).
	Phase   v1alpha1.ClusterServiceVersionPhase `json:"phase,omitempty"`
	Reason  v1alpha1.ConditionReason            `json:"reason,omitempty"`
	Message string                              `json:"message,omitempty"`
	// Why says it for people: what is wrong and what to change, or why
	// it fits.
	Why string `json:"why"`
	// Steps are what OLM writes on the way, in order: the CSV's
	// OperatorGroup annotations, the group's olm.providedAPIs.
	Steps []string `json:"steps,omitempty"`
	// Notes are the other rules that fail, after the first one, and
	// what else is worth knowing.
	Notes []string `json:"notes,omitempty"`

	// Group is the OperatorGroup the CSV falls under (none when the
	// namespace has none or several: Groups).
	Group *GroupFacts `json:"group,omitempty"`
	// Groups are the namespace's OperatorGroups when there are several.
	Groups []string `json:"groups,omitempty"`
	// InstallMode is the install mode the group's targets imply.
	InstallMode v1alpha1.InstallModeType `json:"installMode,omitempty"`
	// SupportedInstallModes are the CSV's supported install modes.
	SupportedInstallModes []v1alpha1.InstallModeType `json:"supportedInstallModes"`
	// ProvidedAPIs are the CSV's owned CRDs and APIServices, as OLM
	// writes them in olm.providedAPIs (Kind.version.group).
	ProvidedAPIs []string `json:"providedAPIs,omitempty"`
	// Conflicts are the other OperatorGroups, their targets intersecting
	// the group's, that provide some of these APIs.
	Conflicts []GroupConflict `json:"conflicts,omitempty"`
	// CSVAnnotations are the OperatorGroup annotations the CSV carries
	// when OLM is done (olm.operatorGroup, olm.operatorNamespace,
	// olm.targetNamespaces).
	CSVAnnotations map[string]string `json:"csvAnnotations,omitempty"`
	// GroupProvidedAPIs is the group's olm.providedAPIs annotation when
	// OLM is done, when it changed it.
	GroupProvidedAPIs *string `json:"groupProvidedAPIs,omitempty"`
}

// GroupFacts is an OperatorGroup as the rules read it.
type GroupFacts struct {
	Namespace string       `json:"namespace"`
	Name      string       `json:"name"`
	Targets   GroupTargets `json:"targets"`
	// StaticProvidedAPIs: spec.staticProvidedAPIs.
	StaticProvidedAPIs bool `json:"staticProvidedAPIs,omitempty"`
	// ProvidedAPIs is the olm.providedAPIs annotation as the state has it.
	ProvidedAPIs string `json:"providedAPIs,omitempty"`
}

// GroupConflict is another OperatorGroup providing some of a CSV's APIs
// to namespaces its own group targets too.
type GroupConflict struct {
	Group   string       `json:"group"` // namespace/name
	Targets GroupTargets `json:"targets"`
	// Shared are the namespaces both groups cover (each group covers its
	// own namespace too; "" is all namespaces).
	Shared []string `json:"shared"`
	APIs   []string `json:"apis"`
}

// GroupRules answers the OperatorGroup rules over a state: each group's
// targets and provided APIs are computed once. It is safe for concurrent
// use.
type GroupRules struct {
	s        *State
	surfaces []*groupSurfaceT // every OperatorGroup, in the state's order
	targets  map[*operatorsv1.OperatorGroup]GroupTargets
}

// GroupRules computes the targets and provided APIs of every
// OperatorGroup of the state as OLM's OperatorGroup sync leaves them, for
// the verdicts of its CSVs and of catalog bundles' CSVs.
func (s *State) GroupRules() *GroupRules {
	r := &GroupRules{s: s, targets: map[*operatorsv1.OperatorGroup]GroupTargets{}}
	for _, og := range s.OperatorGroups {
		t := s.GroupTargets(og)
		r.targets[og] = t
		apis, pruned := prunedAPIs(og, t, s.CSVsIn(og.Namespace))
		g := groupSurface(og.Namespace, og.Name, t, apis)
		g.pruned = pruned
		r.surfaces = append(r.surfaces, g)
	}
	return r
}

// OperatorGroupVerdicts gives the verdict of every CSV of the state, in
// the state's order (by namespace and name).
func (s *State) OperatorGroupVerdicts() []*GroupVerdict {
	r := s.GroupRules()
	out := make([]*GroupVerdict, 0, len(s.CSVs))
	for _, c := range s.CSVs {
		out = append(out, r.Verdict(c))
	}
	return out
}

// OperatorGroupVerdict is GroupRules().Verdict(csv), for one CSV.
func (s *State) OperatorGroupVerdict(csv *v1alpha1.ClusterServiceVersion) *GroupVerdict {
	return s.GroupRules().Verdict(csv)
}

// Verdict answers, for a CSV that OLM's next sync would install or keep
// in csv.Namespace (an installed CSV of the state, or the CSV of a catalog
// bundle, which then has no status and no annotations), what olm-operator
// decides under the OperatorGroup rules. It reads the CSV's name,
// namespace, spec.installModes, the names, versions and kinds of
// spec.customresourcedefinitions.owned (and the names of required), the
// group, version and kind of spec.apiservicedefinitions.owned, and, of an
// installed CSV, its annotations olm.operatorGroup, olm.operatorNamespace,
// olm.targetNamespaces and its status phase, reason and message.
func (r *GroupRules) Verdict(csv *v1alpha1.ClusterServiceVersion) *GroupVerdict {
	v := &GroupVerdict{CSV: csv.Name, Namespace: csv.Namespace, SupportedInstallModes: supportedModes(csv.Spec.InstallModes)}
	r.decide(v, csv, r.s.OperatorGroupsIn(csv.Namespace))
	var notes []string
	for _, n := range v.Notes {
		if !slices.Contains(notes, n) {
			notes = append(notes, n)
		}
	}
	v.Notes = notes
	return v
}

// csvState is what OLM's syncs change of a CSV and its group.
type csvState struct {
	annotations   map[string]string
	phase         v1alpha1.ClusterServiceVersionPhase
	reason        v1alpha1.ConditionReason
	message       string
	groupAPIs     string // the group's olm.providedAPIs
	groupAPIsDone bool   // whether OLM changed it
}

func (c *csvState) setPhase(phase v1alpha1.ClusterServiceVersionPhase, reason v1alpha1.ConditionReason, msg string) bool {
	changed := c.phase != phase || c.reason != reason || c.message != msg
	c.phase, c.reason, c.message = phase, reason, msg
	return changed
}

// maxSyncs bounds the syncs simulated: OLM's settle in at most four
// (annotations, provided APIs, then the verdict).
const maxSyncs = 8

// decide follows transitionCSVState's OperatorGroup part, sync after
// sync, until OLM has nothing more to write.
func (r *GroupRules) decide(v *GroupVerdict, csv *v1alpha1.ClusterServiceVersion, groups []*operatorsv1.OperatorGroup) {
	st := &csvState{annotations: map[string]string{}, phase: csv.Status.Phase, reason: csv.Status.Reason, message: csv.Status.Message}
	for _, k := range []string{operatorsv1.OperatorGroupAnnotationKey, operatorsv1.OperatorGroupNamespaceAnnotationKey, operatorsv1.OperatorGroupTargetsAnnotationKey} {
		if val, ok := csv.Annotations[k]; ok {
			st.annotations[k] = val
		}
	}
	keep := func(why string) {
		v.Phase, v.Reason, v.Message, v.Why = st.phase, st.reason, st.message, why
	}
	if csv.Status.Reason == v1alpha1.CSVReasonComponentFailedNoRetry {
		v.Skipped = true
		keep("OLM does not sync a CSV whose status reason is InstallComponentFailedNoRetry until something requeues it on purpose (a change of its OperatorGroup's service account): it keeps its status, and the OperatorGroup rules are not checked")
		return
	}
	provided, err := providedAPIsOf(csv)
	if err != nil {
		v.Skipped = true
		keep("OLM cannot read the CSV's APIs (" + err.Error() + "): it leaves the CSV as it is on every sync, and the OperatorGroup rules are not checked; the bundle must name its CRDs plural.group")
		return
	}
	v.ProvidedAPIs = provided.list()

	switch len(groups) {
	case 0:
		st.setPhase(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonNoOperatorGroup, MessageNoOperatorGroup)
		v.Phase, v.Reason, v.Message = st.phase, st.reason, st.message
		v.Why = fmt.Sprintf("namespace %s has no OperatorGroup, and OLM installs no operator in a namespace without one: create one; %s", csv.Namespace, fittingGroups(csv))
		return
	case 1:
	default:
		for _, g := range groups {
			v.Groups = append(v.Groups, g.Namespace+"/"+g.Name)
		}
		if st.reason != v1alpha1.CSVReasonTooManyOperatorGroups {
			st.setPhase(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonTooManyOperatorGroups, MessageTooManyOperatorGroups)
		} else {
			v.Notes = append(v.Notes, "the CSV's reason is TooManyOperatorGroups already: OLM leaves its status as it is")
		}
		v.Phase, v.Reason, v.Message = st.phase, st.reason, st.message
		v.Why = fmt.Sprintf("namespace %s has %d OperatorGroups (%s): OLM picks none and fails every CSV of the namespace: delete all but one",
			csv.Namespace, len(groups), strings.Join(v.Groups, ", "))
		v.Notes = append(v.Notes, "OLM's OperatorGroup sync sets condition MultipleOperatorGroup (reason MultipleOperatorGroupsFound: \""+MessageMultipleOperatorGroups+"\") on each of them")
		for _, g := range groups {
			alone := &GroupVerdict{CSV: v.CSV, Namespace: v.Namespace}
			r.decide(alone, csv, []*operatorsv1.OperatorGroup{g})
			if alone.OK {
				v.Notes = append(v.Notes, fmt.Sprintf("with %s/%s alone, the CSV would fit: %s", g.Namespace, g.Name, alone.Why))
			} else {
				v.Notes = append(v.Notes, fmt.Sprintf("with %s/%s alone, the CSV would fail: %s (%s): %s", g.Namespace, g.Name, alone.Reason, alone.Message, alone.Why))
			}
		}
		return
	}

	g := groups[0]
	t := r.targets[g]
	v.Group = &GroupFacts{Namespace: g.Namespace, Name: g.Name, Targets: t, StaticProvidedAPIs: g.Spec.StaticProvidedAPIs,
		ProvidedAPIs: g.Annotations[operatorsv1.OperatorGroupProvidedAPIsAnnotationKey]}
	others := r.otherGroups(g)
	if t.From != TargetsFromStatus && t.Note != "" {
		v.Steps = append(v.Steps, t.Note)
	}
	// The group's olm.providedAPIs as OLM's OperatorGroup sync leaves it,
	// with this CSV in its namespace.
	var pruned apiSet
	st.groupAPIs, pruned = prunedAPIs(g, t, withCSV(r.s.CSVsIn(csv.Namespace), csv))
	if len(pruned) > 0 {
		st.groupAPIsDone = true
		v.Steps = append(v.Steps, fmt.Sprintf("OLM's OperatorGroup sync prunes %s from the group's olm.providedAPIs (now %q): no CSV of its namespace provides them",
			strings.Join(pruned.list(), ", "), st.groupAPIs))
	}
	for _, o := range others {
		if gone := provided.intersection(o.pruned); len(gone) > 0 && len(groupSurface(g.Namespace, g.Name, t, "").intersection(o)) > 0 {
			v.Notes = append(v.Notes, fmt.Sprintf("OperatorGroup %s/%s lists %s in its olm.providedAPIs, but no CSV of its namespace provides them: OLM's OperatorGroup sync prunes them, and they do not count",
				o.namespace, o.name, strings.Join(gone.list(), ", ")))
		}
	}
	defer func() {
		v.CSVAnnotations = st.annotations
		if len(v.CSVAnnotations) == 0 {
			v.CSVAnnotations = nil
		}
		if st.groupAPIsDone {
			v.GroupProvidedAPIs = &st.groupAPIs
		}
	}()

	for range maxSyncs {
		// operatorGroupForCSV: the annotations first.
		if annotationsDiffer(st.annotations, g, t) {
			before := fmt.Sprint(st.annotations)
			st.annotations[operatorsv1.OperatorGroupNamespaceAnnotationKey] = g.Namespace
			st.annotations[operatorsv1.OperatorGroupAnnotationKey] = g.Name
			if t.status != nil {
				st.annotations[operatorsv1.OperatorGroupTargetsAnnotationKey] = t.annotation()
			}
			changed := before != fmt.Sprint(st.annotations)
			if changed {
				v.Steps = append(v.Steps, fmt.Sprintf("OLM writes the CSV's annotations olm.operatorGroup=%s, olm.operatorNamespace=%s%s, and syncs it again",
					g.Name, g.Namespace, targetsStep(t)))
			}
			if !t.liveErr && len(t.live) == 0 {
				changed = st.setPhase(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonNoTargetNamespaces, MessageNoTargetNamespaces) || changed
			}
			if !changed {
				v.Phase, v.Reason, v.Message = st.phase, st.reason, st.message
				v.Why = noTargetsWhy(g, t, r.s)
				if st.reason != v1alpha1.CSVReasonNoTargetNamespaces {
					v.Why = "OLM cannot write the CSV's olm.targetNamespaces annotation and goes no further, on every sync: the CSV keeps its status; " + v.Why
				}
				return
			}
			continue
		}

		modes, err := v1alpha1.NewInstallModeSet(csv.Spec.InstallModes)
		if err != nil {
			st.setPhase(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonInvalidInstallModes, err.Error())
			v.Phase, v.Reason, v.Message = st.phase, st.reason, st.message
			v.Why = "the CSV lists " + duplicateModes(csv.Spec.InstallModes) + " more than once in spec.installModes: OLM refuses it under any OperatorGroup; the bundle must be fixed"
			r.apiNotes(v, csv, provided, g, t, others)
			return
		}
		targets, ok := st.annotations[operatorsv1.OperatorGroupTargetsAnnotationKey]
		if !ok { // operatorGroupForCSV never lets a CSV without it through; OLM checks anyway
			st.setPhase(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonNoTargetNamespaces, MessageMissingTargets)
			v.Phase, v.Reason, v.Message = st.phase, st.reason, st.message
			v.Why = "the CSV has no olm.targetNamespaces annotation"
			return
		}
		namespaces := strings.Split(targets, ",")
		v.InstallMode = installModeOf(csv.Namespace, namespaces)
		if t.status == nil {
			v.Notes = append(v.Notes, "the CSV's olm.targetNamespaces annotation is \"\" while the group's status.namespaces is empty: OLM takes them as equal (BuildTargetNamespaces of no namespaces is \"\"), so it keeps the annotation and reads it as all namespaces, not as NoTargetNamespaces")
		}
		if err := modes.Supports(csv.Namespace, namespaces); err != nil {
			st.setPhase(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonUnsupportedOperatorGroup, err.Error())
			v.Phase, v.Reason, v.Message = st.phase, st.reason, st.message
			v.Why = unsupportedWhy(csv, g, t, namespaces, v.SupportedInstallModes)
			r.apiNotes(v, csv, provided, g, t, others)
			return
		}

		own := groupSurface(g.Namespace, g.Name, t, st.groupAPIs)
		result, conflicts := reconcileAPIs(provided, own, others)
		v.Conflicts = conflicts
		switch {
		case g.Spec.StaticProvidedAPIs && (result == addAPIs || result == removeAPIs):
			if st.reason != v1alpha1.CSVReasonInterOperatorGroupOwnerConflict {
				st.setPhase(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonCannotModifyStaticOperatorGroupProvidedAPIs, MessageStaticProvidedAPIs)
				v.Notes = append(v.Notes, "OLM also deletes the CSV's deployments")
			} else {
				v.Notes = append(v.Notes, "the CSV's reason is InterOperatorGroupOwnerConflict already: OLM leaves its status as it is (it compares the reason with InterOperatorGroupOwnerConflict, not CannotModifyStaticOperatorGroupProvidedAPIs)")
			}
			v.Phase, v.Reason, v.Message = st.phase, st.reason, st.message
			v.Why = staticWhy(g, result, provided, own, conflicts)
			return
		case result == apiConflict:
			if st.reason != v1alpha1.CSVReasonInterOperatorGroupOwnerConflict {
				st.setPhase(v1alpha1.CSVPhaseFailed, v1alpha1.CSVReasonInterOperatorGroupOwnerConflict, MessageInterGroupConflict)
				v.Notes = append(v.Notes, "OLM also deletes the CSV's deployments")
			} else {
				v.Notes = append(v.Notes, "the CSV's reason is InterOperatorGroupOwnerConflict already: OLM leaves its status as it is")
			}
			v.Phase, v.Reason, v.Message = st.phase, st.reason, st.message
			v.Why = conflictWhy(g, t, conflicts)
			return
		case result == addAPIs:
			union := own.apis.union(provided).String()
			if st.groupAPIs == union {
				break // OLM: "operator group annotations up to date, continuing"
			}
			v.Steps = append(v.Steps, fmt.Sprintf("OLM adds %s to the olm.providedAPIs annotation of OperatorGroup %s/%s (now %q), and syncs the CSV again",
				strings.Join(provided.difference(own.apis).list(), ", "), g.Namespace, g.Name, union))
			st.groupAPIs, st.groupAPIsDone = union, true
			continue
		case result == removeAPIs:
			diff := own.apis.difference(provided).String()
			v.Steps = append(v.Steps, fmt.Sprintf("OLM removes %s from the olm.providedAPIs annotation of OperatorGroup %s/%s (now %q): intersecting groups provide them too; and syncs the CSV again",
				strings.Join(provided.list(), ", "), g.Namespace, g.Name, diff))
			st.groupAPIs, st.groupAPIsDone = diff, true
			continue
		}
		v.OK = true
		v.Phase, v.Reason, v.Message = "", "", ""
		v.Why = fmt.Sprintf("fits: OperatorGroup %s/%s targets %s, an %s install, which the CSV supports; no OperatorGroup whose targets intersect it provides the CSV's APIs",
			g.Namespace, g.Name, t.describe(csv.Namespace), v.InstallMode)
		if len(provided) == 0 {
			v.Why = fmt.Sprintf("fits: OperatorGroup %s/%s targets %s, an %s install, which the CSV supports; the CSV provides no API",
				g.Namespace, g.Name, t.describe(csv.Namespace), v.InstallMode)
		}
		return
	}
	// Not reached: each sync above changes something OLM writes once.
	v.Phase, v.Reason, v.Message = st.phase, st.reason, st.message
	v.Why = "OLM's syncs of this CSV do not settle"
}

func targetsStep(t GroupTargets) string {
	if t.status == nil {
		return " (no olm.targetNamespaces: the group's status.namespaces is empty)"
	}
	return fmt.Sprintf(", olm.targetNamespaces=%q", t.annotation())
}

// annotationsDiffer is operatorgroup.go's operatorGroupAnnotationsDiffer.
func annotationsDiffer(a map[string]string, g *operatorsv1.OperatorGroup, t GroupTargets) bool {
	if ns, ok := a[operatorsv1.OperatorGroupNamespaceAnnotationKey]; !ok || ns != g.Namespace {
		return true
	}
	if name, ok := a[operatorsv1.OperatorGroupAnnotationKey]; !ok || name != g.Name {
		return true
	}
	targets, ok := a[operatorsv1.OperatorGroupTargetsAnnotationKey]
	return !ok || targets != t.annotation()
}

// installModeOf is the install mode a list of target namespaces implies
// for a CSV in csvNamespace, as Supports reads it.
func installModeOf(csvNamespace string, namespaces []string) v1alpha1.InstallModeType {
	switch {
	case len(namespaces) == 0:
		return ""
	case len(namespaces) > 1:
		return v1alpha1.InstallModeTypeMultiNamespace
	case namespaces[0] == "":
		return v1alpha1.InstallModeTypeAllNamespaces
	case namespaces[0] == csvNamespace:
		return v1alpha1.InstallModeTypeOwnNamespace
	}
	return v1alpha1.InstallModeTypeSingleNamespace
}

var allModes = []v1alpha1.InstallModeType{v1alpha1.InstallModeTypeOwnNamespace, v1alpha1.InstallModeTypeSingleNamespace,
	v1alpha1.InstallModeTypeMultiNamespace, v1alpha1.InstallModeTypeAllNamespaces}

// supportedModes lists the supported install modes, as a set built the
// way OLM builds it (the last of duplicates wins).
func supportedModes(modes []v1alpha1.InstallMode) []v1alpha1.InstallModeType {
	set := map[v1alpha1.InstallModeType]bool{}
	for _, m := range modes {
		set[m.Type] = m.Supported
	}
	out := []v1alpha1.InstallModeType{}
	for _, m := range allModes {
		if set[m] {
			out = append(out, m)
		}
	}
	return out
}

func duplicateModes(modes []v1alpha1.InstallMode) string {
	seen := map[v1alpha1.InstallModeType]int{}
	var dup []string
	for _, m := range modes {
		seen[m.Type]++
		if seen[m.Type] == 2 {
			dup = append(dup, string(m.Type))
		}
	}
	return strings.Join(dup, " and ")
}

// modeTargets says, for each install mode, what a group's targets must be.
func modeTargets(m v1alpha1.InstallModeType) string {
	switch m {
	case v1alpha1.InstallModeTypeOwnNamespace:
		return "only its own namespace"
	case v1alpha1.InstallModeTypeSingleNamespace:
		return "one namespace"
	case v1alpha1.InstallModeTypeMultiNamespace:
		return "several namespaces"
	case v1alpha1.InstallModeTypeAllNamespaces:
		return "all namespaces"
	}
	return string(m)
}

func modeList(modes []v1alpha1.InstallModeType) string {
	s := make([]string, len(modes))
	for i, m := range modes {
		s[i] = string(m)
	}
	return joinOr(s, "and")
}

func joinOr(s []string, word string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " " + word + " " + s[len(s)-1]
}

// fittingGroups says which OperatorGroups would fit the CSV in its
// namespace.
func fittingGroups(csv *v1alpha1.ClusterServiceVersion) string {
	modes := supportedModes(csv.Spec.InstallModes)
	if len(modes) == 0 {
		return "but this CSV supports no install mode, so no OperatorGroup fits it"
	}
	var shapes []string
	for _, m := range modes {
		switch m {
		case v1alpha1.InstallModeTypeOwnNamespace:
			shapes = append(shapes, fmt.Sprintf("spec.targetNamespaces: [%s] (OwnNamespace)", csv.Namespace))
		case v1alpha1.InstallModeTypeSingleNamespace:
			shapes = append(shapes, "spec.targetNamespaces naming one other namespace (SingleNamespace)")
		case v1alpha1.InstallModeTypeMultiNamespace:
			shapes = append(shapes, "spec.targetNamespaces naming several namespaces (MultiNamespace)")
		case v1alpha1.InstallModeTypeAllNamespaces:
			shapes = append(shapes, "an empty spec, which targets all namespaces (AllNamespaces)")
		}
	}
	return "this CSV supports " + modeList(modes) + ": an OperatorGroup with " + joinOr(shapes, "or")
}

func noTargetsWhy(g *operatorsv1.OperatorGroup, t GroupTargets, s *State) string {
	name := g.Namespace + "/" + g.Name
	switch {
	case t.liveErr:
		return fmt.Sprintf("OperatorGroup %s targets no namespace: its status.namespaces is empty, and OLM cannot compute its targets (%s): fix its spec", name, t.Error)
	case len(t.live) > 0:
		return fmt.Sprintf("OperatorGroup %s's status.namespaces is empty (%s): make OLM's OperatorGroup sync go through", name, t.Stuck)
	case t.liveFrom == TargetsFromSelector:
		return fmt.Sprintf("OperatorGroup %s selects no namespace: its selector %s matches none of the state's %d Namespaces: label the namespaces it should target, or set spec.targetNamespaces",
			name, t.Selector, len(s.Namespaces))
	}
	return fmt.Sprintf("OperatorGroup %s targets no namespace: its status.namespaces is empty (its selector %s matches no namespace): label the namespaces it should target, or set spec.targetNamespaces",
		name, t.Selector)
}

func unsupportedWhy(csv *v1alpha1.ClusterServiceVersion, g *operatorsv1.OperatorGroup, t GroupTargets, namespaces []string, supported []v1alpha1.InstallModeType) string {
	name := g.Namespace + "/" + g.Name
	mode := installModeOf(csv.Namespace, namespaces)
	if len(namespaces) > 1 && slices.Contains(namespaces, "") {
		return fmt.Sprintf("OperatorGroup %s's status.namespaces mixes all namespaces (\"\") with others (%s): no CSV can be installed under it; fix the group's spec so that OLM can compute its targets",
			name, strings.Join(quoteEmpty(namespaces), ", "))
	}
	if len(supported) == 0 {
		return "this CSV supports no install mode (spec.installModes): OLM installs it under no OperatorGroup; the bundle must be fixed"
	}
	if mode == v1alpha1.InstallModeTypeMultiNamespace && slices.Contains(supported, v1alpha1.InstallModeTypeMultiNamespace) {
		// The only way a MultiNamespace install fails when MultiNamespace is supported.
		return fmt.Sprintf("OperatorGroup %s targets %s, among them the CSV's own namespace %s, and this CSV does not support OwnNamespace: remove %s from the group's targets, or create the Subscription in a namespace the group does not target",
			name, t.describe(csv.Namespace), csv.Namespace, csv.Namespace)
	}
	want := make([]string, len(supported))
	for i, m := range supported {
		want[i] = modeTargets(m)
	}
	only := ""
	if len(supported) < len(allModes) {
		only = "only "
	}
	return fmt.Sprintf("OperatorGroup %s targets %s (%s); this CSV supports %s%s: create it in a namespace whose OperatorGroup targets %s, or change the group's targets",
		name, t.describe(csv.Namespace), mode, only, modeList(supported), joinOr(want, "or"))
}

func staticWhy(g *operatorsv1.OperatorGroup, result apiResult, provided apiSet, own *groupSurfaceT, conflicts []GroupConflict) string {
	name := g.Namespace + "/" + g.Name
	if result == addAPIs {
		return fmt.Sprintf("OperatorGroup %s has spec.staticProvidedAPIs: true, and its olm.providedAPIs annotation (%q) does not list %s, which this CSV provides: OLM does not change a static group's annotation: add them to it, or set staticProvidedAPIs to false",
			name, own.apis.String(), strings.Join(provided.difference(own.apis).list(), ", "))
	}
	return fmt.Sprintf("OperatorGroup %s has spec.staticProvidedAPIs: true and lists %s, which %s provide too, to namespaces it targets as well: OLM would have to remove them from the static group's annotation; make the groups' targets disjoint, or uninstall the other provider",
		name, strings.Join(provided.list(), ", "), conflictGroups(conflicts))
}

func conflictWhy(g *operatorsv1.OperatorGroup, t GroupTargets, conflicts []GroupConflict) string {
	var parts []string
	for _, c := range conflicts {
		parts = append(parts, fmt.Sprintf("OperatorGroup %s (which targets %s) provides %s, and both groups cover %s",
			c.Group, c.Targets.describe(""), strings.Join(c.APIs, ", "), strings.Join(quoteEmpty(c.Shared), ", ")))
	}
	covers := t.describe(g.Namespace)
	if !t.AllNamespaces && !slices.Contains(t.Namespaces, g.Namespace) {
		covers += ", and its own namespace " + g.Namespace
	}
	return fmt.Sprintf("this CSV's APIs are provided already to namespaces its OperatorGroup %s/%s covers (%s): %s; OLM allows one provider of an API for a namespace: uninstall the other provider, or make the groups' targets disjoint",
		g.Namespace, g.Name, covers, strings.Join(parts, "; "))
}

func conflictGroups(conflicts []GroupConflict) string {
	var names []string
	for _, c := range conflicts {
		names = append(names, "OperatorGroup "+c.Group)
	}
	return joinOr(names, "and")
}

// withCSV is csvs with csv in place of the one of the same name.
func withCSV(csvs []*v1alpha1.ClusterServiceVersion, csv *v1alpha1.ClusterServiceVersion) []*v1alpha1.ClusterServiceVersion {
	out := make([]*v1alpha1.ClusterServiceVersion, 0, len(csvs)+1)
	for _, c := range csvs {
		if c.Name != csv.Name {
			out = append(out, c)
		}
	}
	return append(out, csv)
}

// prunedAPIs is the group's olm.providedAPIs annotation after OLM's
// OperatorGroup sync (operatorgroup.go pruneProvidedAPIs), and what it
// pruned: unless the group is static (or the sync stops earlier), the
// APIs that no CSV of the group's namespace provides are dropped. The
// sync leaves the annotation as it is when a CSV in phase None or Pending
// provides an API the annotation does not list; which CSV it looks at,
// when several provide that API, is a matter of map order, so OLM prunes
// on one of its periodic syncs unless every CSV providing that API is in
// None or Pending: that is where it settles, and what this answers.
func prunedAPIs(og *operatorsv1.OperatorGroup, t GroupTargets, csvs []*v1alpha1.ClusterServiceVersion) (string, apiSet) {
	raw := og.Annotations[operatorsv1.OperatorGroupProvidedAPIsAnnotationKey]
	if og.Spec.StaticProvidedAPIs || t.Stuck != "" {
		return raw, nil
	}
	listed := parseAPIs(raw)
	kept := apiSet{}
	unlisted := map[apiKey]bool{} // an unlisted API: whether a CSV not in None or Pending provides it
	for _, c := range csvs {
		apis, err := providedAPIsOf(c)
		if err != nil {
			continue // OLM: "could not create OperatorSurface from csv"
		}
		for k := range apis {
			if _, ok := listed[k]; ok {
				kept[k] = struct{}{}
				continue
			}
			unlisted[k] = unlisted[k] || (c.Status.Phase != v1alpha1.CSVPhaseNone && c.Status.Phase != v1alpha1.CSVPhasePending)
		}
	}
	for _, settled := range unlisted {
		if !settled {
			return raw, nil // OLM: "aborting operator group provided API update"
		}
	}
	if len(kept) < len(listed) {
		return kept.String(), listed.difference(kept)
	}
	return raw, nil
}

// apiNotes adds, after an earlier rule failed, what the provided-API
// rule would say.
func (r *GroupRules) apiNotes(v *GroupVerdict, csv *v1alpha1.ClusterServiceVersion, provided apiSet, g *operatorsv1.OperatorGroup, t GroupTargets, others []*groupSurfaceT) {
	apis, _ := prunedAPIs(g, t, withCSV(r.s.CSVsIn(g.Namespace), csv))
	own := groupSurface(g.Namespace, g.Name, t, apis)
	result, conflicts := reconcileAPIs(provided, own, others)
	switch {
	case g.Spec.StaticProvidedAPIs && result == addAPIs:
		v.Notes = append(v.Notes, "then: "+staticWhy(g, result, provided, own, conflicts))
	case result == apiConflict || result == removeAPIs:
		v.Conflicts = conflicts
		v.Notes = append(v.Notes, "then: "+conflictWhy(g, t, conflicts))
	}
}

// API sets, as OLM's resolver/cache APISet (operators.go).

type apiKey struct{ Group, Version, Kind string }

func (k apiKey) String() string { return k.Kind + "." + k.Version + "." + k.Group }

type apiSet map[apiKey]struct{}

// String is APISet.String: the sorted Kind.version.group, joined by ",".
func (s apiSet) String() string { return strings.Join(s.list(), ",") }

func (s apiSet) list() []string {
	out := make([]string, 0, len(s))
	for k := range s {
		out = append(out, k.String())
	}
	slices.Sort(out)
	return out
}

func (s apiSet) union(o apiSet) apiSet {
	out := apiSet{}
	for k := range s {
		out[k] = struct{}{}
	}
	for k := range o {
		out[k] = struct{}{}
	}
	return out
}

func (s apiSet) intersection(o apiSet) apiSet {
	out := apiSet{}
	for k := range o {
		if _, ok := s[k]; ok {
			out[k] = struct{}{}
		}
	}
	return out
}

func (s apiSet) difference(o apiSet) apiSet {
	out := apiSet{}
	for k := range s {
		if _, ok := o[k]; !ok {
			out[k] = struct{}{}
		}
	}
	return out
}

func (s apiSet) subsetOf(o apiSet) bool {
	for k := range s {
		if _, ok := o[k]; !ok {
			return false
		}
	}
	return true
}

// parseAPIs is GVKStringToProvidedAPISet: spaces dropped, split at
// commas, each parsed by apimachinery's ParseKindArg (Kind.version.group;
// anything with fewer than two dots is dropped).
func parseAPIs(s string) apiSet {
	out := apiSet{}
	for _, part := range strings.Split(strings.ReplaceAll(s, " ", ""), ",") {
		if gvk, _ := schema.ParseKindArg(part); gvk != nil {
			out[apiKey{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}] = struct{}{}
		}
	}
	return out
}

// providedAPIsOf is apiSurfaceOfCSV's provided APIs, plurals stripped.
// A CRD name without a dot, owned or required, is OLM's error.
func providedAPIsOf(csv *v1alpha1.ClusterServiceVersion) (apiSet, error) {
	out := apiSet{}
	for _, d := range csv.Spec.CustomResourceDefinitions.Owned {
		_, group, ok := strings.Cut(d.Name, ".")
		if !ok {
			return nil, fmt.Errorf("error parsing crd name: %s", d.Name)
		}
		out[apiKey{Group: group, Version: d.Version, Kind: d.Kind}] = struct{}{}
	}
	for _, d := range csv.Spec.APIServiceDefinitions.Owned {
		out[apiKey{Group: d.Group, Version: d.Version, Kind: d.Kind}] = struct{}{}
	}
	for _, d := range csv.Spec.CustomResourceDefinitions.Required {
		if !strings.Contains(d.Name, ".") {
			return nil, fmt.Errorf("error parsing crd name: %s", d.Name)
		}
	}
	return out, nil
}

// groupSurfaceT is groups.go's OperatorGroup surface.
type groupSurfaceT struct {
	namespace, name string
	t               GroupTargets
	targets         map[string]bool
	apis            apiSet
	pruned          apiSet // what OLM's OperatorGroup sync prunes from the annotation
}

// groupSurface is NewOperatorGroup: the targets are status.namespaces
// plus the group's own namespace, unless the first is "" (all).
func groupSurface(namespace, name string, t GroupTargets, providedAPIs string) *groupSurfaceT {
	g := &groupSurfaceT{namespace: namespace, name: name, t: t, targets: map[string]bool{}, apis: parseAPIs(providedAPIs)}
	for _, ns := range t.status {
		g.targets[ns] = true
	}
	if len(t.status) >= 1 && t.status[0] != "" {
		g.targets[namespace] = true
	}
	return g
}

func (g *groupSurfaceT) all() bool { return len(g.targets) == 1 && g.targets[""] }

// intersection is NamespaceSet.Intersection, sorted.
func (g *groupSurfaceT) intersection(o *groupSurfaceT) []string {
	var out []string
	switch {
	case g.all():
		out = slices.Collect(mapKeys(o.targets))
	case o.all():
		out = slices.Collect(mapKeys(g.targets))
	default:
		for ns := range g.targets {
			if o.targets[ns] {
				out = append(out, ns)
			}
		}
	}
	slices.Sort(out)
	return out
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// otherGroups are the surfaces of every OperatorGroup but g.
func (r *GroupRules) otherGroups(g *operatorsv1.OperatorGroup) []*groupSurfaceT {
	var out []*groupSurfaceT
	for _, o := range r.surfaces {
		if o.namespace != g.Namespace || o.name != g.Name {
			out = append(out, o)
		}
	}
	return out
}

type apiResult int

// ReconcileAPIIntersection's results.
const (
	removeAPIs apiResult = iota
	addAPIs
	apiConflict
	noAPIConflict
)

// reconcileAPIs is ReconcileAPIIntersection, and the groups whose
// provided APIs intersect add.
func reconcileAPIs(add apiSet, own *groupSurfaceT, others []*groupSurfaceT) (apiResult, []GroupConflict) {
	inter := apiSet{}
	var conflicts []GroupConflict
	for _, o := range others {
		shared := own.intersection(o)
		if o.name+"/"+o.namespace == own.name+"/"+own.namespace || len(shared) == 0 {
			continue
		}
		inter = inter.union(o.apis)
		if common := add.intersection(o.apis); len(common) > 0 {
			conflicts = append(conflicts, GroupConflict{Group: o.namespace + "/" + o.name, Targets: o.t, Shared: shared, APIs: common.list()})
		}
	}
	intersecting := len(add.intersection(inter)) > 0
	subset := add.subsetOf(own.apis)
	switch {
	case subset && intersecting:
		return removeAPIs, conflicts
	case !subset && intersecting:
		return apiConflict, conflicts
	case !subset:
		return addAPIs, conflicts
	}
	return noAPIConflict, conflicts
}
