package model

import (
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
)

// graph adds a problem of upstream's "invalid index" tree.
func (b *build) graph(rule Rule, pkg *Package, ch *Channel, bd *Bundle, format string, args ...any) {
	p := Problem{Rule: rule, Severity: SeverityError, Message: fmt.Sprintf(format, args...), Package: pkg.Name,
		File: pkg.Source.Path, Line: pkg.Source.Line}
	if ch != nil {
		p.Channel, p.channelNode = ch.Name, true
		p.File, p.Line = ch.Source.Path, ch.Source.Line
	}
	if bd != nil {
		p.Bundle, p.bundleNode = bd.Name, true
		p.File, p.Line = bd.Source.Path, bd.Source.Line
	}
	b.out = append(b.out, p)
}

// validate checks the graph rules, in upstream's order within each package.
// They need all of a package's blobs: for a package some of whose blobs
// could not be read, they would only report what is missing, so they are
// skipped.
func (b *build) validate() {
	for _, name := range sortedPackageNames(b.m) {
		pkg := b.m[name]
		if b.ambiguous[name] || b.unchecked(name) {
			continue
		}
		if pkg.DefaultChannel == nil {
			b.graph(RuleDefaultChannel, pkg, nil, nil, "default channel must be set")
		}
		if len(pkg.Channels) == 0 {
			b.graph(RuleNoChannels, pkg, nil, nil, "package must contain at least one channel")
		}
		for _, ch := range sortedChannels(pkg) {
			b.validateChannel(pkg, ch)
		}
		b.uniqueVersions(pkg)
		if pkg.Deprecation != nil && pkg.Deprecation.Message == "" {
			b.graph(RuleDeprecationMessage, pkg, nil, nil, "invalid deprecation: message must be set")
		}
	}
}

func (b *build) validateChannel(pkg *Package, ch *Channel) {
	if b.missingDefault[ch] {
		b.unknownDefault(pkg, ch)
		return
	}
	if len(ch.Bundles) == 0 {
		b.graph(RuleEmptyChannel, pkg, ch, nil, "channel must contain at least one bundle")
	} else if rule, err := replacesChain(ch); err != nil {
		b.graph(rule, pkg, ch, nil, "%s", err)
	}
	for _, bd := range sortedBundles(ch) {
		if !bd.HasBlob {
			continue // reported as a channel entry without a bundle
		}
		if bd.Name == "" {
			b.graph(RuleBundleName, pkg, ch, bd, "name must be set")
		}
		if n := bd.normalizedName(); bd.Name != n {
			b.graph(RuleBundleName, pkg, ch, bd, "name %q does not match normalized name %q", bd.Name, n)
		}
		for i, skip := range bd.Skips {
			if skip == "" {
				b.graph(RuleSkips, pkg, ch, bd, "skip[%d] is empty", i)
			}
		}
		if bd.SkipRange != "" {
			if _, err := semver.ParseRange(bd.SkipRange); err != nil {
				b.graph(RuleSkipRange, pkg, ch, bd, "invalid skipRange %q: %v", bd.SkipRange, err)
			}
		}
		if bd.Image == "" && bd.ObjectCount == 0 {
			b.graph(RuleBundleImage, pkg, ch, bd, "bundle image must be set")
		}
		if bd.Deprecation != nil && bd.Deprecation.Message == "" {
			b.graph(RuleDeprecationMessage, pkg, ch, bd, "invalid deprecation: message must be set")
		}
		if len(bd.Version.Build) > 0 && len(bd.Release) > 0 {
			b.graph(RuleVersion, pkg, ch, bd, "cannot use build metadata in version with a release version")
		}
	}
	if ch.Deprecation != nil && ch.Deprecation.Message == "" {
		b.graph(RuleDeprecationMessage, pkg, ch, nil, "invalid deprecation: message must be set")
	}
}

