package model

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/fastopm/fastopm/alpha/declcfg"
)

// Severity says whether a problem fails validation.
type Severity string

// Severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Rule names a validation rule. Rules are stable identifiers for tools.
type Rule string

// The rules. Load rules are the ones upstream opm checks while it builds the
// model and reports one at a time; graph rules are the ones it collects into
// its "invalid index" tree.
const (
	RuleParse              Rule = "parse"                 // a file or blob cannot be read or decoded
	RuleSchema             Rule = "schema"                // the blob breaks the CUE schema
	RulePackageName        Rule = "package-name"          // package without a name, or not a DNS-1123 label
	RuleDuplicatePackage   Rule = "duplicate-package"     // two olm.package blobs with one name
	RuleUnknownPackage     Rule = "unknown-package"       // channel, bundle or deprecation of an undeclared package
	RuleChannelName        Rule = "channel-name"          // channel without a name
	RuleDuplicateChannel   Rule = "duplicate-channel"     // two channels with one name in a package
	RuleDuplicateEntry     Rule = "duplicate-entry"       // a bundle listed twice in a channel
	RuleBundlePackage      Rule = "bundle-package"        // bundle without package, or olm.package property disagreeing
	RuleDuplicateBundle    Rule = "duplicate-bundle"      // two bundles with one name in a package
	RuleProperty           Rule = "property"              // a property value that does not decode for its type
	RulePackageProperty    Rule = "package-property"      // not exactly one olm.package property
	RuleImage              Rule = "image"                 // image or related image is not a valid pull spec
	RuleVersion            Rule = "version"               // bundle version is not semver
	RuleBundleNotInChannel Rule = "bundle-not-in-channel" // an olm.bundle no channel lists
	RuleEntryWithoutBundle Rule = "entry-without-bundle"  // a channel entry with no olm.bundle blob
	RuleDeprecation        Rule = "deprecation"           // bad olm.deprecations blob or reference
	RuleDefaultChannel     Rule = "default-channel"       // default channel unset
	RuleNoChannels         Rule = "no-channels"           // package without channels
	RuleEmptyChannel       Rule = "empty-channel"         // channel without bundles
	RuleChannelHead        Rule = "channel-head"          // no head, or several
	RuleReplacesCycle      Rule = "replaces-cycle"        // cycle in the replaces chain
	RuleStranded           Rule = "stranded-bundles"      // bundles the head cannot reach
	RuleDuplicateVersion   Rule = "duplicate-version"     // two bundles with one version in a package
	RuleSkips              Rule = "skips"                 // an empty skips entry
	RuleSkipRange          Rule = "skip-range"            // skipRange is not a semver range
	RuleBundleImage        Rule = "bundle-image"          // no image and no bundle objects
	RuleDeprecationMessage Rule = "deprecation-message"   // deprecation without a message
	RuleBundleObject       Rule = "bundle-object"         // an olm.bundle.object that cannot be decoded
	RuleBundleName         Rule = "bundle-name"           // a bundle without a name, or not the normalized name of its release
)

// Rules that upstream does not have: what it reports as another problem,
// or not at all.
const (
	RuleReadElsewhere  Rule = "read-differently"        // a file other tools read differently (a JSON stream after a byte order mark)
	RuleUnknownDefault Rule = "unknown-default-channel" // default channel names no channel of the package (upstream: an empty channel)
)

