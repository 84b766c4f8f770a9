package cluster

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ODLM's names (controllers/constant/constant.go, reconcile_operator.go).
const (
	// ODLMClusterOperatorNamespace is where installMode cluster puts an
	// operator (constant.ClusterOperatorNamespace).
	ODLMClusterOperatorNamespace = "openshift-operators"
	// ODLMLabel marks the Subscriptions and OperatorGroups ODLM creates
	// (constant.OpreqLabel).
	ODLMLabel = "operator.ibm.com/opreq-control"
	// odlmNotUninstallLabel keeps a Subscription from ODLM's deletion.
	odlmNotUninstallLabel = "operator.ibm.com/opreq-do-not-uninstall"
	// ODLMOperatorGroup is the name of the OperatorGroup ODLM creates.
	ODLMOperatorGroup = "operand-deployment-lifecycle-manager-operatorgroup"
	// odlmPackage is ODLM's own package: its Subscription's catalog is
	// preferred among equals.
	odlmPackage = "ibm-odlm"
)

// ODLMAction says what ODLM does with an operand's Subscription.
type ODLMAction string

// The actions.
const (
	// ODLMCreate: ODLM creates the Subscription.
	ODLMCreate ODLMAction = "create"
	// ODLMUpdate: ODLM changes a Subscription it created (one of the
	// state or of an operand answered before).
	ODLMUpdate ODLMAction = "update"
	// ODLMUnchanged: the Subscription ODLM created is as ODLM wants it.
	ODLMUnchanged ODLMAction = "unchanged"
	// ODLMIgnore: a Subscription ODLM did not create (no
	// operator.ibm.com/opreq-control label) has the entry's name or
	// package; ODLM leaves it as it is and creates none.
	ODLMIgnore ODLMAction = "ignore"
	// ODLMDelete: ODLM deletes a Subscription it created.
	ODLMDelete ODLMAction = "delete"
	// ODLMNone: no Subscription (not found, out of scope, no-op,
	// user-managed, or an error).
	ODLMNone ODLMAction = "none"
)

// ODLMCondition is a condition ODLM sets on the OperandRequest, in its
// words (api/v1alpha1/operandrequest_types.go).
type ODLMCondition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// ODLMOutcome is what ODLM does for one operand of an OperandRequest (or
// for a request entry whose registry is missing, with no Operand).
type ODLMOutcome struct {
	// Request is the OperandRequest ("namespace/name"); Implied when no
	// OperandRequest read names the registry and every entry is answered
	// as requested by one of the registry's name in its namespace.
	Request  string `json:"request"`
	Implied  bool   `json:"implied,omitempty"`
	Registry string `json:"registry"`
	Operand  string `json:"operand,omitempty"`
	// Subscription is the Subscription ("namespace/name") the action is
	// on, "" for none.
	Subscription string     `json:"subscription,omitempty"`
	Action       ODLMAction `json:"action"`
	// Catalog says how ODLM chose the catalog and channel.
	Catalog string `json:"catalog,omitempty"`
	// OperatorGroup is the OperatorGroup ("namespace/name") ODLM creates
	// before the Subscription, "" for none.
	OperatorGroup string `json:"operatorGroup,omitempty"`
	// Phase is the operator phase ODLM gives the operand in the
	// request's status.members ("" when it sets none).
	Phase      string          `json:"phase,omitempty"`
	Conditions []ODLMCondition `json:"conditions,omitempty"`
	// Problem is set when ODLM fails the operand: its words (a
	// condition's message, the error its reconcile returns, or its log
	// line); Note says in ODLM's log words what it does otherwise.
	Problem string `json:"problem,omitempty"`
	Note    string `json:"note,omitempty"`
}

// ODLMAnswer is what ODLM does with the OperandRequests on one reconcile
// of each.
type ODLMAnswer struct {
	// Subscriptions ODLM creates, and those it changes as they are after
	// (by namespace and name).
	Subscriptions []*v1alpha1.Subscription `json:"subscriptions"`
	// OperatorGroups ODLM creates.
	OperatorGroups []*operatorsv1.OperatorGroup `json:"operatorGroups"`
	// Deleted are the Subscriptions ODLM deletes.
	Deleted []ObjectKey `json:"deleted,omitempty"`
	// Outcomes, request by request, operand by operand.
	Outcomes []ODLMOutcome `json:"outcomes"`
	// ODLMCatalog is the catalog of ODLM's own Subscription
	// ("namespace/name"), preferred among equal catalogs; "" when the
	// state has none.
	ODLMCatalog string `json:"odlmCatalog,omitempty"`
}

