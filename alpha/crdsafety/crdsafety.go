// Package crdsafety finds the changes to a bundle's CustomResourceDefinitions
// that OLM refuses when it upgrades a cluster from one bundle to the next.
//
// The two OLMs check different things:
//
//   - OLM v1 (operator-controller, its CRD upgrade-safety preflight,
//     internal/operator-controller/rukpak/preflights/crdupgradesafety at
//     v1.11.0) compares the CRD on the cluster with the one it is about to
//     apply with kubernetes-sigs' crdify, in the configuration that
//     preflight uses, and refuses every incompatibility crdify reports: a
//     scope change, a stored version removed, an existing field removed, a
//     field newly required, an enum narrowed, a bound tightened, a type,
//     pattern, nullable or default changed, and any other schema change
//     crdify does not classify. Description changes are allowed, and so are
//     enum values added; changes between the served versions of the new CRD
//     are checked unless it converts through a webhook, and only when the
//     old CRD did not already have them.
//   - OLM v0 (operator-lifecycle-manager v0.46.0, pkg/controller/operators/
//     catalog: step.go, validateV1CRDCompatibility, and pkg/lib/crd
//     SafeStorageVersionUpgrade) refuses a CRD that drops a version the
//     cluster has stored objects in ("risk of data loss"), and one under
//     which an existing custom resource of a version served before and
//     after no longer validates, unless the new CRD converts through a
//     webhook (then it only warns). The API server it sends the update to
//     refuses a scope or kind change.
//
// Offline, the cluster's state is not known: the old CRD stands for the one
// the cluster runs (the one the installed bundle applied), its storage
// version for the versions the cluster has stored objects in, and there
// are no custom resources. So a schema change that an existing resource may
// or may not satisfy is reported for OLM v0 as refused only "if an existing
// resource breaks it" (VerdictIfResourcesBreak).
package crdsafety

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Verdict is what one OLM does with a change.
type Verdict string

const (
	// Refuses: the OLM refuses the upgrade.
	Refuses Verdict = "refuses"
	// IfResourcesBreak: OLM v0 refuses the upgrade when an existing custom
	// resource does not validate against the new schema, which only the
	// cluster knows.
	IfResourcesBreak Verdict = "refuses-if-resources-break"
	// NotChecked: the comparison was not made, past a limit (Limits):
	// whether the OLM refuses the update is not known.
	NotChecked Verdict = "not-checked"
)

// Change is one incompatible change of a CRD from the old bundle to the
// new one.
type Change struct {
	// CRD is the CustomResourceDefinition's name (plural.group).
	CRD string `json:"crd"`
	// Version is the CRD version the change is in ("v1"), or a pair of
	// served versions of the new CRD ("v1 -> v2") whose schemas differ
	// incompatibly; empty for a change to the whole CRD.
	Version string `json:"version,omitempty"`
	// Field is the schema property, as crdify writes it: "^" is the root,
	// so "^.spec.size".
	Field string `json:"field,omitempty"`
	// Check is the name of the check that found it: crdify's validation
	// names (scope, storedVersionRemoval, existingFieldRemoval, enum,
	// required, maximum, minLength, type, default, pattern, nullable,
	// unhandled, ...), or kind, servedVersionRemoval and invalid; limit
	// for a comparison not made, past a limit (its verdicts NotChecked).
	Check string `json:"check"`
	// Message says what changed.
	Message string `json:"message"`
	// V0 and V1 are what OLM v0 and OLM v1 do with it; both empty for a
	// change that neither refuses but that clients may notice (a served
	// version removed).
	V0 Verdict `json:"olmV0,omitempty"`
	V1 Verdict `json:"olmV1,omitempty"`
}

// Refused reports whether an OLM surely refuses the change.
func (c Change) Refused() bool { return c.V0 == Refuses || c.V1 == Refuses }

// NotChecked reports whether the change says that a comparison was not
// made, past a limit: whether an OLM refuses the update is not known.
func (c Change) NotChecked() bool { return c.V0 == NotChecked || c.V1 == NotChecked }

// String says the change in one line, with who refuses it.
func (c Change) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "CRD %s", c.CRD)
	if c.Version != "" {
		fmt.Fprintf(&b, " %s", c.Version)
	}
	if c.Field != "" {
		fmt.Fprintf(&b, " %s", c.Field)
	}
	fmt.Fprintf(&b, ": %s: %s (%s)", c.Check, c.Message, c.Who())
	return b.String()
}

