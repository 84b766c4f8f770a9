package install

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Answer is what OLM does with a new Subscription.
type Answer struct {
	Subscription Subscription `json:"subscription"`
	Status       Status       `json:"status"`
	// Installs are the bundles OLM installs, the subscription's first.
	Installs []Install `json:"installs,omitempty"`
	// Tree is who pulls in what: the subscription's bundle, each of its
	// dependencies with the bundle that satisfies it, and so on.
	Tree *Node `json:"tree,omitempty"`
	// Reasons say, in words, why nothing can be installed: each
	// constraint of a minimal set that cannot hold together.
	Reasons []string `json:"reasons,omitempty"`
	// Constraints are that minimal set in OLM's words, as its
	// "constraints not satisfiable" message lists them.
	Constraints []string `json:"constraints,omitempty"`
	// Error is why OLM fails before it solves.
	Error string `json:"error,omitempty"`
}

// Install is a bundle OLM installs.
type Install struct {
	Bundle  string `json:"bundle"`
	Package string `json:"package"`
	Channel string `json:"channel"`
	Version string `json:"version,omitempty"`
	Catalog string `json:"catalog"`
	Image   string `json:"image,omitempty"`
}

// Node is a bundle of the tree.
type Node struct {
	Install
	// Dependencies are the bundle's dependencies, each with the bundle
	// that satisfies it.
	Dependencies []Edge `json:"dependencies,omitempty"`
	// Repeated marks a bundle shown in full earlier in the tree.
	Repeated bool `json:"repeated,omitempty"`
}

// Edge is a dependency and the bundle chosen for it.
type Edge struct {
	Property    Property `json:"property"`
	Requirement string   `json:"requirement"`
	Provider    *Node    `json:"provider"`
}

func install(e *Entry) Install {
	return Install{Bundle: e.Name(), Package: e.Package(), Channel: e.Channel, Version: e.Bundle.Version,
		Catalog: e.Catalog.Name, Image: e.Bundle.Image}
}

func (a *Answer) fail(err error) {
	a.Status = Failed
	a.Error = err.Error()
}

// installable fills in a solution: the bundles chosen, the subscription's
// first, and the tree.
func (a *Answer) installable(res *resolution, chosen []*Entry, cands []*Entry) {
	a.Status = Installable
	in := map[*Entry]bool{}
	for _, e := range chosen {
		in[e] = true
	}
	var root *Entry
	for _, c := range cands {
		if in[c] {
			root = c
			break
		}
	}
	if root == nil {
		// Nothing of the subscription's is installed: a solution OLM would
		// not find (the subscription needs a candidate).
		a.fail(fmt.Errorf("internal error: the solution installs none of the subscription's bundles"))
		return
	}
	shown := map[*Entry]bool{}
	order := []*Entry{}
	var node func(e *Entry) *Node
	node = func(e *Entry) *Node {
		n := &Node{Install: install(e)}
		if shown[e] {
			n.Repeated = true
			return n
		}
		shown[e] = true
		order = append(order, e)
		for _, d := range res.deps[e].deps {
			var p *Entry
			for _, c := range d.Candidates {
				if in[c] {
					p = c
					break
				}
			}
			if p == nil {
				continue
			}
			n.Dependencies = append(n.Dependencies, Edge{Property: d.Property, Requirement: d.Words(), Provider: node(p)})
		}
		return n
	}
	a.Tree = node(root)
	// Anything chosen that the tree does not reach (the solver keeps no
	// such bundle, but say so if it did).
	for _, e := range chosen {
		if !shown[e] {
			order = append(order, e)
		}
	}
	for _, e := range order {
		a.Installs = append(a.Installs, install(e))
	}
}

// unsatisfiable fills in why no solution exists; the error is the
// question's, stopped (x).
func (a *Answer) unsatisfiable(x *eval, p *problem, core []applied) error {
	a.Status = Unsatisfiable
	minimal, err := minimalCore(x, p)
	if err != nil {
		return err
	}
	if minimal == nil {
		// The constraints can hold together, but not among the bundles
		// OLM's search tries: report what gini blamed.
		minimal = core
	}
	type ranked struct {
		class, v int
		text     string
	}
	var rs []ranked
	for _, ap := range minimal {
		a.Constraints = append(a.Constraints, ap.c.text(p, ap.v))
		if w, class := reason(p, ap); w != "" {
			rs = append(rs, ranked{class, ap.v, w})
		}
	}
	// The dependencies nothing satisfies first (the usual cause), then
	// deprecated bundles, the invariants, the other dependencies, and the
	// subscription's own last. Within a kind, in the order
	// the bundles were met, which follows OLM's preference.
	slices.SortStableFunc(rs, func(x, y ranked) int {
		if x.class != y.class {
			return x.class - y.class
		}
		return x.v - y.v
	})
	for _, r := range rs {
		// A bundle in two channels is two variables with the same words.
		if !slices.Contains(a.Reasons, r.text) {
			a.Reasons = append(a.Reasons, r.text)
		}
	}
	if len(a.Reasons) == 0 {
		a.Reasons = []string{notSatisfiable(p, minimal)}
	}
	return nil
}

