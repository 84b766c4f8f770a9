package substitutes

import (
	"errors"
	"strings"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/model"
)

// validate checks cfg with the model's rules and returns the error
// upstream's ConvertToModel returns for it: the first load problem in
// upstream's order of checks (packages, channels, bundles, channel entries
// without a bundle, deprecations, each in config order), or else the graph
// problems as upstream's "invalid index" tree. nil when cfg is valid.
func validate(cfg *declcfg.DeclarativeConfig) error {
	bld := model.NewBuilder()
	n := 0
	add := func(schema, pkg, name string, v any) {
		n++
		bld.AddBlob(&declcfg.Blob{
			Meta: declcfg.Meta{Schema: schema, Package: pkg, Name: name, JSON: declcfg.AppendCompactJSON(nil, v)},
			// One line per blob, in upstream's order; no path, as the
			// blobs come from the template, not from files.
			Index: n, Line: n,
		})
	}
	for i := range cfg.Packages {
		p := &cfg.Packages[i]
		add(declcfg.SchemaPackage, p.Name, p.Name, p)
	}
	for i := range cfg.Channels {
		c := &cfg.Channels[i]
		add(declcfg.SchemaChannel, c.Package, c.Name, c)
	}
	for i := range cfg.Bundles {
		b := &cfg.Bundles[i]
		add(declcfg.SchemaBundle, b.Package, b.Name, b)
	}
	afterBundles := n
	for i := range cfg.Deprecations {
		d := &cfg.Deprecations[i]
		add(declcfg.SchemaDeprecations, d.Package, "", d)
	}
	_, problems := bld.Build()
	errs := problems.Errors()

	// rank orders load problems as upstream meets them. Within a bundle
	// upstream checks its channels last; the check for channel entries
	// without a bundle comes after all bundles.
	rank := func(p model.Problem) int {
		switch p.Rule {
		case model.RuleEntryWithoutBundle:
			return afterBundles*3 + 2
		case model.RuleBundleNotInChannel:
			return p.Line*3 + 1
		}
		return p.Line * 3
	}
	var (
		first *model.Problem
		graph model.Problems
	)
	for i, p := range errs {
		if !isLoadProblem(p) {
			graph = append(graph, p)
			continue
		}
		if first == nil || rank(p) < rank(*first) {
			first = &errs[i]
		}
	}
	if first != nil {
		// Without a file, the model's "<file:line>: " prefix is empty.
		return errors.New(strings.TrimPrefix(first.Message, ": "))
	}
	return graph.Err()
}

// isLoadProblem reports whether p is one of the problems upstream reports on
// its own, before it validates the graph: a single one of those is its own
// error, a graph problem is a tree.
func isLoadProblem(p model.Problem) bool {
	// Not errors.As: a tree unwraps to the problems in it.
	_, ok := model.Problems{p}.Err().(*model.ProblemError)
	return ok
}
