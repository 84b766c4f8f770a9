package install

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/blang/semver/v4"
	"github.com/google/cel-go/cel"

	"github.com/fastopm/fastopm/alpha/property"
)

// predicate is a test on the bundles that may satisfy a dependency: OLM's
// cache predicates (pkg/controller/registry/resolver/cache/predicates.go).
// String is OLM's wording, which its messages use; words is ours, for
// people; key tells predicates apart (String does not: OLM writes
// and/or/not without brackets).
type predicate interface {
	// test reports whether e satisfies the predicate. A test that cannot
	// be decided (a CEL rule past its cost limit, the question's budget
	// spent) records why in x and returns false: the caller stops at x.err
	// before it uses any answer.
	test(x *eval, e *Entry) bool
	String() string
	words() string
	key() string
}

// eval is one question's evaluation of predicates: its context (its
// budget, and its asker still waiting), and the first reason it could not
// decide a test.
type eval struct {
	ctx context.Context
	err error
	// deadline is when the question's budget is spent (zero: never);
	// expire spends it, ending ctx.
	deadline time.Time
	expire   func()
}

// stop records ctx's error and reports whether the question must stop.
func (x *eval) stop() bool {
	if x.err == nil {
		if !x.deadline.IsZero() && !time.Now().Before(x.deadline) {
			x.expire()
		}
		x.err = x.ctx.Err()
	}
	return x.err != nil
}

// gvkPredicate: the bundle provides an API (an olm.gvk property).
type gvkPredicate GVK

func (p gvkPredicate) test(x *eval, e *Entry) bool {
	for _, g := range e.Bundle.gvks {
		if g == GVK(p) {
			return true
		}
	}
	return false
}

func (p gvkPredicate) String() string {
	return fmt.Sprintf("providing an API with group: %s, version: %s, kind: %s", p.Group, p.Version, p.Kind)
}
func (p gvkPredicate) words() string { return "GVK " + GVK(p).String() }
func (p gvkPredicate) key() string   { return "gvk(" + GVK(p).String() + ")" }

// pkgPredicate: the bundle is in a package (by its olm.package property,
// or its package).
type pkgPredicate string

func (p pkgPredicate) test(x *eval, e *Entry) bool {
	for _, pp := range e.Bundle.packages {
		if pp.PackageName == string(p) {
			return true
		}
	}
	return e.Package() == string(p)
}

func (p pkgPredicate) String() string { return "with package: " + string(p) }
func (p pkgPredicate) words() string  { return "package " + string(p) }
func (p pkgPredicate) key() string    { return "pkg(" + string(p) + ")" }

// versionPredicate: a version of the bundle (an olm.package property's,
// read strictly, or the bundle's, read tolerantly) is in a range.
type versionPredicate struct {
	r   semver.Range
	str string
}

func (p versionPredicate) test(x *eval, e *Entry) bool {
	for _, pp := range e.Bundle.packages {
		if v, err := semver.Parse(pp.Version); err == nil && p.r(v) {
			return true
		}
	}
	return e.Bundle.version != nil && p.r(*e.Bundle.version)
}

func (p versionPredicate) String() string { return "with version in range: " + p.str }
func (p versionPredicate) words() string  { return "a version in range " + p.str }
func (p versionPredicate) key() string    { return "version(" + p.str + ")" }

// labelPredicate: the bundle has an olm.label property with the label.
type labelPredicate string

func (p labelPredicate) test(x *eval, e *Entry) bool {
	for _, l := range e.Bundle.labels {
		if l == string(p) {
			return true
		}
	}
	return false
}

func (p labelPredicate) String() string { return "with label: " + string(p) }
func (p labelPredicate) words() string  { return "label " + string(p) }
func (p labelPredicate) key() string    { return "label(" + string(p) + ")" }

// celPredicate: a CEL rule holds over the bundle's properties.
type celPredicate struct {
	program       cel.Program
	rule, failMsg string
	limit         uint64 // the program's cost limit
}