// reason is a constraint of a minimal unsatisfiable set in words, with
// its rank among the reasons, or "" for one that only states the question
// (the subscription exists).
func reason(p *problem, ap applied) (string, int) {
	v, c := p.vars[ap.v], ap.c
	switch c.kind {
	case mandatory:
		return "", 0
	case prohibited:
		if v.entry != nil {
			return fmt.Sprintf("%s is deprecated (an olm.deprecated property): OLM never installs it", v.entry.Name()), 1
		}
		if c.words != "" {
			return c.words, 4
		}
		return c.msg, 4 // an invalid subscription: OLM's reason
	case dependency:
		if c.dep == nil { // the subscription's
			if len(c.ids) == 0 {
				return c.msg, 4
			}
			return subscriptionReason + names(p, c.ids), 4
		}
		what := c.dep.Words()
		if len(c.ids) == 0 {
			verb := "meets it"
			if _, ok := c.dep.pred.(gvkPredicate); ok {
				verb = "provides it"
			}
			return fmt.Sprintf("%s requires %s; no bundle in the catalogs %s", v.entry.Name(), what, verb), 0
		}
		return fmt.Sprintf("%s requires %s, which only %s can satisfy", v.entry.Name(), what, names(p, c.ids)), 3
	case atMost:
		return fmt.Sprintf("at most one bundle may provide %s, and %s would", c.invariant, names(p, c.ids)), 2
	case conflict:
		return c.text(p, ap.v), 2
	}
	return "", 0
}

// subscriptionReason begins the reason that lists the subscription's
// candidates.
const subscriptionReason = "the subscription can install only "

// names lists bundles by name, in order, saying once for each run of
// bundles of one channel where they are.
func names(p *problem, ids []int) string {
	var uniq []int
	for _, id := range ids {
		if !slices.Contains(uniq, id) {
			uniq = append(uniq, id)
		}
	}
	var groups []string
	for i := 0; i < len(uniq); {
		e := p.vars[uniq[i]].entry
		if e == nil {
			groups = append(groups, p.vars[uniq[i]].id)
			i++
			continue
		}
		var run []string
		j := i
		for ; j < len(uniq); j++ {
			f := p.vars[uniq[j]].entry
			if f == nil || f.Catalog != e.Catalog || f.Channel != e.Channel {
				break
			}
			run = append(run, f.Name())
		}
		groups = append(groups, list(run)+" (channel "+e.Channel+" of catalog "+e.Catalog.Name+")")
		i = j
	}
	if len(groups) == 1 {
		return groups[0]
	}
	return strings.Join(groups, "; ")
}

// list joins words as a sentence does: "a", "a and b", "a, b and c".
func list(s []string) string {
	switch len(s) {
	case 0:
		return "nothing"
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// WriteText writes the answer for people: the tree of what gets
// installed, or why nothing can be.
func (a *Answer) WriteText(w io.Writer) error {
	var b strings.Builder
	s := a.Subscription
	fmt.Fprintf(&b, "A subscription to package %s", s.Package)
	if s.Channel != "" {
		fmt.Fprintf(&b, ", channel %s", s.Channel)
	}
	if s.StartingCSV != "" {
		fmt.Fprintf(&b, ", starting at %s", s.StartingCSV)
	}
	fmt.Fprintf(&b, ", from catalog %s", s.Catalog)
	switch a.Status {
	case Installable:
		n := len(a.Installs)
		fmt.Fprintf(&b, " installs %d bundle%s:\n\n", n, plural(n))
		writeNode(&b, a.Tree, "", "")
	case Unsatisfiable:
		b.WriteString(" cannot be installed:\n")
		for _, r := range a.Reasons {
			fmt.Fprintf(&b, "  - %s\n", r)
		}
		b.WriteString("\nOLM's constraints that cannot hold together:\n")
		for _, c := range a.Constraints {
			fmt.Fprintf(&b, "  - %s\n", c)
		}
	case Failed:
		fmt.Fprintf(&b, " fails: OLM stops before it solves:\n  %s\n", strings.ReplaceAll(a.Error, "\n", "\n  "))
	case Undecided:
		fmt.Fprintf(&b, " is undecided: %s\n", a.Error)
		if len(a.Constraints) > 0 {
			b.WriteString("\nThe constraints with the most choices:\n")
			for _, c := range a.Constraints {
				fmt.Fprintf(&b, "  - %s\n", c)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func (in Install) label() string {
	s := in.Bundle + " (" + in.Package
	if in.Version != "" {
		s += " " + in.Version
	}
	return s + ", channel " + in.Channel + ", catalog " + in.Catalog + ")"
}

// writeNode draws the tree: the bundle, then each dependency, its
// provider beneath it.
func writeNode(b *strings.Builder, n *Node, first, rest string) {
	b.WriteString(first + n.Install.label())
	if n.Repeated {
		b.WriteString(" (see above)")
	}
	b.WriteString("\n")
	for i, d := range n.Dependencies {
		last := i == len(n.Dependencies)-1
		branch, indent := "├── ", "│   "
		if last {
			branch, indent = "└── ", "    "
		}
		fmt.Fprintf(b, "%s%s%s: %s\n", rest, branch, d.Property.Type, d.Requirement)
		writeNode(b, d.Provider, rest+indent+"└── ", rest+indent+"    ")
	}
}