// Who says in words which OLM refuses the change.
func (c Change) Who() string {
	switch {
	case c.V0 == Refuses && c.V1 == Refuses:
		return "OLM v0 and v1 refuse it"
	case c.V1 == Refuses && c.V0 == IfResourcesBreak:
		return "OLM v1 refuses it; OLM v0 refuses it if an existing resource breaks it"
	case c.V0 == NotChecked && c.V1 == NotChecked:
		return "not checked: whether OLM v0 and v1 refuse it is not known"
	case c.V0 == NotChecked || c.V1 == NotChecked:
		// One OLM's verdict is not known; the other's is said.
		known, unknown := Change{V0: c.V0}, "v1"
		if c.V0 == NotChecked {
			known, unknown = Change{V1: c.V1}, "v0"
		}
		if known.V0 == "" && known.V1 == "" {
			return "not checked: whether OLM " + unknown + " refuses it is not known"
		}
		return known.Who() + "; whether OLM " + unknown + " refuses it is not known (not checked)"
	case c.V1 == Refuses:
		return "OLM v1 refuses it"
	case c.V0 == Refuses:
		return "OLM v0 refuses it"
	case c.V0 == IfResourcesBreak:
		return "OLM v0 refuses it if an existing resource breaks it"
	}
	return "neither OLM refuses it"
}

// Result is the comparison of the CRDs of the two bundles of an update.
type Result struct {
	// Unknown says why the CRDs could not be compared (a bundle whose
	// catalog entry carries no objects); empty when they were.
	Unknown string `json:"unknown,omitempty"`
	// Changes are the incompatible changes, sorted by CRD, version, field
	// and check.
	Changes []Change `json:"changes,omitempty"`
}

// Refusals returns the verdicts of OLM v0 and v1 on the whole update: the
// strongest verdict of its changes (a refusal; else a change not checked;
// else a refusal if resources break).
func (r Result) Refusals() (v0, v1 Verdict) {
	for _, c := range r.Changes {
		v0 = stronger(v0, c.V0)
		v1 = stronger(v1, c.V1)
	}
	return v0, v1
}

// Refused reports whether an OLM surely refuses the update.
func (r Result) Refused() bool {
	v0, v1 := r.Refusals()
	return v0 == Refuses || v1 == Refuses
}

func stronger(a, b Verdict) Verdict {
	rank := func(v Verdict) int {
		switch v {
		case Refuses:
			return 3
		case NotChecked:
			return 2
		case IfResourcesBreak:
			return 1
		}
		return 0
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// Summary says in one line what the OLMs do with the update, or "" when
// its CRDs were compared and have no incompatible change.
func (r Result) Summary() string {
	if r.Unknown != "" {
		return "CRDs not compared: " + r.Unknown
	}
	var found, limits []Change
	for _, c := range r.Changes {
		if c.Check == "limit" {
			limits = append(limits, c)
		} else {
			found = append(found, c)
		}
	}
	var parts []string
	switch n := len(found); n {
	case 0:
	case 1:
		parts = append(parts, "1 incompatible CRD change: "+found[0].Who())
	default:
		v0, v1 := Result{Changes: found}.Refusals()
		parts = append(parts, fmt.Sprintf("%d incompatible CRD changes: %s", n, Change{V0: v0, V1: v1}.Who()))
	}
	if len(limits) > 0 {
		v0, v1 := Result{Changes: limits}.Refusals()
		what := "1 CRD not fully checked"
		if len(limits) > 1 {
			what = fmt.Sprintf("%d CRDs not fully checked", len(limits))
		}
		parts = append(parts, what+", past a limit ("+Change{V0: v0, V1: v1}.Who()+")")
	}
	return strings.Join(parts, "; ")
}

func sortChanges(cs []Change) {
	slices.SortFunc(cs, func(a, b Change) int {
		return cmp.Or(cmp.Compare(a.CRD, b.CRD), cmp.Compare(a.Version, b.Version), cmp.Compare(a.Field, b.Field),
			cmp.Compare(a.Check, b.Check), cmp.Compare(a.Message, b.Message))
	})
}
