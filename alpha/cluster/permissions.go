package cluster

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// What each operator of a plan may do once installed: the permissions a
// security reviewer reads before approving an InstallPlan.

// OperatorPermissions sums up the permissions one CSV of a plan brings:
// the rules of its install strategy (granted through the RBAC OLM
// generates), the RBAC objects its bundle carries, and the CRDs it adds
// or changes.
type OperatorPermissions struct {
	CSV       string `json:"csv"`
	Namespace string `json:"namespace"`
	// Package and Version come from the CSV's properties annotation.
	Package  string `json:"package,omitempty"`
	Version  string `json:"version,omitempty"`
	Replaces string `json:"replaces,omitempty"`
	// ServiceAccounts are the accounts the rules are granted to (those of
	// the install strategy), in the CSV's order.
	ServiceAccounts []string `json:"serviceAccounts"`
	// ClusterRules and NamespacedRules count the rules by scope, as
	// OLM grants them once the operator's OperatorGroup is applied (see
	// Scope).
	ClusterRules    int `json:"clusterRules"`
	NamespacedRules int `json:"namespacedRules"`
	// Scope is where the namespaced permissions end up.
	Scope PermissionScope `json:"scope"`
	Rules []Rule          `json:"rules"`
	// CRDs are the CustomResourceDefinitions the plan creates or updates
	// for this operator.
	CRDs []CRDChange `json:"crds"`
	// Findings are what a reviewer looks at first: wildcards, secrets,
	// escalate/bind/impersonate, non-resource URLs, bindings the bundle
	// carries; the most far-reaching first.
	Findings []Finding `json:"findings"`
}

// PermissionScope says where an operator's namespaced permissions
// (spec.install.spec.permissions) apply, from its namespace's
// OperatorGroup.
type PermissionScope struct {
	// OperatorGroup names the group ("" when the state holds none, or
	// several: OLM then fails the CSV).
	OperatorGroup string `json:"operatorGroup,omitempty"`
	// AllNamespaces: the group targets every namespace; olm-operator then
	// lifts the namespaced permissions to ClusterRoles and
	// ClusterRoleBindings (plus get, list and watch on namespaces), so
	// they apply cluster-wide.
	AllNamespaces bool `json:"allNamespaces"`
	// TargetNamespaces are the group's targets otherwise; olm-operator
	// copies the Roles and RoleBindings into each target other than the
	// operator's own namespace.
	TargetNamespaces []string `json:"targetNamespaces,omitempty"`
	// Known is false when the state cannot tell (no OperatorGroup, or
	// several, or one whose targets it does not know).
	Known bool `json:"known"`
	// From says where the targets were read.
	From string `json:"from,omitempty"`
}

// Rule is one policy rule the operator gets.
type Rule struct {
	// Scope is "cluster" (a ClusterRole bound cluster-wide) or
	// "namespace" (a Role in the operator's namespace, or lifted or
	// copied as the Scope of OperatorPermissions says).
	Scope string `json:"scope"`
	// Source is where the rule comes from: clusterPermissions,
	// permissions, or an RBAC object of the bundle ("bundle ClusterRole
	// NAME").
	Source string `json:"source"`
	// ServiceAccount is the account it is granted to ("" for a bundle's
	// role: see BoundTo).
	ServiceAccount string `json:"serviceAccount,omitempty"`
	// BoundTo lists the subjects a bundle's own bindings give a bundle's
	// role to (none: the role is created but granted to no one by the
	// plan).
	BoundTo []string `json:"boundTo,omitempty"`
	// RoleRef is, for a binding the bundle carries to a role it does not
	// carry, that role ("ClusterRole NAME"); the rule has no rules of its
	// own then: they are the role's, as the cluster has it.
	RoleRef         string   `json:"roleRef,omitempty"`
	APIGroups       []string `json:"apiGroups,omitempty"`
	Resources       []string `json:"resources,omitempty"`
	ResourceNames   []string `json:"resourceNames,omitempty"`
	NonResourceURLs []string `json:"nonResourceURLs,omitempty"`
	Verbs           []string `json:"verbs"`
	// Flags name what the rule grants that a reviewer looks for (the
	// Flag constants).
	Flags []string `json:"flags,omitempty"`
}

