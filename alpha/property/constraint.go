package property

// Constraint is an olm.constraint value as OLM decodes it
// (operator-framework/api v0.45.0, pkg/constraints.Constraint): a failure
// message and one of a CEL rule, a package, a GVK, or a compound of
// constraints.
type Constraint struct {
	FailureMessage string `json:"failureMessage,omitempty"`
	Cel            *struct {
		Rule string `json:"rule"`
	} `json:"cel,omitempty"`
	Package *struct {
		PackageName  string `json:"packageName"`
		VersionRange string `json:"versionRange"`
	} `json:"package,omitempty"`
	GVK *struct {
		Group   string `json:"group"`
		Kind    string `json:"kind"`
		Version string `json:"version"`
	} `json:"gvk,omitempty"`
	All *CompoundConstraint `json:"all,omitempty"`
	Any *CompoundConstraint `json:"any,omitempty"`
	Not *CompoundConstraint `json:"not,omitempty"`
}

// CompoundConstraint is the value of a Constraint's all, any or not.
type CompoundConstraint struct {
	Constraints []Constraint `json:"constraints"`
}