// Problems returns the outcomes where ODLM fails an operand.
func (a *ODLMAnswer) Problems() []ODLMOutcome {
	var out []ODLMOutcome
	for _, o := range a.Outcomes {
		if o.Problem != "" {
			out = append(out, o)
		}
	}
	return out
}

// Subscriptions answers what ODLM does with the OperandRequests read (in
// order of namespace and name, then any registry no request names, as
// requested by a request of its own name in its namespace asking for every
// entry in order), on a cluster holding state (nil: an empty cluster),
// whose PackageManifests cat answers (nil: none, so that every entry's
// source and channel are taken as written). It follows ODLM's
// OperandRequest controller at ODLMCommit (reconcile_operator.go:
// reconcileOperator, reconcileSubscription, createSubscription,
// generateClusterObjects; manager.go: GetOperandFromRegistry,
// GetCatalogSourceAndChannelFromPackage, GetSubscription,
// GetOperatorNamespace), operand after operand, each seeing the
// Subscriptions and OperatorGroups the ones before created.
func (o *ODLM) Subscriptions(cat PackageCatalogs, state *State) *ODLMAnswer {
	run := &odlmRun{o: o, cat: cat, state: state, subs: map[ObjectKey]*v1alpha1.Subscription{}, a: &ODLMAnswer{}}
	if state == nil {
		run.state = &State{}
	}
	run.odlmCatalog, run.odlmCatalogNs = odlmOwnCatalog(run.state)
	if run.odlmCatalog != "" {
		run.a.ODLMCatalog = run.odlmCatalogNs + "/" + run.odlmCatalog
	}
	requested := map[ObjectKey]bool{}
	for _, req := range o.Requests {
		for _, r := range req.Spec.Requests {
			requested[ObjectKey{KindOperandRegistry, r.RegistryNamespace, r.Registry}] = true
		}
		run.request(req, false)
	}
	for _, reg := range o.Registries {
		if requested[ObjectKey{KindOperandRegistry, reg.Namespace, reg.Name}] {
			continue
		}
		implied := &OperandRequest{ObjectMeta: metav1.ObjectMeta{Namespace: reg.Namespace, Name: reg.Name}}
		r := ODLMRequest{Registry: reg.Name, RegistryNamespace: reg.Namespace}
		for _, op := range reg.Spec.Operators {
			r.Operands = append(r.Operands, ODLMOperand{Name: op.Name})
		}
		implied.Spec.Requests = []ODLMRequest{r}
		run.request(implied, true)
	}
	for _, k := range run.order {
		if s := run.subs[k]; s != nil {
			run.a.Subscriptions = append(run.a.Subscriptions, s)
		}
	}
	sortObjects(run.a.Subscriptions)
	sortObjects(run.a.OperatorGroups)
	return run.a
}

// odlmOwnCatalog finds ODLM's own Subscription as GetOperandFromRegistry
// does: in ODLM's namespace, labelled
// operators.coreos.com/<first 63 characters of "ibm-odlm.<namespace>">
// (the label OLM puts on a Subscription). ODLM knows its namespace; a
// state does not say it, so every namespace is looked at, the first
// by namespace and name taken.
func odlmOwnCatalog(s *State) (name, ns string) {
	for _, sub := range s.Subscriptions {
		label := odlmPackage + "." + sub.Namespace
		if len(label) > 63 {
			label = label[:63]
		}
		if _, ok := sub.Labels["operators.coreos.com/"+label]; ok && sub.Spec != nil {
			return sub.Spec.CatalogSource, sub.Spec.CatalogSourceNamespace
		}
	}
	return "", ""
}

type odlmRun struct {
	o                          *ODLM
	cat                        PackageCatalogs
	state                      *State
	odlmCatalog, odlmCatalogNs string
	// subs holds the Subscriptions created or changed so far (nil:
	// deleted); order the order they were first touched in.
	subs  map[ObjectKey]*v1alpha1.Subscription
	order []ObjectKey
	a     *ODLMAnswer
}