func (p *celPredicate) test(x *eval, e *Entry) bool {
	if x.err != nil {
		return false
	}
	ok, err := evalCEL(x.ctx, p.program, e.Bundle.cel())
	if err != nil {
		x.err = &celError{rule: p.rule, bundle: e, err: err, limit: p.limit}
	}
	return ok
}

func (p *celPredicate) String() string {
	return fmt.Sprintf("with constraint: %q and message: %q", p.rule, p.failMsg)
}

func (p *celPredicate) words() string {
	s := fmt.Sprintf("a bundle for which the CEL rule %q holds", p.rule)
	if p.failMsg != "" {
		s += fmt.Sprintf(" (%q)", p.failMsg)
	}
	return s
}
func (p *celPredicate) key() string { return fmt.Sprintf("cel(%q)", p.rule) }

// Compound predicates.
type (
	andPredicate []predicate
	orPredicate  []predicate
	// notPredicate holds when none of its predicates holds.
	notPredicate []predicate
)

func (p andPredicate) test(x *eval, e *Entry) bool {
	for _, q := range p {
		if !q.test(x, e) {
			return false
		}
	}
	return true
}

func (p orPredicate) test(x *eval, e *Entry) bool {
	for _, q := range p {
		if q.test(x, e) {
			return true
		}
	}
	return false
}

func (p notPredicate) test(x *eval, e *Entry) bool { return !orPredicate(p).test(x, e) }

func join(ps []predicate, f func(predicate) string, sep string) string {
	s := make([]string, len(ps))
	for i, q := range ps {
		s[i] = f(q)
	}
	return strings.Join(s, sep)
}

func (p andPredicate) String() string { return join(p, predicate.String, " and ") }
func (p orPredicate) String() string  { return join(p, predicate.String, " or ") }

// String is OLM's: "a and not b" for neither a nor b, and just "a" for
// not a.
func (p notPredicate) String() string { return join(p, predicate.String, " and not ") }

func (p andPredicate) words() string {
	if len(p) == 2 {
		// A package and a version range: an olm.package.required.
		if pk, ok := p[0].(pkgPredicate); ok {
			if v, ok := p[1].(versionPredicate); ok {
				return fmt.Sprintf("package %s in range %s", string(pk), v.str)
			}
		}
	}
	if len(p) == 0 {
		return "any bundle"
	}
	return "(" + join(p, predicate.words, " and ") + ")"
}

func (p orPredicate) words() string {
	if len(p) == 0 {
		return "nothing (an empty any)"
	}
	return "(" + join(p, predicate.words, " or ") + ")"
}

func (p notPredicate) words() string { return "none of (" + join(p, predicate.words, ", ") + ")" }

func (p andPredicate) key() string { return "all(" + join(p, predicate.key, ",") + ")" }
func (p orPredicate) key() string  { return "any(" + join(p, predicate.key, ",") + ")" }
func (p notPredicate) key() string { return "not(" + join(p, predicate.key, ",") + ")" }

// maxConstraintSize is OLM's bound on an olm.constraint value.
const maxConstraintSize = 2 << 16

// compiler turns dependency properties into predicates, compiling each
// distinct CEL rule once.
type compiler struct {
	// costLimit is each CEL evaluation's (CELCostLimit when zero).
	costLimit uint64

	mu       sync.Mutex
	programs map[string]cel.Program
}

func (c *compiler) limit() uint64 {
	if c.costLimit == 0 {
		return CELCostLimit
	}
	return c.costLimit
}

// dependencies returns the predicates of a bundle's own properties that
// OLM reads as dependencies (olm.gvk.required, olm.package.required,
// olm.label.required, olm.constraint), each with its property. OLM also
// reads the translated copies of the first two, which only repeat them.
func (c *compiler) dependencies(props []Property) ([]predicate, []Property, error) {
	var preds []predicate
	var from []Property
	for _, p := range props {
		q, err := c.property(p)
		if err != nil {
			return nil, nil, err
		}
		if q != nil {
			preds = append(preds, q)
			from = append(from, p)
		}
	}
	return preds, from, nil
}