// The flags of a rule.
const (
	FlagClusterAdmin    = "all-access"          // every verb on every resource of every group
	FlagWildcardVerbs   = "wildcard-verbs"      // verbs: ["*"]
	FlagWildcardRes     = "wildcard-resources"  // resources: ["*"]
	FlagWildcardGroups  = "wildcard-api-groups" // apiGroups: ["*"]
	FlagSecrets         = "secrets"             // access to Secrets
	FlagEscalate        = "escalate"            // may grant permissions it does not hold
	FlagBind            = "bind"                // may bind roles it does not hold
	FlagImpersonate     = "impersonate"         // may act as other users, groups or service accounts
	FlagNonResourceURLs = "non-resource-urls"   // access to URLs outside the API's resources
	FlagRBACWrite       = "rbac-write"          // may create or change roles and bindings
	FlagBundleBinding   = "bundle-binding"      // a binding the bundle itself carries
)

// CRDChange is a CustomResourceDefinition the plan creates or updates.
type CRDChange struct {
	Name string `json:"name"`
	// Action is as in Effect: create, update, fail, or unknown when the
	// state holds no CRDs.
	Action Action `json:"action"`
	Detail string `json:"detail,omitempty"`
}

// Finding is one thing a reviewer should look at.
type Finding struct {
	Flag  string `json:"flag"`
	Scope string `json:"scope"`
	Text  string `json:"text"`
}

// Permissions sums up, for each CSV step of a plan, the permissions the
// operator gets: its install strategy's rules (clusterPermissions
// cluster-wide, permissions in its namespace, lifted to the whole cluster
// when its OperatorGroup targets all namespaces), the rules of the RBAC
// objects its bundle carries, and the CRDs the plan creates or updates
// for it. s may be nil: the scope of namespaced rules and the CRD changes
// are then unknown. The CSVs come in the plan's order.
func Permissions(steps []*Step, s *State) ([]OperatorPermissions, error) {
	var out []OperatorPermissions
	for i, st := range steps {
		if st.Resource.Kind != KindCSV {
			continue
		}
		if IsUnpackedReference(st.Resource.Manifest) {
			return nil, fmt.Errorf("step %d: CSV %s: the manifest is a reference to the ConfigMap of an unpacked bundle, not the CSV (give the steps with their manifests: Plan.Applied)", i, st.Resource.Name)
		}
		var csv v1alpha1.ClusterServiceVersion
		if err := json.Unmarshal([]byte(st.Resource.Manifest), &csv); err != nil {
			return nil, fmt.Errorf("step %d: CSV %s: %w", i, st.Resource.Name, err)
		}
		p := OperatorPermissions{CSV: csv.Name, Namespace: csv.Namespace, Replaces: csv.Spec.Replaces, ServiceAccounts: []string{}, Rules: []Rule{}, CRDs: []CRDChange{}, Findings: []Finding{}}
		p.Package, p.Version = packageOf(csv.Annotations[StepPropertiesAnnotation])
		p.Scope = permissionScope(s, csv.Namespace)
		strategy := csv.Spec.InstallStrategy.StrategySpec
		addSA := func(sa string) {
			if !slices.Contains(p.ServiceAccounts, sa) {
				p.ServiceAccounts = append(p.ServiceAccounts, sa)
			}
		}
		for _, perm := range strategy.ClusterPermissions {
			addSA(perm.ServiceAccountName)
			for _, r := range perm.Rules {
				p.Rules = append(p.Rules, newRule("cluster", "clusterPermissions", perm.ServiceAccountName, r))
			}
		}
		nsScope := "namespace"
		if p.Scope.AllNamespaces {
			nsScope = "cluster"
		}
		for _, perm := range strategy.Permissions {
			addSA(perm.ServiceAccountName)
			for _, r := range perm.Rules {
				p.Rules = append(p.Rules, newRule(nsScope, "permissions", perm.ServiceAccountName, r))
			}
		}
		bundleRBAC(&p, steps, st.Resolving)
		for j, other := range steps {
			if other.Resolving != st.Resolving || other.Resource.Kind != KindCRD {
				continue
			}
			c := CRDChange{Name: other.Resource.Name, Action: ActionUnknown, Detail: "the state is not known"}
			if s != nil {
				e := s.Effects(csv.Namespace, []*Step{steps[j]})[0]
				c.Action, c.Detail = e.Action, e.Detail
			}
			p.CRDs = append(p.CRDs, c)
		}
		for _, r := range p.Rules {
			if r.Scope == "cluster" {
				p.ClusterRules++
			} else {
				p.NamespacedRules++
			}
		}
		p.Findings = findings(&p)
		out = append(out, p)
	}
	return out, nil
}

