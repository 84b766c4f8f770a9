package cluster

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
)

// What executing an approved InstallPlan does to the cluster, step by
// step, as OLM v0.46.0's catalog operator executes it
// (pkg/controller/operators/catalog: operator.go ExecutePlan, step.go,
// step_ensurer.go, supportedresources.go), judged against a State.

// Action is what executing a step does.
type Action string

const (
	// ActionCreate: the object does not exist; OLM creates it (step
	// status Created; a CRD is WaitingForApi until established).
	ActionCreate Action = "create"
	// ActionUpdate: the object exists; OLM updates it (status Present).
	ActionUpdate Action = "update"
	// ActionPresent: the object exists and OLM leaves it as it is (status
	// Present): CSVs and Subscriptions are never updated by a plan.
	ActionPresent Action = "present"
	// ActionFail: the step fails, and with it the plan.
	ActionFail Action = "fail"
	// ActionUnknown: the state cannot tell (it holds no objects of the
	// kind); Detail says what OLM does in either case.
	ActionUnknown Action = "unknown"
)

// Effect is what executing one step of a plan does.
type Effect struct {
	// Step is the step's index in the plan.
	Step      int    `json:"step"`
	Resolving string `json:"resolving"`
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	// Namespace is where OLM applies the object ("" for cluster-scoped
	// kinds): namespaced objects go into the plan's namespace, whatever
	// their manifest says.
	Namespace string `json:"namespace,omitempty"`
	Action    Action `json:"action"`
	// Status is the step status OLM would record (Created, Present,
	// WaitingForApi, UnsupportedResource); empty when unknown.
	Status v1alpha1.StepStatus `json:"status,omitempty"`
	Detail string              `json:"detail"`
	// NotReached is true for the steps after one that fails: OLM stops
	// executing the plan at the failure.
	NotReached bool `json:"notReached,omitempty"`
}

// The kinds OLM applies through the dynamic client besides the ones it
// knows (supportedresources.go), with whether they are namespaced (OLM
// asks discovery; these are the kinds' scopes).
var supportedKinds = map[string]bool{
	"PrometheusRule":        true,
	"ServiceMonitor":        true,
	"PodDisruptionBudget":   true,
	"PriorityClass":         false,
	"VerticalPodAutoscaler": true,
	"ConsoleYAMLSample":     false,
	"ConsoleQuickStart":     false,
	"ConsoleCLIDownload":    false,
	"ConsoleLink":           false,
	"ConsolePlugin":         false,
	"NetworkPolicy":         true,
}

// IsSupportedKind reports whether OLM's catalog operator applies a step
// of this kind (anything else fails the plan with UnsupportedResource).
func IsSupportedKind(kind string) bool {
	switch kind {
	case KindCSV, KindSubscription, KindCRD, bundleSecretKind, "Secret", "ClusterRole", "ClusterRoleBinding",
		"Role", "RoleBinding", "ServiceAccount", "Service", "ConfigMap":
		return true
	}
	_, ok := supportedKinds[kind]
	return ok
}

// Effects says, for each step of a plan for namespace ns, what executing
// it would do to the cluster the state describes: create, update, leave
// present, fail (the plan fails there and the steps after it are not
// reached), or unknown when the state holds no objects of the kind (a
// state read from a must-gather holds no RBAC, Services, ConfigMaps or
// Secrets, and only some CRDs).
func (s *State) Effects(ns string, steps []*Step) []Effect {
	out := make([]Effect, len(steps))
	var og string // the OperatorGroup's service account, if any
	if ogs := s.OperatorGroupsIn(ns); len(ogs) == 1 && ogs[0].Spec.ServiceAccountName != "" {
		og = ogs[0].Spec.ServiceAccountName
	}
	failed := -1
	for i, st := range steps {
		e := s.effect(ns, st)
		e.Step, e.Resolving, e.Kind, e.Name = i, st.Resolving, st.Resource.Kind, st.Resource.Name
		if og != "" && e.Kind != KindCRD && e.Action != ActionFail {
			e.Detail += fmt.Sprintf(" (applied with the permissions of ServiceAccount %s/%s, the OperatorGroup's spec.serviceAccountName: it fails if that account may not)", ns, og)
		}
		if failed >= 0 {
			e.NotReached = true
		} else if e.Action == ActionFail {
			failed = i
		}
		out[i] = e
	}
	return out
}