// property returns the predicate of one property, or nil when it is not a
// dependency.
func (c *compiler) property(p Property) (predicate, error) {
	switch p.Type {
	case property.TypeConstraint:
		if len(p.Value) > maxConstraintSize {
			return nil, fmt.Errorf("parse olm.constraint: olm.constraint value is greater than max constraint size %d bytes", maxConstraintSize)
		}
		var oc property.Constraint
		d := json.NewDecoder(bytes.NewReader(p.Value))
		d.DisallowUnknownFields()
		if err := d.Decode(&oc); err != nil {
			return nil, fmt.Errorf("parse olm.constraint: %v", err)
		}
		q, err := c.constraint(oc)
		if err != nil {
			return nil, fmt.Errorf("convert olm.constraint to resolver predicate: %v", err)
		}
		return q, nil
	case property.TypeGVKRequired:
		var g GVK
		if err := json.Unmarshal(p.Value, &g); err != nil {
			return nil, err
		}
		return gvkPredicate(g), nil
	case property.TypePackageRequired:
		var v struct {
			PackageName  string `json:"packageName"`
			VersionRange string `json:"versionRange"`
		}
		if err := json.Unmarshal(p.Value, &v); err != nil {
			return nil, err
		}
		return packageRequired(v.PackageName, v.VersionRange)
	case typeLabelRequired:
		var v struct {
			Label string `json:"label"`
		}
		if err := json.Unmarshal(p.Value, &v); err != nil {
			return nil, err
		}
		return labelPredicate(v.Label), nil
	}
	return nil, nil
}

func packageRequired(name, versionRange string) (predicate, error) {
	r, err := semver.ParseRange(versionRange)
	if err != nil {
		return nil, err
	}
	return andPredicate{pkgPredicate(name), versionPredicate{r: r, str: versionRange}}, nil
}

// errEmptyConstraint is an olm.constraint with none of its kinds.
var errEmptyConstraint = errors.New("constraint is empty")

// constraint converts an olm.constraint; the first kind set wins, in
// OLM's order: gvk, package, all, any, not, cel.
func (c *compiler) constraint(oc property.Constraint) (predicate, error) {
	switch {
	case oc.GVK != nil:
		return gvkPredicate{Group: oc.GVK.Group, Version: oc.GVK.Version, Kind: oc.GVK.Kind}, nil
	case oc.Package != nil:
		return packageRequired(oc.Package.PackageName, oc.Package.VersionRange)
	case oc.All != nil:
		subs, err := c.constraints(oc.All.Constraints)
		return andPredicate(subs), err
	case oc.Any != nil:
		subs, err := c.constraints(oc.Any.Constraints)
		return orPredicate(subs), err
	case oc.Not != nil:
		subs, err := c.constraints(oc.Not.Constraints)
		return notPredicate(subs), err
	case oc.Cel != nil:
		c.mu.Lock()
		prog, ok := c.programs[oc.Cel.Rule]
		c.mu.Unlock()
		if !ok {
			var err error
			if prog, err = compileCEL(oc.Cel.Rule, c.limit()); err != nil {
				return nil, err
			}
			c.mu.Lock()
			if c.programs == nil {
				c.programs = map[string]cel.Program{}
			}
			c.programs[oc.Cel.Rule] = prog
			c.mu.Unlock()
		}
		return &celPredicate{program: prog, rule: oc.Cel.Rule, failMsg: oc.FailureMessage, limit: c.limit()}, nil
	}
	return nil, errEmptyConstraint
}

func (c *compiler) constraints(ocs []property.Constraint) ([]predicate, error) {
	out := make([]predicate, len(ocs))
	for i, oc := range ocs {
		q, err := c.constraint(oc)
		if err != nil {
			return nil, err
		}
		out[i] = q
	}
	return out, nil
}