// request is reconcileOperator: the request's entries in order; the first
// whose registry is missing, or one of whose operands fails with an
// error, ends the reconcile (ODLM returns the error and retries; the
// entries after it are never reached while it fails).
func (run *odlmRun) request(req *OperandRequest, implied bool) {
	reqName := req.Namespace + "/" + req.Name
	for i, r := range req.Spec.Requests {
		regKey := r.RegistryNamespace + "/" + r.Registry
		reg := run.o.Registry(r.RegistryNamespace, r.Registry)
		if reg == nil {
			run.a.Outcomes = append(run.a.Outcomes, ODLMOutcome{
				Request: reqName, Implied: implied, Registry: regKey, Action: ODLMNone,
				Conditions: []ODLMCondition{{"NotFound", "True", "Not found operandregistry", "Not found operandregistry " + regKey + " in the cluster"}},
				Problem:    "Not found operandregistry " + regKey + " in the cluster",
			})
			run.unreached(req, implied, i+1)
			return
		}
		failed := false
		for _, operand := range r.Operands {
			if !run.operand(req, implied, reg, operand) {
				failed = true
			}
		}
		if failed {
			run.unreached(req, implied, i+1)
			return
		}
	}
}

// unreached reports the request entries from `from` on, which ODLM does
// not reach.
func (run *odlmRun) unreached(req *OperandRequest, implied bool, from int) {
	for j := from; j < len(req.Spec.Requests); j++ {
		r := req.Spec.Requests[j]
		for _, operand := range r.Operands {
			run.a.Outcomes = append(run.a.Outcomes, ODLMOutcome{
				Request: req.Namespace + "/" + req.Name, Implied: implied, Registry: r.RegistryNamespace + "/" + r.Registry,
				Operand: operand.Name, Action: ODLMNone,
				Problem: fmt.Sprintf("not reconciled: ODLM stops reconciling the OperandRequest at its failing spec.requests[%d]", from-1),
			})
		}
	}
}

// operand is reconcileSubscription; false when it returns an error.
func (run *odlmRun) operand(req *OperandRequest, implied bool, reg *OperandRegistry, operand ODLMOperand) bool {
	out := ODLMOutcome{Request: req.Namespace + "/" + req.Name, Implied: implied, Registry: reg.Namespace + "/" + reg.Name, Operand: operand.Name, Action: ODLMNone}
	ok := run.reconcile(req, reg, operand, &out)
	run.a.Outcomes = append(run.a.Outcomes, out)
	return ok
}

func (run *odlmRun) reconcile(req *OperandRequest, reg *OperandRegistry, operand ODLMOperand, out *ODLMOutcome) bool {
	opt := reg.Operator(operand.Name)
	if opt == nil {
		msg := "Not found subscription " + operand.Name + " in the cluster"
		out.Conditions = []ODLMCondition{{"NotFound", "True", "Not found subscription", msg}}
		out.Phase, out.Problem = "Not Found", msg
		return true
	}
	var excluded []string
	if v := reg.Annotations[odlmExcludedCatalogs]; v != "" {
		excluded = strings.Split(v, ",")
	}
	choice := chooseCatalog(run.cat, opt, reg.Namespace, run.odlmCatalog, run.odlmCatalogNs, excluded)
	opt.SourceName, opt.SourceNamespace, opt.Channel = choice.source, choice.sourceNamespace, choice.channel
	if opt.Scope == ODLMScopePrivate && req.Namespace != reg.Namespace {
		msg := "subscription " + operand.Name + " is a private operator. It can only be request within the OperandRegistry namespace"
		out.Conditions = []ODLMCondition{{"OutofScope", "True", "subscription " + operand.Name + " is a private operator", msg}}
		out.Problem = msg
		return true
	}
	namespace := odlmOperatorNamespace(opt)
	sub, err := run.existing(opt.Name, namespace, reg.Namespace, opt.PackageName)
	if err != nil {
		out.Phase, out.Problem = "", err.Error()
		return false
	}
	if sub != nil {
		out.Subscription = sub.Namespace + "/" + sub.Name
	}
	if opt.UserManaged {
		if sub != nil {
			if _, mine := sub.Labels[ODLMLabel]; mine {
				if sub.Labels[odlmNotUninstallLabel] != "true" {
					run.remove(sub)
					out.Action, out.Phase = ODLMDelete, "Updating"
					out.Note = fmt.Sprintf("Deleting existing subscription %s/%s because operator %s is now user managed", sub.Namespace, sub.Name, opt.PackageName)
					return true
				}
			}
		}
		out.Phase = "Running"
		out.Note = "Skip installing operator " + opt.PackageName + " because it is managed by user"
		return true
	}
	if sub == nil {
		if opt.InstallMode == ODLMInstallModeNoop {
			out.Conditions = []ODLMCondition{maintenance(opt)}
			out.Phase, out.Note = "Running", opt.Name+" is in maintenance status"
			return true
		}
		out.Catalog = choice.how
		return run.create(req, reg, opt, out)
	}
	if _, mine := sub.Labels[ODLMLabel]; !mine {
		out.Action = ODLMIgnore
		out.Note = fmt.Sprintf("Subscription %s in namespace %s isn't created by ODLM. Ignore update/delete it.", sub.Name, sub.Namespace)
		return true
	}
	if opt.InstallMode != ODLMInstallModeNoop {
		out.Catalog = choice.how
	}
	run.update(req, reg, opt, operand, sub, namespace, out)
	return true
}