func (s *State) effect(ns string, st *Step) Effect {
	kind, name := st.Resource.Kind, st.Resource.Name
	e := Effect{Namespace: ns}
	unknown := func(what string) Effect {
		e.Action = ActionUnknown
		e.Detail = fmt.Sprintf("unknown: the state holds no %s; OLM creates it, or updates it if it exists", what)
		return e
	}
	switch kind {
	case KindCSV:
		if s.CSV(ns, name) != nil {
			e.Action, e.Status = ActionPresent, v1alpha1.StepStatusPresent
			e.Detail = "the CSV exists: OLM leaves it as it is (a plan never updates a CSV)"
			return e
		}
		e.Action, e.Status = ActionCreate, v1alpha1.StepStatusCreated
		e.Detail = "OLM creates the CSV; olm-operator then checks its OperatorGroup and requirements and installs its deployments"
		return e
	case KindSubscription:
		for _, sub := range s.SubscriptionsIn(ns) {
			if sub.Name == name {
				e.Action, e.Status = ActionPresent, v1alpha1.StepStatusPresent
				e.Detail = "a Subscription of that name exists: OLM leaves it as it is"
				return e
			}
		}
		e.Action, e.Status = ActionCreate, v1alpha1.StepStatusCreated
		e.Detail = "OLM creates the Subscription of a dependency, annotated olm.generated-by with the InstallPlan's name"
		return e
	case KindCRD:
		e.Namespace = ""
		return s.crdEffect(e, st)
	case "ServiceAccount", "Role", "RoleBinding", "Service", "ConfigMap":
		return unknown(kind)
	case bundleSecretKind:
		return unknown("Secret")
	case "Secret":
		e.Action = ActionUnknown
		e.Detail = "unknown: the state holds no Secret; OLM copies this pull secret from its own namespace (the step fails if it is not there)"
		return e
	case "ClusterRole", "ClusterRoleBinding":
		e.Namespace = ""
		e = unknown(kind)
		e.Detail += " (an existing one is relabelled olm.owner=" + st.Resolving + ")"
		return e
	}
	if namespaced, ok := supportedKinds[kind]; ok {
		if !namespaced {
			e.Namespace = ""
		}
		e = unknown(kind)
		e.Detail += fmt.Sprintf("; its API (%s) must be served by the cluster, or the step fails", stepGroupVersion(st.Resource.Group, st.Resource.Version))
		return e
	}
	e.Namespace = ""
	e.Action, e.Status = ActionFail, v1alpha1.StepStatusUnsupportedResource
	e.Detail = fmt.Sprintf("OLM does not apply objects of kind %s from a bundle: the step is UnsupportedResource and the plan fails (%v)", kind, v1alpha1.ErrInvalidInstallPlan)
	return e
}

func stepGroupVersion(group, version string) string {
	if group == "" {
		return version
	}
	return group + "/" + version
}