// packageOf reads the olm.package property of a properties annotation.
func packageOf(anno string) (pkg, version string) {
	var a struct {
		Properties []struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"properties"`
	}
	if json.Unmarshal([]byte(anno), &a) != nil {
		return "", ""
	}
	for _, p := range a.Properties {
		if p.Type == "olm.package" {
			var v struct {
				PackageName string `json:"packageName"`
				Version     string `json:"version"`
			}
			if json.Unmarshal(p.Value, &v) == nil {
				return v.PackageName, v.Version
			}
		}
	}
	return "", ""
}

// permissionScope reads the targets of the namespace's OperatorGroup as
// the state has them: status.namespaces when set (what olm-operator acts
// on), else spec.targetNamespaces, else all namespaces for a group
// without a selector; a selector's targets are unknown without its
// status.
func permissionScope(s *State, ns string) PermissionScope {
	if s == nil {
		return PermissionScope{}
	}
	ogs := s.OperatorGroupsIn(ns)
	if len(ogs) != 1 {
		return PermissionScope{From: fmt.Sprintf("the state holds %d OperatorGroups in %s", len(ogs), ns)}
	}
	og := ogs[0]
	sc := PermissionScope{OperatorGroup: og.Name, Known: true}
	switch {
	case len(og.Status.Namespaces) > 0:
		sc.From = "status.namespaces"
		if len(og.Status.Namespaces) == 1 && og.Status.Namespaces[0] == "" {
			sc.AllNamespaces = true
		} else {
			sc.TargetNamespaces = slices.Sorted(slices.Values(og.Status.Namespaces))
		}
	case len(og.Spec.TargetNamespaces) > 0:
		sc.From = "spec.targetNamespaces"
		sc.TargetNamespaces = slices.Sorted(slices.Values(og.Spec.TargetNamespaces))
	case og.Spec.Selector == nil || (len(og.Spec.Selector.MatchLabels) == 0 && len(og.Spec.Selector.MatchExpressions) == 0):
		sc.From = "no targetNamespaces and no selector"
		sc.AllNamespaces = true
	default:
		sc.Known = false
		sc.From = "a selector, and no status.namespaces in the state"
	}
	return sc
}

func newRule(scope, source, sa string, r rbacv1.PolicyRule) Rule {
	out := Rule{
		Scope: scope, Source: source, ServiceAccount: sa,
		APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames,
		NonResourceURLs: r.NonResourceURLs, Verbs: r.Verbs,
	}
	if out.Verbs == nil {
		out.Verbs = []string{}
	}
	out.Flags = ruleFlags(r)
	return out
}

// ruleFlags names what a rule grants that matters to a reviewer. A
// wildcard counts for what it covers: verbs "*" include escalate, bind
// and impersonate; resources "*" include secrets.
func ruleFlags(r rbacv1.PolicyRule) []string {
	var flags []string
	anyVerb := slices.Contains(r.Verbs, "*")
	anyRes := slices.Contains(r.Resources, "*")
	anyGroup := slices.Contains(r.APIGroups, "*")
	group := func(gs ...string) bool {
		if anyGroup {
			return true
		}
		for _, g := range gs {
			if slices.Contains(r.APIGroups, g) {
				return true
			}
		}
		return false
	}
	res := func(rs ...string) bool {
		if anyRes {
			return true
		}
		for _, x := range rs {
			if slices.Contains(r.Resources, x) {
				return true
			}
		}
		return false
	}
	verb := func(v string) bool { return anyVerb || slices.Contains(r.Verbs, v) }
	if anyVerb && anyRes && anyGroup {
		flags = append(flags, FlagClusterAdmin)
	}
	if anyVerb {
		flags = append(flags, FlagWildcardVerbs)
	}
	if anyRes {
		flags = append(flags, FlagWildcardRes)
	}
	if anyGroup {
		flags = append(flags, FlagWildcardGroups)
	}
	if len(r.Resources) > 0 && group("") && res("secrets") {
		flags = append(flags, FlagSecrets)
	}
	rbacRoles := group(rbacv1.GroupName) && res("roles", "clusterroles")
	if verb("escalate") && rbacRoles {
		flags = append(flags, FlagEscalate)
	}
	if verb("bind") && rbacRoles {
		flags = append(flags, FlagBind)
	}
	if verb("impersonate") && group("", "authentication.k8s.io") && res(impersonable...) {
		flags = append(flags, FlagImpersonate)
	}
	if group(rbacv1.GroupName) && res("roles", "clusterroles", "rolebindings", "clusterrolebindings") &&
		(verb("create") || verb("update") || verb("patch")) {
		flags = append(flags, FlagRBACWrite)
	}
	if len(r.NonResourceURLs) > 0 {
		flags = append(flags, FlagNonResourceURLs)
	}
	return flags
}

// bundleRBAC adds the rules of the Roles and ClusterRoles the bundle
// itself carries (not the generated ones), with the subjects the bundle's
// own bindings give them to, and a rule-less entry for each binding that
// names a role the bundle does not carry.
func bundleRBAC(p *OperatorPermissions, steps []*Step, resolving string) {
	type role struct {
		kind, name string
		rules      []rbacv1.PolicyRule
	}
	var roles []role
	type binding struct {
		kind, name string
		ref        rbacv1.RoleRef
		subjects   []rbacv1.Subject
	}
	var bindings []binding
	for _, st := range steps {
		if st.Resolving != resolving {
			continue
		}
		switch st.Resource.Kind {
		case "Role", "ClusterRole":
			var r rbacv1.ClusterRole // a Role has the same fields
			if json.Unmarshal([]byte(st.Resource.Manifest), &r) != nil || r.Labels[labelOwnerKind] == v1alpha1.ClusterServiceVersionKind {
				continue // generated from the install strategy (or unreadable)
			}
			roles = append(roles, role{st.Resource.Kind, st.Resource.Name, r.Rules})
		case "RoleBinding", "ClusterRoleBinding":
			var b rbacv1.ClusterRoleBinding
			if json.Unmarshal([]byte(st.Resource.Manifest), &b) != nil || b.Labels[labelOwnerKind] == v1alpha1.ClusterServiceVersionKind {
				continue
			}
			bindings = append(bindings, binding{st.Resource.Kind, st.Resource.Name, b.RoleRef, b.Subjects})
		}
	}
	subjectText := func(sub rbacv1.Subject) string {
		if sub.Namespace != "" {
			return sub.Kind + " " + sub.Namespace + "/" + sub.Name
		}
		return sub.Kind + " " + sub.Name
	}
	carried := map[string]bool{}
	for _, r := range roles {
		carried[r.kind+"/"+r.name] = true
		var bound []string
		scope := "namespace"
		if r.kind == "ClusterRole" {
			scope = "cluster"
		}
		for _, b := range bindings {
			if b.ref.Kind == r.kind && b.ref.Name == r.name {
				for _, sub := range b.subjects {
					bound = append(bound, subjectText(sub)+" (by "+b.kind+" "+b.name+")")
				}
				if r.kind == "ClusterRole" && b.kind == "RoleBinding" {
					scope = "namespace"
				}
			}
		}
		for _, pr := range r.rules {
			rule := newRule(scope, "bundle "+r.kind+" "+r.name, "", pr)
			rule.BoundTo = bound
			p.Rules = append(p.Rules, rule)
		}
	}
	for _, b := range bindings {
		if carried[b.ref.Kind+"/"+b.ref.Name] {
			continue
		}
		var subs []string
		for _, sub := range b.subjects {
			subs = append(subs, subjectText(sub))
		}
		scope := "namespace"
		if b.kind == "ClusterRoleBinding" {
			scope = "cluster"
		}
		ref := strings.TrimSpace(b.ref.Kind + " " + b.ref.Name)
		if ref == "" {
			ref = "an empty roleRef"
		}
		flags := []string{FlagBundleBinding}
		if b.ref.Kind == "ClusterRole" && b.ref.Name == "cluster-admin" {
			// Every verb on every resource: the rule of cluster-admin.
			flags = append([]string{FlagClusterAdmin}, flags...)
		}
		p.Rules = append(p.Rules, Rule{
			Scope: scope, Source: "bundle " + b.kind + " " + b.name, BoundTo: subs, Verbs: []string{},
			RoleRef: ref,
			Flags:   flags,
		})
	}
}

// findingOrder ranks the flags, most far-reaching first.
var findingOrder = []string{FlagClusterAdmin, FlagEscalate, FlagBind, FlagImpersonate, FlagBundleBinding, FlagRBACWrite, FlagSecrets,
	FlagWildcardGroups, FlagWildcardRes, FlagWildcardVerbs, FlagNonResourceURLs}

// findings lists the rules' flags, most far-reaching first. A rule that
// grants everything is reported once, as that; verbs "*" are not reported
// again for a rule whose other findings show its verbs.
func findings(p *OperatorPermissions) []Finding {
	out := []Finding{}
	shown := func(r Rule, flag string) bool {
		if !slices.Contains(r.Flags, flag) {
			return false
		}
		if slices.Contains(r.Flags, FlagClusterAdmin) {
			return flag == FlagClusterAdmin
		}
		if flag == FlagWildcardVerbs {
			for _, f := range []string{FlagSecrets, FlagEscalate, FlagBind, FlagImpersonate, FlagRBACWrite, FlagNonResourceURLs} {
				if slices.Contains(r.Flags, f) {
					return false
				}
			}
		}
		return true
	}
	seen := map[string]bool{}
	for _, flag := range findingOrder {
		for _, r := range p.Rules {
			if !shown(r, flag) {
				continue
			}
			f := Finding{Flag: flag, Scope: r.Scope, Text: findingText(flag, r, p)}
			if !seen[f.Text] {
				seen[f.Text] = true
				out = append(out, f)
			}
		}
	}
	return out
}

// impersonable are the resources the impersonate verb applies to.
var impersonable = []string{"users", "groups", "serviceaccounts", "userextras", "uids"}

// verbsText names verbs for a sentence.
func verbsText(vs []string) string {
	if slices.Contains(vs, "*") {
		return `do anything ("*") to`
	}
	return strings.Join(vs, ", ")
}

func findingText(flag string, r Rule, p *OperatorPermissions) string {
	who := r.Source
	if r.ServiceAccount != "" {
		who = "ServiceAccount " + r.ServiceAccount + " (" + r.Source + ")"
	}
	where := "in namespace " + p.Namespace
	switch {
	case r.Scope == "cluster" && r.Source == "permissions":
		where = "in every namespace (its OperatorGroup targets all namespaces: OLM lifts its permissions to ClusterRoles)"
	case r.Scope == "cluster":
		where = "cluster-wide"
	case r.Source == "permissions" && len(p.Scope.TargetNamespaces) > 0:
		where = "in namespaces " + strings.Join(p.Scope.TargetNamespaces, ", ")
	}
	if r.RoleRef != "" {
		where = "in namespace " + p.Namespace
		if r.Scope == "cluster" {
			where = "cluster-wide"
		}
	}
	viaWildcard := ""
	if slices.Contains(r.Verbs, "*") {
		viaWildcard = ` (verbs "*" include it)`
	}
	switch flag {
	case FlagClusterAdmin:
		if r.RoleRef != "" {
			return fmt.Sprintf("%s binds %s (every verb on every resource) %s to %s%s", r.Source, r.RoleRef, where, permList(r.BoundTo), elsewhere(r, p))
		}
		return fmt.Sprintf("%s may do anything %s (verbs, resources and apiGroups \"*\")", who, where)
	case FlagEscalate:
		return fmt.Sprintf("%s may escalate roles %s%s: grant permissions it does not hold", who, where, viaWildcard)
	case FlagBind:
		return fmt.Sprintf("%s may bind roles %s%s: give any role it can name to any subject", who, where, viaWildcard)
	case FlagImpersonate:
		whom := "anyone (resources \"*\")"
		if !slices.Contains(r.Resources, "*") {
			var rs []string
			for _, x := range r.Resources {
				if slices.Contains(impersonable, x) {
					rs = append(rs, x)
				}
			}
			whom = strings.Join(rs, ", ")
		}
		return fmt.Sprintf("%s may impersonate %s %s%s", who, whom, where, viaWildcard)
	case FlagBundleBinding:
		return fmt.Sprintf("%s binds %s, which the bundle does not carry, %s to %s%s%s", r.Source, r.RoleRef, where, permList(r.BoundTo), knownRole(r.RoleRef), elsewhere(r, p))
	case FlagRBACWrite:
		return fmt.Sprintf("%s may %s %s %s", who, verbsText(r.Verbs), strings.Join(r.Resources, ", "), where)
	case FlagSecrets:
		names := ""
		if len(r.ResourceNames) > 0 {
			names = " named " + strings.Join(r.ResourceNames, ", ")
		}
		return fmt.Sprintf("%s may %s secrets%s %s", who, verbsText(r.Verbs), names, where)
	case FlagWildcardGroups:
		return fmt.Sprintf("%s: apiGroups \"*\" (every API group, present and future) %s", who, where)
	case FlagWildcardRes:
		return fmt.Sprintf("%s: resources \"*\" in %s %s", who, groupsText(r.APIGroups), where)
	case FlagWildcardVerbs:
		return fmt.Sprintf("%s: verbs \"*\" on %s %s", who, strings.Join(r.Resources, ", "), where)
	case FlagNonResourceURLs:
		return fmt.Sprintf("%s may %s the non-resource URLs %s", who, verbsText(r.Verbs), strings.Join(r.NonResourceURLs, ", "))
	}
	return flag
}

// elsewhere notes the subjects of a bundle's binding that live in another
// namespace than the operator's: the bundle names them, so they do not
// follow the namespace it is installed in.
func elsewhere(r Rule, p *OperatorPermissions) string {
	var other []string
	for _, b := range r.BoundTo {
		kind, rest, _ := strings.Cut(b, " ")
		if ns, _, ok := strings.Cut(rest, "/"); ok && kind == "ServiceAccount" && ns != p.Namespace && !slices.Contains(other, ns) {
			other = append(other, ns)
		}
	}
	if len(other) == 0 {
		return ""
	}
	return fmt.Sprintf(" (in namespace %s, not the operator's %s: the bundle names it)", strings.Join(other, ", "), p.Namespace)
}

// knownRole says what a well-known role a bundle binds grants.
func knownRole(ref string) string {
	switch ref {
	case "ClusterRole admin", "ClusterRole edit":
		return " (read and write access to most namespaced resources)"
	case "ClusterRole view":
		return " (read access to most namespaced resources, not secrets)"
	case "ClusterRole system:image-puller":
		return " (pull images from the namespace's image streams)"
	case "ClusterRole system:openshift:scc:privileged":
		return " (use of OpenShift's privileged SecurityContextConstraints: privileged pods, host access)"
	case "ClusterRole system:openshift:scc:anyuid":
		return " (use of OpenShift's anyuid SecurityContextConstraints: pods may run as any user, root included)"
	}
	if scc, ok := strings.CutPrefix(ref, "ClusterRole system:openshift:scc:"); ok {
		return " (use of OpenShift's " + scc + " SecurityContextConstraints)"
	}
	return ""
}

func groupsText(gs []string) string {
	var out []string
	for _, g := range gs {
		if g == "" {
			g = `"" (core)`
		}
		out = append(out, g)
	}
	return "apiGroups " + strings.Join(out, ", ")
}

// WritePermissionsText writes the summary for a reader: per operator, its
// findings first, then the rules by scope, then the CRDs.
func WritePermissionsText(w io.Writer, ps []OperatorPermissions) error {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s", p.CSV)
		if p.Package != "" {
			fmt.Fprintf(&b, " (package %s %s)", p.Package, p.Version)
		}
		fmt.Fprintf(&b, " in namespace %s", p.Namespace)
		if p.Replaces != "" {
			fmt.Fprintf(&b, ", replacing %s", p.Replaces)
		}
		b.WriteString("\n")
		fmt.Fprintf(&b, "  service accounts: %s\n", permList(p.ServiceAccounts))
		fmt.Fprintf(&b, "  %d cluster-wide rules, %d namespaced rules; %s\n", p.ClusterRules, p.NamespacedRules, scopeText(p))
		if len(p.Findings) == 0 {
			b.WriteString("  findings: none\n")
		} else {
			b.WriteString("  findings:\n")
			for _, f := range p.Findings {
				fmt.Fprintf(&b, "  ! %s\n", f.Text)
			}
		}
		for _, scope := range []string{"cluster", "namespace"} {
			first := true
			for _, r := range p.Rules {
				if r.Scope != scope {
					continue
				}
				if first {
					if scope == "cluster" {
						b.WriteString("  cluster-wide rules:\n")
					} else {
						b.WriteString("  namespaced rules:\n")
					}
					first = false
				}
				fmt.Fprintf(&b, "    %s\n", ruleText(r))
			}
		}
		if len(p.CRDs) > 0 {
			b.WriteString("  CRDs:\n")
			for _, c := range p.CRDs {
				fmt.Fprintf(&b, "    %s %s: %s\n", c.Action, c.Name, c.Detail)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func permList(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

func scopeText(p OperatorPermissions) string {
	sc := p.Scope
	switch {
	case !sc.Known:
		if sc.From == "" {
			return "the OperatorGroup's targets are unknown"
		}
		return "the OperatorGroup's targets are unknown (" + sc.From + ")"
	case sc.AllNamespaces:
		return fmt.Sprintf("OperatorGroup %s targets all namespaces (%s): OLM lifts the namespaced permissions to ClusterRoles and ClusterRoleBindings (plus get, list, watch on namespaces), counted here as cluster-wide", sc.OperatorGroup, sc.From)
	case len(sc.TargetNamespaces) == 1 && sc.TargetNamespaces[0] == p.Namespace:
		return fmt.Sprintf("OperatorGroup %s targets its own namespace (%s)", sc.OperatorGroup, sc.From)
	default:
		return fmt.Sprintf("OperatorGroup %s targets %s (%s): OLM copies the Roles and RoleBindings into each target namespace", sc.OperatorGroup, strings.Join(sc.TargetNamespaces, ", "), sc.From)
	}
}

func ruleText(r Rule) string {
	var parts []string
	if r.RoleRef != "" {
		parts = append(parts, "the rules of "+r.RoleRef+" (not in the bundle)")
	}
	if len(r.NonResourceURLs) > 0 {
		parts = append(parts, "nonResourceURLs "+strings.Join(r.NonResourceURLs, ","))
	}
	if len(r.APIGroups) > 0 || len(r.Resources) > 0 {
		parts = append(parts, groupsText(r.APIGroups), "resources "+strings.Join(r.Resources, ","))
	}
	if len(r.ResourceNames) > 0 {
		parts = append(parts, "names "+strings.Join(r.ResourceNames, ","))
	}
	if r.RoleRef == "" {
		parts = append(parts, "verbs "+strings.Join(r.Verbs, ","))
	}
	who := r.Source
	if r.ServiceAccount != "" {
		who = r.ServiceAccount + " (" + r.Source + ")"
	}
	s := who + ": " + strings.Join(parts, "; ")
	if len(r.BoundTo) > 0 {
		s += "; bound to " + strings.Join(r.BoundTo, ", ")
	} else if strings.HasPrefix(r.Source, "bundle ") && !slices.Contains(r.Flags, FlagBundleBinding) {
		s += "; bound to no one by the bundle"
	}
	if len(r.Flags) > 0 {
		s += "  [" + strings.Join(r.Flags, " ") + "]"
	}
	return s
}