func maintenance(opt *ODLMOperator) ODLMCondition {
	return ODLMCondition{"NotFound", "True", "operandregistry is not suitable", opt.Name + " is in maintenance status"}
}

// odlmOperatorNamespace is GetOperatorNamespace.
func odlmOperatorNamespace(opt *ODLMOperator) string {
	if opt.InstallMode == ODLMInstallModeCluster {
		return ODLMClusterOperatorNamespace
	}
	return opt.Namespace
}

// existing is GetSubscription: the Subscriptions of the operator's and
// the registry's namespaces named as the entry or subscribing to its
// package; more than one is an error.
func (run *odlmRun) existing(name, operatorNs, registryNs, pkg string) (*v1alpha1.Subscription, error) {
	var cands []*v1alpha1.Subscription
	for _, ns := range slices.Compact([]string{operatorNs, registryNs}) {
		for _, s := range run.subscriptionsIn(ns) {
			if s.Name == name || (s.Spec != nil && s.Spec.Package == pkg) {
				cands = append(cands, s)
			}
		}
	}
	switch len(cands) {
	case 0:
		return nil, nil
	case 1:
		return cands[0], nil
	}
	return nil, fmt.Errorf("there are multiple subscriptions using package %v", pkg)
}

// subscriptionsIn lists a namespace's Subscriptions as ODLM sees them:
// the state's, as changed or deleted so far, and those created.
func (run *odlmRun) subscriptionsIn(ns string) []*v1alpha1.Subscription {
	var out []*v1alpha1.Subscription
	for _, s := range run.state.Subscriptions {
		if s.Namespace != ns {
			continue
		}
		k := ObjectKey{KindSubscription, s.Namespace, s.Name}
		if cur, touched := run.subs[k]; touched {
			if cur != nil {
				out = append(out, cur)
			}
			continue
		}
		out = append(out, s)
	}
	for _, k := range run.order {
		if s := run.subs[k]; s != nil && k.Namespace == ns && stateSubscription(run.state, k) == nil {
			out = append(out, s)
		}
	}
	return out
}

func stateSubscription(s *State, k ObjectKey) *v1alpha1.Subscription {
	for _, sub := range s.Subscriptions {
		if sub.Namespace == k.Namespace && sub.Name == k.Name {
			return sub
		}
	}
	return nil
}

func (run *odlmRun) put(s *v1alpha1.Subscription) {
	k := ObjectKey{KindSubscription, s.Namespace, s.Name}
	if _, ok := run.subs[k]; !ok {
		run.order = append(run.order, k)
	}
	run.subs[k] = s
}

