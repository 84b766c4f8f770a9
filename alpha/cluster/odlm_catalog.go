package cluster

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// odlmCatalogChoice is what ODLM's GetCatalogSourceAndChannelFromPackage
// answers for a registry entry, and how (in words, for the answer).
type odlmCatalogChoice struct {
	source, sourceNamespace, channel string
	how                              string
}

// odlmCandidate is ODLM's CatalogSource of the sort
// (controllers/operator/manager.go, sortableCatalogSource).
type odlmCandidate struct {
	name, namespace string
	priority        int
}

// chooseCatalog follows GetCatalogSourceAndChannelFromPackage
// (controllers/operator/manager.go) at ODLMCommit, the PackageManifests
// being cat's: entry's source and channel when no catalog of ns offers the
// package; with sourceName and sourceNamespace given, that catalog with
// the channel or, failing it, the highest fallback channel there;
// without, the best catalog (after the excluded ones) offering the
// channel or, failing every catalog, the highest fallback channel any
// offers. An empty source in the answer is ODLM's "no catalog".
// The CatalogSource's priority is read as if ODLM had the permission to
// get it (without it, ODLM uses 0).
func chooseCatalog(cat PackageCatalogs, op *ODLMOperator, registryNs, odlmCatalog, odlmCatalogNs string, excluded []string) odlmCatalogChoice {
	ns, pkg, channel := op.Namespace, op.PackageName, op.Channel
	var pms []PackageCatalog
	if cat != nil {
		pms = cat.PackageCatalogs(ns, pkg)
	}
	if len(pms) == 0 {
		return odlmCatalogChoice{op.SourceName, op.SourceNamespace, channel,
			fmt.Sprintf("no PackageManifest %s in namespace %s: the registry's source and channel, as written", pkg, ns)}
	}
	if op.SourceName != "" && op.SourceNamespace != "" {
		ch := firstAvailableSemverChannel(pms, op.FallbackChannels, channel, op.SourceName, op.SourceNamespace)
		if ch == "" {
			return odlmCatalogChoice{how: fmt.Sprintf("the registry's catalog %s/%s has neither channel %q of %s nor a fallback channel %s: no catalog",
				op.SourceNamespace, op.SourceName, channel, pkg, quoteList(op.FallbackChannels))}
		}
		how := fmt.Sprintf("the registry's catalog %s/%s, channel %s", op.SourceNamespace, op.SourceName, ch)
		if ch != channel {
			how = fmt.Sprintf("the registry's catalog %s/%s, fallback channel %s (no channel %q there)", op.SourceNamespace, op.SourceName, ch, channel)
		}
		return odlmCatalogChoice{op.SourceName, op.SourceNamespace, ch, how}
	}
	var primary []odlmCandidate
	fallback := map[string][]odlmCandidate{}
	var skipped []string
	for _, pm := range pms {
		// ODLM compares the names only: the annotation lists names.
		if slices.Contains(excluded, pm.Name) {
			skipped = append(skipped, pm.Namespace+"/"+pm.Name)
			continue
		}
		c := odlmCandidate{pm.Name, pm.Namespace, pm.Priority}
		if slices.Contains(pm.Channels, channel) {
			primary = append(primary, c)
		}
		for _, fc := range op.FallbackChannels {
			if slices.Contains(pm.Channels, fc) {
				fallback[fc] = append(fallback[fc], c)
			}
		}
	}
	excl := ""
	if len(skipped) > 0 {
		excl = fmt.Sprintf(" (excluded by the registry's excluded-catalogsource annotation: %s)", strings.Join(skipped, ", "))
	}
	if len(primary) == 0 {
		fc, cands := catalogFromFallbackChannels(op.FallbackChannels, fallback)
		if len(cands) == 0 {
			return odlmCatalogChoice{how: fmt.Sprintf("no catalog in namespace %s offers channel %q of %s or a fallback channel %s%s: no catalog",
				ns, channel, pkg, quoteList(op.FallbackChannels), excl)}
		}
		primary, channel = cands, fc
	}
	sortCandidates(primary, ns, odlmCatalog, odlmCatalogNs)
	best := primary[0]
	how := fmt.Sprintf("catalog %s/%s, channel %s", best.namespace, best.name, channel)
	if channel != op.Channel {
		how = fmt.Sprintf("catalog %s/%s, fallback channel %s (no catalog offers %q)", best.namespace, best.name, channel, op.Channel)
	}
	if len(primary) > 1 {
		var others []string
		for _, c := range primary[1:] {
			others = append(others, c.namespace+"/"+c.name)
		}
		how += fmt.Sprintf(", preferred to %s (ODLM's order: the operator's namespace, then priority, then ODLM's own catalog, then namespace and name)", strings.Join(others, ", "))
	}
	return odlmCatalogChoice{best.name, best.namespace, channel, how + excl}
}