// crdEffect is OLM's CRD step (step.go: NewCRDV1Step, NewCRDV1Beta1Step):
// a CRD that exists is updated after two checks, the second of which the
// state can make.
func (s *State) crdEffect(e Effect, st *Step) Effect {
	if IsUnpackedReference(st.Resource.Manifest) {
		// The CRD is in the ConfigMap: only whether it exists is known.
		switch old := s.CRD(st.Resource.Name); {
		case len(s.CRDs) == 0:
			e.Action = ActionUnknown
			e.Detail = "unknown: the state holds no CustomResourceDefinition, and the manifest is in the unpacked bundle's ConfigMap; OLM creates it, or updates it if it exists after its checks"
		case old == nil:
			e.Action, e.Status = ActionCreate, v1alpha1.StepStatusWaitingForAPI
			e.Detail = fmt.Sprintf("not among the state's %d CRDs: OLM creates it (the manifest is in the unpacked bundle's ConfigMap)", len(s.CRDs))
		default:
			e.Action, e.Status = ActionUpdate, v1alpha1.StepStatusPresent
			e.Detail = "the CRD exists: OLM updates it after its checks (the manifest is in the unpacked bundle's ConfigMap: the stored versions are not checked here)"
		}
		return e
	}
	u := &unstructured.Unstructured{}
	if err := k8syaml.NewYAMLOrJSONDecoder(strings.NewReader(st.Resource.Manifest), 10).Decode(u); err != nil {
		e.Action = ActionFail
		e.Detail = fmt.Sprintf("the manifest does not decode: %v", err)
		return e
	}
	version := u.GroupVersionKind().Version
	var newVersions []string
	var webhookConversion bool
	switch version {
	case "v1":
		var crd apiextensionsv1.CustomResourceDefinition
		if err := json.Unmarshal([]byte(st.Resource.Manifest), &crd); err != nil {
			e.Action = ActionFail
			e.Detail = err.Error()
			return e
		}
		for _, v := range crd.Spec.Versions {
			newVersions = append(newVersions, v.Name)
		}
		webhookConversion = crd.Spec.Conversion != nil && crd.Spec.Conversion.Strategy == apiextensionsv1.WebhookConverter
	case "v1beta1":
		var crd apiextensionsv1beta1.CustomResourceDefinition
		if err := json.Unmarshal([]byte(st.Resource.Manifest), &crd); err != nil {
			e.Action = ActionFail
			e.Detail = err.Error()
			return e
		}
		if crd.Spec.Version != "" {
			newVersions = append(newVersions, crd.Spec.Version)
		}
		for _, v := range crd.Spec.Versions {
			newVersions = append(newVersions, v.Name)
		}
	default:
		e.Action = ActionFail
		e.Detail = fmt.Sprintf("CRD APIVersion from manifest not supported: %s (the plan fails)", version)
		return e
	}
	var v1beta1Note string
	if version == "v1beta1" {
		v1beta1Note = "; the CRD is apiextensions.k8s.io/v1beta1, which Kubernetes 1.22 and later (OpenShift 4.9 and later) no longer serve: there OLM's create or update fails, and the plan with it"
	}
	checks := "existing custom resources must validate against the new schema (the state holds none: not checked"
	if webhookConversion {
		checks += "; with the new CRD's Webhook conversion a failure is only a warning"
	}
	checks += "), and no stored version (status.storedVersions) may be dropped"
	if len(s.CRDs) == 0 {
		e.Action = ActionUnknown
		e.Detail = "unknown: the state holds no CustomResourceDefinition; OLM creates it, or updates it if it exists after its checks: " + checks + v1beta1Note
		return e
	}
	old := s.CRD(st.Resource.Name)
	if old == nil {
		e.Action, e.Status = ActionCreate, v1alpha1.StepStatusWaitingForAPI
		e.Detail = fmt.Sprintf("not among the state's %d CRDs: OLM creates it and waits until it is established (a must-gather holds only some CRDs: if it exists, OLM updates it after its checks)%s", len(s.CRDs), v1beta1Note)
		return e
	}
	// crdlib.SafeStorageVersionUpgrade.
	var missing []string
	for _, sv := range old.Status.StoredVersions {
		if !slices.Contains(newVersions, sv) && !slices.Contains(missing, sv) {
			missing = append(missing, sv)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		e.Action = ActionFail
		e.Detail = fmt.Sprintf("risk of data loss updating %q: new CRD removes version %s that is listed as a stored version on the existing CRD (the plan fails; stored versions %s)",
			st.Resource.Name, missing[0], strings.Join(old.Status.StoredVersions, ", "))
		return e
	}
	e.Action, e.Status = ActionUpdate, v1alpha1.StepStatusPresent
	e.Detail = "the CRD exists: OLM updates it after its checks: " + checks + fmt.Sprintf(" (stored versions %s: kept)", strings.Join(old.Status.StoredVersions, ", ")) + v1beta1Note
	return e
}

// WriteStepsText writes a plan's steps for a reader, one per line: index,
// kind, name, group/version, resolved CSV and, when effects are given
// (one per step, as Effects returns them), what executing the step does
// and why.
func WriteStepsText(w io.Writer, steps []*Step, effects []Effect) error {
	var b strings.Builder
	for i, s := range steps {
		gv := stepGroupVersion(s.Resource.Group, s.Resource.Version)
		fmt.Fprintf(&b, "%3d %s %s (%s) for %s", i, s.Resource.Kind, s.Resource.Name, gv, s.Resolving)
		if i < len(effects) {
			e := effects[i]
			fmt.Fprintf(&b, ": %s", e.Action)
			if e.NotReached {
				b.WriteString(", not reached")
			}
			if e.Detail != "" {
				fmt.Fprintf(&b, "\n      %s", e.Detail)
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