func (run *odlmRun) remove(s *v1alpha1.Subscription) {
	k := ObjectKey{KindSubscription, s.Namespace, s.Name}
	if _, ok := run.subs[k]; !ok {
		run.order = append(run.order, k)
	}
	run.subs[k] = nil
	if stateSubscription(run.state, k) != nil {
		run.a.Deleted = append(run.a.Deleted, k)
	}
}

// create is createSubscription with generateClusterObjects: the
// OperatorGroup first (not for openshift-operators; only when the entry's
// namespace has none), then the Subscription, which needs a catalog.
func (run *odlmRun) create(req *OperandRequest, reg *OperandRegistry, opt *ODLMOperator, out *ODLMOutcome) bool {
	namespace := odlmOperatorNamespace(opt)
	if namespace != ODLMClusterOperatorNamespace && !run.hasOperatorGroup(opt.Namespace) {
		targets := opt.TargetNamespaces
		if targets == nil {
			targets = []string{opt.Namespace}
		}
		og := &operatorsv1.OperatorGroup{
			TypeMeta: metav1.TypeMeta{APIVersion: operatorsv1.SchemeGroupVersion.String(), Kind: operatorsv1.OperatorGroupKind},
			ObjectMeta: metav1.ObjectMeta{
				Name: ODLMOperatorGroup, Namespace: opt.Namespace,
				Labels: map[string]string{ODLMLabel: "true"},
			},
			Spec: operatorsv1.OperatorGroupSpec{TargetNamespaces: targets},
		}
		run.a.OperatorGroups = append(run.a.OperatorGroups, og)
		out.OperatorGroup = og.Namespace + "/" + og.Name
	}
	regKey, reqKey := reg.Namespace+"."+reg.Name, req.Namespace+"."+req.Name+"."+opt.Name
	sub := &v1alpha1.Subscription{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.SubscriptionKind},
		ObjectMeta: metav1.ObjectMeta{
			Name: opt.PackageName, Namespace: namespace,
			Labels: map[string]string{ODLMLabel: "true"},
			Annotations: map[string]string{
				regKey + "/registry":          "true",
				regKey + "/config":            "true",
				reqKey + "/request":           opt.Channel,
				reqKey + "/operatorNamespace": namespace,
			},
		},
		Spec: &v1alpha1.SubscriptionSpec{
			Channel:                opt.Channel,
			Package:                opt.PackageName,
			CatalogSource:          opt.SourceName,
			CatalogSourceNamespace: opt.SourceNamespace,
			InstallPlanApproval:    opt.InstallPlanApproval,
			StartingCSV:            opt.StartingCSV,
			Config:                 opt.SubscriptionConfig,
		},
	}
	if sub.Spec.CatalogSource == "" || sub.Spec.CatalogSourceNamespace == "" {
		out.Phase = "Failed"
		out.Problem = fmt.Sprintf("failed to find catalogsource for subscription %s/%s", sub.Namespace, sub.Name)
		return false
	}
	run.put(sub)
	out.Action, out.Subscription, out.Phase = ODLMCreate, sub.Namespace+"/"+sub.Name, "Installing"
	out.Conditions = []ODLMCondition{{"Creating", "True", "Creating subscription", "Creating subscription " + sub.Name}}
	return true
}

func (run *odlmRun) hasOperatorGroup(ns string) bool {
	if len(run.state.OperatorGroupsIn(ns)) > 0 {
		return true
	}
	for _, og := range run.a.OperatorGroups {
		if og.Namespace == ns {
			return true
		}
	}
	return false
}

var operatorNamespaceAnnotation = regexp.MustCompile(`^(.*)\.(.*)\.(.*)\/operatorNamespace`)

