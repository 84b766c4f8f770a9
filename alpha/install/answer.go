package install

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// MaxDepth is how many dependencies deep a tree goes below its top
// bundle. A bundle that deep whose own dependencies would go deeper is
// marked Continued, and it heads a tree of its own among the answer's
// Continuations, again at most MaxDepth deep. So an answer's size, in
// text or JSON, grows with its bundles whatever the depth of their
// dependencies (drawn as one tree, a chain of n dependencies takes
// indentation quadratic in n), and its JSON nests a bounded number of
// levels, which every JSON decoder reads (Python's stops at 1000, Go's
// at 10000). The real catalogs' dependencies go two deep.
const MaxDepth = 8

// maxValueDepth bounds how deep a property's value, as the catalog has
// it, nests in the answer: a deeper one (an olm.constraint nesting
// all, any and not hundreds deep) is given as a string holding its JSON
// text, so that the answer's nesting stays bounded too.
const maxValueDepth = 64

// Answer is what OLM does with a new Subscription.
type Answer struct {
	Subscription Subscription `json:"subscription"`
	Status       Status       `json:"status"`
	// Installs are the bundles OLM installs, the subscription's first.
	Installs []Install `json:"installs,omitempty"`
	// InstallsOmitted counts the bundles left out of Installs in a
	// report of many answers (Resolver.All), which keeps the first
	// MaxReportInstalls of each; the tree is left out then too.
	InstallsOmitted int `json:"installsOmitted,omitempty"`
	// Tree is who pulls in what: the subscription's bundle, each of its
	// dependencies with the bundle that satisfies it, and so on, to
	// MaxDepth.
	Tree *Node `json:"tree,omitempty"`
	// Continuations continue the tree where it stops (MaxDepth): each is
	// a bundle marked Continued, in the tree or in an earlier
	// continuation, with its dependencies, in the order the marks come.
	Continuations []*Node `json:"continuations,omitempty"`
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
	// Repeated marks a bundle shown in full earlier in the tree (or
	// marked Continued earlier).
	Repeated bool `json:"repeated,omitempty"`
	// Continued marks a bundle MaxDepth dependencies below the top of
	// its tree whose dependencies are shown in the answer's
	// Continuations, headed by the same bundle.
	Continued bool `json:"continued,omitempty"`
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
	// The tree is built in the order the text shows it: the tree to
	// MaxDepth, then each continuation, so that a bundle shown again
	// always refers to one shown above it.
	shown := map[*Entry]bool{}
	order := []*Entry{}
	var cut []*Entry
	type edge struct {
		d *Dependency
		p *Entry
	}
	edges := func(e *Entry) []edge {
		var out []edge
		for _, d := range res.deps[e].deps {
			for _, c := range d.Candidates {
				if in[c] {
					out = append(out, edge{d, c})
					break
				}
			}
		}
		return out
	}
	var node func(e *Entry, depth int) *Node
	full := func(e *Entry, depth int, es []edge) *Node {
		n := &Node{Install: install(e)}
		for _, x := range es {
			n.Dependencies = append(n.Dependencies, Edge{Property: boundedProperty(x.d.Property), Requirement: x.d.Words(), Provider: node(x.p, depth+1)})
		}
		return n
	}
	node = func(e *Entry, depth int) *Node {
		if shown[e] {
			return &Node{Install: install(e), Repeated: true}
		}
		shown[e] = true
		order = append(order, e)
		es := edges(e)
		if depth == MaxDepth && len(es) > 0 {
			cut = append(cut, e)
			return &Node{Install: install(e), Continued: true}
		}
		return full(e, depth, es)
	}
	a.Tree = node(root, 0)
	for i := 0; i < len(cut); i++ { // cut grows as the continuations are built
		a.Continuations = append(a.Continuations, full(cut[i], 0, edges(cut[i])))
	}
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
		if v.entry != nil { // an installed CSV no Subscription names
			return fmt.Sprintf("%s is installed and no Subscription names it: OLM keeps it as it is", v.entry.Name()), 2
		}
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
		if e.Catalog.virtual {
			groups = append(groups, list(run)+" (installed)")
		} else {
			groups = append(groups, list(run)+" (channel "+e.Channel+" of catalog "+e.Catalog.Display()+")")
		}
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

// boundedProperty is p, its value given as a string of its JSON text
// when it nests deeper than maxValueDepth.
func boundedProperty(p Property) Property {
	if jsonDepth(p.Value) > maxValueDepth {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)        // as the CLI and the server write JSON
		_ = enc.Encode(string(p.Value)) // a string always encodes
		p.Value = bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	}
	return p
}

// jsonDepth is how deep JSON text nests objects and arrays.
func jsonDepth(b []byte) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// WriteText writes the answer for people: the tree of what gets
// installed, or why nothing can be. A tree deeper than MaxDepth goes on
// in sections below it, one for each continuation, headed by the bundle
// whose line says "(continued below)": the text grows with the bundles,
// not with the square of their depth. It is written as it is made.
func (a *Answer) WriteText(w io.Writer) error {
	b := bufio.NewWriterSize(w, 64<<10)
	s := a.Subscription
	fmt.Fprintf(b, "A subscription to package %s", s.Package)
	if s.Channel != "" {
		fmt.Fprintf(b, ", channel %s", s.Channel)
	}
	if s.StartingCSV != "" {
		fmt.Fprintf(b, ", starting at %s", s.StartingCSV)
	}
	fmt.Fprintf(b, ", from catalog %s", s.Catalog)
	switch a.Status {
	case Installable:
		n := len(a.Installs)
		fmt.Fprintf(b, " installs %d bundle%s:\n\n", n, plural(n))
		writeNode(b, a.Tree, "", "", "")
		for _, c := range a.Continuations {
			b.WriteString("\n")
			writeNode(b, c, "", "", " (continued from above)")
		}
	case Unsatisfiable:
		b.WriteString(" cannot be installed:\n")
		for _, r := range a.Reasons {
			fmt.Fprintf(b, "  - %s\n", r)
		}
		b.WriteString("\nOLM's constraints that cannot hold together:\n")
		for _, c := range a.Constraints {
			fmt.Fprintf(b, "  - %s\n", c)
		}
	case Failed:
		fmt.Fprintf(b, " fails: OLM stops before it solves:\n  %s\n", strings.ReplaceAll(a.Error, "\n", "\n  "))
	case Undecided:
		fmt.Fprintf(b, " is undecided: %s\n", a.Error)
		if len(a.Constraints) > 0 {
			b.WriteString("\nThe constraints with the most choices:\n")
			for _, c := range a.Constraints {
				fmt.Fprintf(b, "  - %s\n", c)
			}
		}
	}
	return b.Flush()
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

// writeNode draws a tree: the bundle (and note, for the top of a
// continuation), then each dependency, its provider beneath it.
func writeNode(b *bufio.Writer, n *Node, first, rest, note string) {
	b.WriteString(first)
	b.WriteString(n.Install.label())
	switch {
	case n.Repeated:
		b.WriteString(" (see above)")
	case n.Continued:
		b.WriteString(" (continued below)")
	}
	b.WriteString(note)
	b.WriteString("\n")
	for i, d := range n.Dependencies {
		last := i == len(n.Dependencies)-1
		branch, indent := "├── ", "│   "
		if last {
			branch, indent = "└── ", "    "
		}
		fmt.Fprintf(b, "%s%s%s: %s\n", rest, branch, d.Property.Type, d.Requirement)
		writeNode(b, d.Provider, rest+indent+"└── ", rest+indent+"    ", "")
	}
}