func quoteList(l []string) string {
	if len(l) == 0 {
		return "(none given)"
	}
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// sortCandidates is ODLM's sortableCatalogSource order: catalogs of the
// operator's namespace first, then higher spec.priority, then ODLM's own
// catalog, then by namespace and name.
func sortCandidates(cs []odlmCandidate, opNs, odlmCatalog, odlmCatalogNs string) {
	slices.SortStableFunc(cs, func(a, b odlmCandidate) int {
		if inA, inB := a.namespace == opNs, b.namespace == opNs; inA != inB {
			if inA {
				return -1
			}
			return 1
		}
		if a.priority != b.priority {
			if a.priority > b.priority {
				return -1
			}
			return 1
		}
		isA := a.name == odlmCatalog && a.namespace == odlmCatalogNs
		isB := b.name == odlmCatalog && b.namespace == odlmCatalogNs
		if isA != isB {
			if isA {
				return -1
			}
			return 1
		}
		if a.namespace == b.namespace {
			return strings.Compare(a.name, b.name)
		}
		return strings.Compare(a.namespace, b.namespace)
	})
}

// catalogFromFallbackChannels is ODLM's findCatalogFromFallbackChannels:
// the fallback channels by the version in their names, highest first; the
// first that a catalog offers, with its catalogs.
func catalogFromFallbackChannels(fallbacks []string, byChannel map[string][]odlmCandidate) (string, []odlmCandidate) {
	versions, channelOf := semverChannels(fallbacks)
	sortByVersion(versions)
	for i := len(versions) - 1; i >= 0; i-- {
		if cands, ok := byChannel[channelOf[versions[i]]]; ok {
			return channelOf[versions[i]], cands
		}
	}
	return "", nil
}

// firstAvailableSemverChannel is ODLM's
// getFirstAvailableSemverChannelFromCatalog: channel if the catalog offers
// it, else the highest fallback channel it offers. As in ODLM, a fallback
// channel is looked up by the version its name holds (FindSemantic), so
// "stable-v1.25" is found only in a catalog with a channel named "v1.25",
// and answered as "stable-v1.25".
func firstAvailableSemverChannel(pms []PackageCatalog, fallbacks []string, channel, source, sourceNs string) string {
	versions, channelOf := semverChannels(fallbacks)
	sortByVersion(versions)
	for _, pm := range pms {
		if pm.Name != source || pm.Namespace != sourceNs {
			continue
		}
		if slices.Contains(pm.Channels, channel) {
			return channel
		}
		for i := len(versions) - 1; i >= 0; i-- {
			if slices.Contains(pm.Channels, versions[i]) {
				return channelOf[versions[i]]
			}
		}
	}
	return ""
}

// semverChannels is ODLM's prunedSemverChannel: each channel's version
// (findSemantic) and, per version, the last channel holding it.
func semverChannels(channels []string) ([]string, map[string]string) {
	var versions []string
	channelOf := map[string]string{}
	for _, c := range channels {
		v := findSemantic(c)
		channelOf[v] = c
		versions = append(versions, v)
	}
	return versions, channelOf
}

var semanticPattern = regexp.MustCompile(`\bv?(\d+)(\.\d+)?(\.\d+)?\b`)

// findSemantic is ODLM's util.FindSemantic: the first version-like part
// of a channel's name ("stable-v1.25" → "v1.25", "v3" → "v3", "4.5" →
// "4.5"), "v0.0.0" when there is none.
func findSemantic(s string) string {
	if m := semanticPattern.FindString(s); m != "" {
		return m
	}
	return "v0.0.0"
}

// The versions findSemantic returns are compared as golang.org/x/mod's
// semver package compares them (ODLM's sort.Sort(semver.ByVersion)): a
// version is valid with a leading "v" and numbers without leading zeros,
// "v1" and "v1.2" standing for v1.0.0 and v1.2.0; invalid versions sort
// before valid ones; equal versions by their text. (findSemantic never
// returns pre-releases or builds, which this does not handle.)

type semverParts struct{ major, minor, patch string }

func parseSemver(v string) (semverParts, bool) {
	rest, ok := strings.CutPrefix(v, "v")
	if !ok {
		return semverParts{}, false
	}
	var p semverParts
	fields := strings.Split(rest, ".")
	if len(fields) > 3 {
		return p, false
	}
	nums := []*string{&p.major, &p.minor, &p.patch}
	for i := range nums {
		*nums[i] = "0"
	}
	for i, f := range fields {
		if f == "" || strings.Trim(f, "0123456789") != "" || (f[0] == '0' && len(f) > 1) {
			return p, false
		}
		*nums[i] = f
	}
	return p, true
}

func semverValid(v string) bool {
	_, ok := parseSemver(v)
	return ok
}

func compareNumber(x, y string) int {
	if len(x) != len(y) {
		if len(x) < len(y) {
			return -1
		}
		return 1
	}
	return strings.Compare(x, y)
}

// semverCompare is x/mod/semver's Compare over findSemantic's versions.
func semverCompare(v, w string) int {
	pv, okv := parseSemver(v)
	pw, okw := parseSemver(w)
	switch {
	case !okv && !okw:
		return 0
	case !okv:
		return -1
	case !okw:
		return 1
	}
	if c := compareNumber(pv.major, pw.major); c != 0 {
		return c
	}
	if c := compareNumber(pv.minor, pw.minor); c != 0 {
		return c
	}
	return compareNumber(pv.patch, pw.patch)
}

// sortByVersion is sort.Sort(semver.ByVersion(list)).
func sortByVersion(list []string) {
	slices.SortFunc(list, func(a, b string) int {
		if c := semverCompare(a, b); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
}

var requestAnnotation = regexp.MustCompile(`^(.*)\.(.*)\.(.*)\/request`)

// minSemverFromAnnotations is ODLM's util.FindMinSemverFromAnnotations:
// the channels of the Subscription's <ns>.<request>.<operand>/request
// annotations whose version is valid; the current channel if its version
// is among them, else the lowest (ODLM ranges over a map: when two
// channels hold the same version, which one stands for it is random; we
// take the one of the last annotation by name).
func minSemverFromAnnotations(annotations map[string]string, cur string) string {
	var versions []string
	channelOf := map[string]string{}
	keys := make([]string, 0, len(annotations))
	for k := range annotations {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		ch := annotations[k]
		v := findSemantic(ch)
		if requestAnnotation.MatchString(k) && semverValid(v) {
			versions = append(versions, v)
			channelOf[v] = ch
		}
	}
	if len(versions) == 0 {
		return ""
	}
	if !slices.Contains(versions, findSemantic(cur)) || cur == "" {
		sortByVersion(versions)
		return channelOf[versions[0]]
	}
	return cur
}