// Problem is one finding about a catalog.
type Problem struct {
	Rule     Rule     `json:"rule"`
	Severity Severity `json:"severity"`
	// Message is upstream opm's wording where upstream has the rule.
	Message string `json:"message"`
	Package string `json:"package,omitempty"`
	Channel string `json:"channel,omitempty"`
	Bundle  string `json:"bundle,omitempty"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	// Field is the path of the field at fault in the blob (schema
	// problems), e.g. "icon.base64data".
	Field string `json:"field,omitempty"`
	// Unchecked are the packages a file or blob that cannot be read keeps
	// from being checked whole (parse problems): the rules that need all
	// of a package's blobs are skipped for them.
	Unchecked []string `json:"uncheckedPackages,omitempty"`

	// load marks the problems upstream reports on their own, before it
	// builds the graph; the others belong to its "invalid index" tree.
	load bool
	// node is where a graph problem hangs in the tree.
	channelNode, bundleNode bool
	// upstream is upstream's words for a problem it reports as another
	// one, under the channel upstreamChannel (unknown-default-channel:
	// an empty channel).
	upstream, upstreamChannel string
}

func (p Problem) String() string {
	if p.File == "" {
		return p.Message
	}
	return fmt.Sprintf("%s (%s)", p.Message, Source{p.File, p.Line})
}

// Problems is a list of findings, ordered for output.
type Problems []Problem

// Errors returns the problems of severity error.
func (ps Problems) Errors() Problems {
	var out Problems
	for _, p := range ps {
		if p.Severity == SeverityError {
			out = append(out, p)
		}
	}
	return out
}

// Warnings returns the problems of severity warning.
func (ps Problems) Warnings() Problems {
	var out Problems
	for _, p := range ps {
		if p.Severity == SeverityWarning {
			out = append(out, p)
		}
	}
	return out
}

// Err turns the error problems into one error in upstream's format: a
// single load problem is its bare message, exactly as upstream prints it;
// anything else is a tree rooted at "invalid index". nil when there is no
// error.
func (ps Problems) Err() error {
	errs := ps.Errors()
	if len(errs) == 0 {
		return nil
	}
	if len(errs) == 1 && errs[0].load {
		return &ProblemError{Problem: errs[0]}
	}
	return ps.tree(true)
}

// Report is the error problems as people read them on a terminal: a
// single problem is its message; several are upstream's tree, with each
// problem in this project's words (Err keeps upstream's where it has
// them). It ends with a line break; it is empty when there is no error.
func (ps Problems) Report() string {
	errs := ps.Errors()
	switch {
	case len(errs) == 0:
		return ""
	case len(errs) == 1 && errs[0].load && len(errs[0].Unchecked) == 0:
		return errs[0].Message + "\n"
	}
	return ps.tree(false).Error() + "\n"
}

// maxLoadShown is how many files that cannot be read the report tree
// lists before it counts the others.
const maxLoadShown = 20

// ProblemError is a single problem as an error.
type ProblemError struct{ Problem Problem }

func (e *ProblemError) Error() string { return e.Problem.Message }

// tree arranges the error problems like upstream's validation tree:
// problems of no particular package first, then the packages that could
// not be checked whole, then one node per package (sorted), with its
// channels and bundles below it. upstream chooses upstream's words where
// a problem has them.
func (ps Problems) tree(upstream bool) *ValidationError {
	root := &ValidationError{Message: "invalid index"}
	pkgNodes := map[string]*ValidationError{}
	var pkgNames []string
	pkgNode := func(name string) *ValidationError {
		n, ok := pkgNodes[name]
		if !ok {
			n = &ValidationError{Message: fmt.Sprintf("invalid package %q", name)}
			pkgNodes[name] = n
			pkgNames = append(pkgNames, name)
		}
		return n
	}
	child := func(parent *ValidationError, msg string) *ValidationError {
		for _, e := range parent.Errs {
			if ve, ok := e.(*ValidationError); ok && ve.Message == msg {
				return ve
			}
		}
		ve := &ValidationError{Message: msg}
		parent.Errs = append(parent.Errs, ve)
		return ve
	}
	unchecked := &ValidationError{Message: "packages not fully checked, because a file of theirs cannot be read"}
	loadShown := 0
	uncheckedFiles := map[string][]string{}
	var uncheckedNames []string
	for _, p := range ps.Errors() {
		for _, name := range p.Unchecked {
			if uncheckedFiles[name] == nil {
				uncheckedNames = append(uncheckedNames, name)
			}
			if fs := uncheckedFiles[name]; len(fs) == 0 || fs[len(fs)-1] != p.File {
				uncheckedFiles[name] = append(fs, p.File)
			}
		}
		channel, channelNode := p.Channel, p.channelNode
		if upstream && p.upstream != "" {
			p.Message = p.upstream
			channel, channelNode = p.upstreamChannel, true
		}
		perr := &ProblemError{Problem: p}
		if p.load && p.Rule == RuleParse {
			// A directory that is not a catalog (a wrong argument) has
			// a problem per file: the first ones say what is wrong.
			if loadShown++; loadShown > maxLoadShown {
				continue
			}
		}
		if p.load || p.Package == "" {
			root.Errs = append(root.Errs, perr)
			continue
		}
		n := pkgNode(p.Package)
		if channelNode || p.bundleNode {
			n = child(n, fmt.Sprintf("invalid channel %q", channel))
		}
		if p.bundleNode {
			n = child(n, fmt.Sprintf("invalid bundle %q", p.Bundle))
		}
		n.Errs = append(n.Errs, perr)
	}
	if hidden := loadShown - maxLoadShown; hidden > 0 {
		more := fmt.Sprintf("and %d more files that cannot be read", hidden)
		if !upstream {
			// Report is opm validate's, whose -o json lists them all;
			// Err is also serve's, filter's and install's, which have none.
			more += " (-o json lists every problem)"
		}
		root.Errs = append(root.Errs, errors.New(more))
	}
	if len(uncheckedNames) > 0 {
		sort.Strings(uncheckedNames)
		for _, name := range uncheckedNames {
			unchecked.Errs = append(unchecked.Errs, fmt.Errorf("package %q (%s)", name, strings.Join(uncheckedFiles[name], ", ")))
		}
		root.Errs = append(root.Errs, unchecked)
	}
	sort.Strings(pkgNames)
	for _, name := range pkgNames {
		root.Errs = append(root.Errs, pkgNodes[name])
	}
	return root
}

// ValidationError is a node of upstream's "invalid index" error tree. It
// prints as upstream prints it and unwraps to its children.
type ValidationError struct {
	Message string
	Errs    []error
}

func (v *ValidationError) Error() string {
	var b strings.Builder
	v.write(&b, "", "")
	return strings.TrimSpace(b.String())
}

// Unwrap returns the node's children for errors.Is and errors.As.
func (v *ValidationError) Unwrap() []error { return v.Errs }

// write prints the node: head is the prefix of its own line, indent the
// prefix of its children's lines.
func (v *ValidationError) write(b *strings.Builder, head, indent string) {
	b.WriteString(head)
	b.WriteString(v.Message)
	if len(v.Errs) == 0 {
		b.WriteString("\n")
		return
	}
	b.WriteString(":\n")
	for i, e := range v.Errs {
		last := i == len(v.Errs)-1
		branch, cont := "├── ", "│   "
		if last {
			branch, cont = "└── ", "    "
		}
		var ve *ValidationError
		if errors.As(e, &ve) && ve == e {
			ve.write(b, indent+branch, indent+cont)
			continue
		}
		b.WriteString(indent + branch + e.Error() + "\n")
	}
}

// ParseProblem reports a file or blob the loader could not read.
func ParseProblem(e *declcfg.Error) Problem {
	return Problem{Rule: RuleParse, Severity: SeverityError, load: true, Message: e.Error(),
		File: e.Path, Line: e.Line, Column: e.Col}
}

// SchemaProblem marks p as a problem reported on its own line (like
// upstream's load errors) rather than inside a package's tree.
func SchemaProblem(p Problem) Problem {
	p.load = true
	return p
}

// SortByPosition sorts problems by file, line and column, stably.
func SortByPosition(ps Problems) Problems {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	return ps
}