// update is reconcileSubscription's path for a Subscription ODLM
// created: it moves away (deleted) when its operatorNamespace
// annotations all name other namespaces; else it gets the request's
// annotations, its channel becomes the lowest of the requests' when its
// own is not among them, and its catalog, package, approval and config
// follow the entry when the channels agree; a channel neither the entry's
// nor a fallback is ODLM's channel conflict.
func (run *odlmRun) update(req *OperandRequest, reg *OperandRegistry, opt *ODLMOperator, operand ODLMOperand, cur *v1alpha1.Subscription, namespace string, out *ODLMOutcome) {
	if cur.Namespace != opt.Namespace {
		var nss []string
		for k, v := range cur.Annotations {
			if operatorNamespaceAnnotation.MatchString(k) {
				nss = append(nss, v)
			}
		}
		if len(nss) != 0 && !slices.Contains(nss, cur.Namespace) {
			if cur.Labels[odlmNotUninstallLabel] == "true" {
				out.Action = ODLMUnchanged
				out.Note = "Operator " + opt.Name + " has label operator.ibm.com/opreq-do-not-uninstall. Skip the uninstall"
				return
			}
			run.remove(cur)
			out.Action, out.Phase = ODLMDelete, "Updating"
			out.Note = fmt.Sprintf("the Subscription's operatorNamespace annotations name other namespaces than %s: ODLM deletes it", cur.Namespace)
			return
		}
	}
	sub := cur.DeepCopy()
	if sub.Spec == nil { // a State built by hand: the reader refuses a Subscription without spec
		sub.Spec = &v1alpha1.SubscriptionSpec{}
	}
	if sub.Annotations == nil {
		sub.Annotations = map[string]string{}
	}
	regKey, reqKey := reg.Namespace+"."+reg.Name, req.Namespace+"."+req.Name+"."+operand.Name
	sub.Annotations[regKey+"/registry"] = "true"
	sub.Annotations[regKey+"/config"] = "true"
	sub.Annotations[reqKey+"/request"] = opt.Channel
	sub.Annotations[reqKey+"/operatorNamespace"] = namespace
	if opt.ConfigName != "" {
		sub.Annotations[reqKey+"/config"] = opt.ConfigName
	} else {
		sub.Annotations[reqKey+"/config"] = opt.Name
	}
	matched := false
	switch {
	case opt.InstallMode == ODLMInstallModeNoop:
		matched = true
		out.Conditions = append(out.Conditions, maintenance(opt))
		out.Phase, out.Note = "Running", opt.Name+" is in maintenance status"
		subV, optV := findSemantic(sub.Spec.Channel), findSemantic(opt.Channel)
		if semverValid(subV) && semverValid(optV) && semverCompare(subV, optV) < 0 {
			sub.Annotations[reqKey+"/request"] = sub.Spec.Channel
		}
	case opt.SourceNamespace == "" || opt.SourceName == "":
		out.Phase = "Failed"
		out.Problem = fmt.Sprintf("Failed to find catalogsource for operator %s with channel %s", opt.Name, opt.Channel)
	default:
		if minChannel := minSemverFromAnnotations(sub.Annotations, sub.Spec.Channel); minChannel != "" {
			sub.Spec.Channel = minChannel
		}
		matched = slices.Contains(append([]string{opt.Channel}, opt.FallbackChannels...), sub.Spec.Channel)
		if sub.Spec.Channel == opt.Channel {
			sub.Spec.CatalogSource = opt.SourceName
			sub.Spec.CatalogSourceNamespace = opt.SourceNamespace
			sub.Spec.Package = opt.PackageName
			if opt.InstallPlanApproval != "" && sub.Spec.InstallPlanApproval != opt.InstallPlanApproval {
				sub.Spec.InstallPlanApproval = opt.InstallPlanApproval
			}
			if opt.SubscriptionConfig != nil {
				sub.Spec.Config = opt.SubscriptionConfig
			}
		}
	}
	out.Action = ODLMUnchanged
	if !equality.Semantic.DeepEqual(sub.Spec, cur.Spec) || !equality.Semantic.DeepEqual(sub.Annotations, cur.Annotations) {
		run.put(sub)
		out.Action, out.Phase = ODLMUpdate, "Updating"
	}
	if !matched {
		out.Phase = "Failed"
		out.Conditions = append(out.Conditions, ODLMCondition{"NoConflict", "False", "No channel conflict on subscription", "No channel conflict on subscription " + operand.Name + " in the scope"})
		if out.Problem == "" {
			out.Problem = fmt.Sprintf("channel conflict: the Subscription %s/%s is on channel %q, neither the entry's channel %q nor a fallback %s (ODLM's condition NoConflict False: \"No channel conflict on subscription %s in the scope\")",
				sub.Namespace, sub.Name, sub.Spec.Channel, opt.Channel, quoteList(opt.FallbackChannels), operand.Name)
		}
	}
}