// unknownDefault reports a default channel that names no channel of the
// package. Upstream reports the empty channel it makes for it.
func (b *build) unknownDefault(pkg *Package, def *Channel) {
	var names []string
	for _, ch := range sortedChannels(pkg) {
		if ch != def {
			names = append(names, fmt.Sprintf("%q", ch.Name))
		}
	}
	msg := fmt.Sprintf("default channel %q names no channel of the package, which has none", def.Name)
	if len(names) > 0 {
		msg = fmt.Sprintf("default channel %q names no channel of the package; its channels: %s", def.Name, strings.Join(names, ", "))
	}
	b.out = append(b.out, Problem{Rule: RuleUnknownDefault, Severity: SeverityError, Message: msg,
		Package: pkg.Name, File: pkg.Source.Path, Line: pkg.Source.Line,
		upstream: "channel must contain at least one bundle", upstreamChannel: def.Name})
}

// replacesChain checks upstream's rules for a channel's upgrade graph:
// exactly one head; from the head, the replaces chain reaches every bundle
// that no entry skips, without a cycle; the chain may end at a bundle that
// is not in the channel.
func replacesChain(ch *Channel) (Rule, error) {
	head, err := ch.Head()
	if err != nil {
		return RuleChannelHead, err
	}
	skipped := map[string]bool{}
	for _, bd := range ch.Bundles {
		for _, s := range bd.Skips {
			skipped[s] = true
		}
	}
	chain := []string{head.Name}
	inChain := map[string]bool{head.Name: true}
	for cur := head; cur != nil; {
		// A replaces edge to a skipped bundle is disregarded.
		if skipped[cur.Replaces] {
			break
		}
		if inChain[cur.Replaces] {
			// Upstream prints the chain from the bundle that closes the
			// cycle's target onwards.
			start := 0
			for i, n := range chain {
				if n == cur.Replaces {
					start = i
					break
				}
			}
			cycle := append(append([]string{}, chain[start:]...), cur.Replaces)
			return RuleReplacesCycle, fmt.Errorf("detected cycle in replaces chain of upgrade graph: %s", strings.Join(cycle, " -> "))
		}
		chain = append(chain, cur.Replaces)
		inChain[cur.Replaces] = true
		cur = ch.Bundles[cur.Replaces]
	}
	var stranded []string
	for name := range ch.Bundles {
		if !inChain[name] && !skipped[name] {
			stranded = append(stranded, name)
		}
	}
	if len(stranded) > 0 {
		sort.Strings(stranded)
		return RuleStranded, fmt.Errorf("channel contains one or more stranded bundles: %s", strings.Join(stranded, ", "))
	}
	return "", nil
}

// uniqueVersions reports bundles of a package that share a version.
func (b *build) uniqueVersions(pkg *Package) {
	byVersion := map[string]map[string]bool{}
	for _, ch := range pkg.Channels {
		for _, bd := range ch.Bundles {
			if !bd.HasBlob {
				continue
			}
			v := bd.VersionString()
			if byVersion[v] == nil {
				byVersion[v] = map[string]bool{}
			}
			byVersion[v][bd.Name] = true
		}
	}
	versions := make([]string, 0, len(byVersion))
	for v := range byVersion {
		versions = append(versions, v)
	}
	sort.Strings(versions)
	var dups []string
	for _, v := range versions {
		if len(byVersion[v]) > 1 {
			names := make([]string, 0, len(byVersion[v]))
			for n := range byVersion[v] {
				names = append(names, n)
			}
			sort.Strings(names)
			dups = append(dups, fmt.Sprintf("{%s: [%s]}", v, strings.Join(names, ", ")))
		}
	}
	if len(dups) > 0 {
		b.graph(RuleDuplicateVersion, pkg, nil, nil, "duplicate versions found in bundles: [%s]", strings.Join(dups, " "))
	}
}

// sorted orders the problems: load problems by file and line, then the
// graph problems in the order the validation found them.
func (b *build) sorted() Problems {
	out := append(Problems{}, b.problems...)
	out = append(out, b.out...)
	sort.SliceStable(out, func(i, j int) bool {
		pi, pj := out[i], out[j]
		if pi.load != pj.load {
			return pi.load
		}
		if !pi.load {
			return false
		}
		if pi.File != pj.File {
			return pi.File < pj.File
		}
		return pi.Line < pj.Line
	})
	return out
}
