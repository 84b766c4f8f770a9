package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/blang/semver/v4"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
	"github.com/fastopm/fastopm/pkg/imageref"
)

// Builder makes a Model out of catalog blobs. AddBlob may be called from
// several goroutines at once; Build is called once, at the end.
type Builder struct {
	props property.Checker

	mu       sync.Mutex
	pkgs     []rec[declcfg.Package]
	chans    []rec[declcfg.Channel]
	bundles  []rec[bundleData]
	deps     []rec[declcfg.Deprecation]
	problems Problems
	// failures are the files and blobs that could not be read: the
	// packages they may hold blobs of cannot be checked whole.
	failures []failure
	// incomplete: no package can be checked whole (MarkIncomplete).
	incomplete bool
}

// failure is a file or blob that could not be read, and the problem that
// reports it (an index into Builder.problems, or -1 for a file: Build
// reports files first).
type failure struct {
	path string
	// pkg is the package of a blob that could not be decoded.
	pkg     string
	err     *declcfg.Error
	problem int
}

// MarkIncomplete tells the Builder that some of the catalog could not be
// read, without saying what: Build then skips, for every package, the
// rules whose findings would only be consequences of the missing blobs.
// AddLoadErrors says what, and lets Build check the packages the
// failures do not concern.
func (bld *Builder) MarkIncomplete() {
	bld.mu.Lock()
	bld.incomplete = true
	bld.mu.Unlock()
}

// AddLoadErrors adds the problems the loader reported (declcfg.Walk's
// Errors): files and blobs that could not be read. Build reports them
// first, each with the packages it keeps from being checked whole (see
// unchecked), and checks the other packages fully.
func (bld *Builder) AddLoadErrors(errs declcfg.Errors) {
	bld.mu.Lock()
	for _, e := range errs {
		bld.failures = append(bld.failures, failure{path: e.Path, err: e, problem: -1})
	}
	bld.mu.Unlock()
}

// rec is a blob with its place in upstream's load order.
type rec[T any] struct {
	v           T
	src         Source
	file, index int
}

// bundleData is what the model needs of an olm.bundle blob, parsed while
// the blob's bytes are at hand.
type bundleData struct {
	name, pkg, image string
	// imageErr is the first image or related image that is not a valid
	// pull spec, found while the blob is read (related images are not
	// kept).
	imageErr    string
	packages    []property.Package
	objectCount int
	parseErr    error // a property that does not decode
	objectErr   error // a bundle object that cannot be read
	// deprecated: the blob has an olm.deprecated property.
	deprecated bool
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder { return &Builder{} }

// AddBlob adds one blob. It decodes what the model needs and copies it, so
// the blob's bytes may be reused after the call. Blobs of schemas other
// than the four OLM ones are ignored.
func (bld *Builder) AddBlob(b *declcfg.Blob) {
	src := Source{b.Path, b.Line}
	fail := func(err error) {
		pkg := b.Package
		if b.Schema == declcfg.SchemaPackage {
			pkg = b.Name
		}
		bld.mu.Lock()
		bld.failures = append(bld.failures, failure{path: b.Path, pkg: pkg, problem: len(bld.problems)})
		bld.problems = append(bld.problems, Problem{Rule: RuleParse, Severity: SeverityError, load: true,
			Message: fmt.Sprintf("%s:%d:%d: invalid %s blob: %v", b.Path, b.Line, b.Col, b.Schema, err),
			Package: pkg, File: b.Path, Line: b.Line, Column: b.Col})
		bld.mu.Unlock()
	}
	switch b.Schema {
	case declcfg.SchemaPackage:
		p, err := declcfg.DecodePackage(b.JSON)
		if err != nil {
			fail(err)
			return
		}
		p.Properties, p.Description, p.Icon = nil, "", nil // not part of the model
		bld.mu.Lock()
		bld.pkgs = append(bld.pkgs, rec[declcfg.Package]{p, src, b.File, b.Index})
		bld.mu.Unlock()
	case declcfg.SchemaChannel:
		c, err := declcfg.DecodeChannel(b.JSON)
		if err != nil {
			fail(err)
			return
		}
		c.Properties = nil // not part of the model
		bld.mu.Lock()
		bld.chans = append(bld.chans, rec[declcfg.Channel]{c, src, b.File, b.Index})
		bld.mu.Unlock()
	case declcfg.SchemaBundle:
		bd, err := declcfg.DecodeBundle(b.JSON)
		if err != nil {
			fail(err)
			return
		}
		data := bld.bundleData(&bd)
		bld.mu.Lock()
		bld.bundles = append(bld.bundles, rec[bundleData]{data, src, b.File, b.Index})
		bld.mu.Unlock()
	case declcfg.SchemaDeprecations:
		d, err := declcfg.DecodeDeprecation(b.JSON)
		if err != nil {
			fail(err)
			return
		}
		bld.mu.Lock()
		bld.deps = append(bld.deps, rec[declcfg.Deprecation]{d, src, b.File, b.Index})
		bld.mu.Unlock()
	}
}

// bundleData checks a bundle's properties with upstream's rules (those of
// property.Parse, through the memoizing property.Checker) and its bundle
// objects the way upstream's loader reads them: base64 data that decodes,
// holding YAML or JSON.
func (bld *Builder) bundleData(b *declcfg.Bundle) bundleData {
	d := bundleData{name: b.Name, pkg: b.Package, image: b.Image, imageErr: imageProblem(b)}
	var scratch []byte
	for i, p := range b.Properties {
		var err error
		switch p.Type {
		case property.TypePackage:
			var v property.Package
			if err = json.Unmarshal(p.Value, &v); err == nil {
				d.packages = append(d.packages, v)
			}
		case property.TypePackageRequired, property.TypeGVK, property.TypeGVKRequired, property.TypeChannel, property.TypeCSVMetadata:
			err = bld.props.Check(p.Type, p.Value)
		case property.TypeDeprecated:
			d.deprecated = true
			err = bld.props.Check(p.Type, p.Value)
		case property.TypeBundleObject:
			d.objectCount++
			var objErr error
			scratch, objErr = bundleObject(p.Value, scratch, i)
			if objErr != nil && d.objectErr == nil {
				d.objectErr = objErr
			}
		default:
			err = bld.props.Check(p.Type, p.Value)
		}
		if err != nil {
			d.parseErr = property.ParseError{Idx: i, Typ: p.Type, Err: err}
			break
		}
	}
	return d
}

// bundleObject checks one olm.bundle.object, the property at index idx,
// the way upstream's loader reads it: the value decodes as
// {"data": <base64>} (other keys are ignored) and the data is a YAML or
// JSON manifest. Errors carry upstream's wording. scratch is reused.
func bundleObject(value []byte, scratch []byte, idx int) ([]byte, error) {
	data, err := property.BundleObjectData(scratch[:0], value)
	if err != nil {
		return data, fmt.Errorf("parse property at index %d as bundle object: %w", idx, err)
	}
	if _, err := property.ManifestJSON(data); err != nil {
		return data, fmt.Errorf("convert bundle object property at index %d to JSON: %w", idx, err)
	}
	return data, nil
}

func sortRecs[T any](rs []rec[T]) {
	slices.SortStableFunc(rs, func(a, b rec[T]) int {
		if a.file != b.file {
			return a.file - b.file
		}
		return a.index - b.index
	})
}

func sortStrings(s []string) { sort.Strings(s) }

func joinComma(s []string) string { return strings.Join(s, ", ") }

// Build makes the Model and returns it with every problem found, in
// deterministic order. The Model holds everything that could be built even
// when there are problems; only a catalog without error problems is valid.
func (bld *Builder) Build() (Model, Problems) {
	sortRecs(bld.pkgs)
	sortRecs(bld.chans)
	sortRecs(bld.bundles)
	sortRecs(bld.deps)
	b := &build{Builder: bld, m: Model{}, defaults: map[string]string{}, ambiguous: map[string]bool{}}
	b.attributeFailures()
	b.packages()
	b.channels()
	b.indexEntries()
	b.bundles()
	b.entriesWithoutBundles()
	b.defaultChannels()
	b.deprecations()
	b.validate()
	return b.m, append(b.fileProblems, b.sorted()...)
}

// build is one run of Build.
type build struct {
	*Builder
	m        Model
	defaults map[string]string
	out      Problems
	// ambiguous packages have more than one olm.package blob: which of
	// the blobs their channels and bundles belong to is unknowable, so
	// only the duplicate is reported for them.
	ambiguous map[string]bool
	// entries maps package and bundle name to the channel entries of that
	// bundle, in channel name order, so that a bundle's channels are
	// found without looking at every channel of its package.
	entries map[string]map[string][]*Bundle
	// uncheckedPkgs are the packages a file or blob that could not be
	// read may hold blobs of (attributeFailures): the rules that need all
	// of a package's blobs would only report what is missing.
	uncheckedPkgs map[string]bool
	// fileProblems report the files the loader could not read.
	fileProblems Problems
	// missingDefault are the empty channels made for default channels
	// that name no channel (defaultChannels).
	missingDefault map[*Channel]bool
}

// unchecked reports whether the package cannot be checked whole.
func (b *build) unchecked(pkg string) bool { return b.incomplete || b.uncheckedPkgs[pkg] }

func (b *build) load(rule Rule, src Source, pkg, bundle, format string, args ...any) {
	b.out = append(b.out, Problem{Rule: rule, Severity: SeverityError, load: true,
		Message: fmt.Sprintf(format, args...), Package: pkg, Bundle: bundle, File: src.Path, Line: src.Line})
}

func (b *build) packages() {
	for _, r := range b.pkgs {
		p := r.v
		switch {
		case p.Name == "":
			b.load(RulePackageName, r.src, "", "", "config contains package with no name")
			continue
		case b.m[p.Name] != nil:
			if !b.ambiguous[p.Name] {
				b.load(RuleDuplicatePackage, r.src, p.Name, "", "duplicate package %q", p.Name)
			}
			b.ambiguous[p.Name] = true
			continue
		}
		if errs := dns1123Label(p.Name); len(errs) > 0 {
			b.load(RulePackageName, r.src, p.Name, "", "invalid package name %q: %v", p.Name, errs)
		}
		b.m[p.Name] = &Package{Name: p.Name, Channels: map[string]*Channel{}, Source: r.src}
		b.defaults[p.Name] = p.DefaultChannel
	}
}

func (b *build) channels() {
	for _, r := range b.chans {
		c := r.v
		pkg := b.m[c.Package]
		switch {
		case b.ambiguous[c.Package]:
			continue
		case pkg == nil:
			if !b.unchecked(c.Package) {
				b.load(RuleUnknownPackage, r.src, "", "", "unknown package %q for channel %q", c.Package, c.Name)
			}
			continue
		case c.Name == "":
			b.load(RuleChannelName, r.src, c.Package, "", "package %q contains channel with no name", c.Package)
			continue
		case pkg.Channels[c.Name] != nil:
			b.load(RuleDuplicateChannel, r.src, c.Package, "", "package %q has duplicate channel %q", c.Package, c.Name)
			continue
		}
		ch := &Channel{Package: pkg, Name: c.Name, Bundles: map[string]*Bundle{}, Source: r.src}
		for _, e := range c.Entries {
			if ch.Bundles[e.Name] != nil {
				b.load(RuleDuplicateEntry, r.src, c.Package, e.Name, "invalid package %q, channel %q: duplicate entry %q", c.Package, c.Name, e.Name)
				continue
			}
			ch.Bundles[e.Name] = &Bundle{Package: pkg, Channel: ch, Name: e.Name, Replaces: e.Replaces,
				Skips: e.Skips, SkipRange: e.SkipRange, Source: r.src}
		}
		pkg.Channels[c.Name] = ch
		if b.defaults[c.Package] == c.Name {
			pkg.DefaultChannel = ch
		}
	}
}

// indexEntries fills b.entries once the channels are read.
func (b *build) indexEntries() {
	b.entries = make(map[string]map[string][]*Bundle, len(b.m))
	for name, pkg := range b.m {
		byName := map[string][]*Bundle{}
		for _, ch := range sortedChannels(pkg) {
			for n, mb := range ch.Bundles {
				byName[n] = append(byName[n], mb)
			}
		}
		b.entries[name] = byName
	}
}

func (b *build) bundles() {
	seen := map[string]map[string]bool{}
	for _, r := range b.Builder.bundles {
		d := r.v
		pkg := b.m[d.pkg]
		switch {
		case b.ambiguous[d.pkg]:
			continue
		case d.pkg == "":
			b.load(RuleBundlePackage, r.src, "", d.name, "package name must be set for bundle %q", d.name)
			continue
		case pkg == nil:
			if !b.unchecked(d.pkg) {
				b.load(RuleUnknownPackage, r.src, "", d.name, "unknown package %q for bundle %q", d.pkg, d.name)
			}
			continue
		case seen[d.pkg][d.name]:
			b.load(RuleDuplicateBundle, r.src, d.pkg, d.name, "package %q has duplicate bundle %q", d.pkg, d.name)
			continue
		}
		if seen[d.pkg] == nil {
			seen[d.pkg] = map[string]bool{}
		}
		seen[d.pkg][d.name] = true
		inChannels := b.entries[d.pkg][d.name]
		for _, mb := range inChannels {
			mb.Invalid = true // until the checks below pass
		}
		if len(inChannels) == 0 && !b.unchecked(d.pkg) {
			b.load(RuleBundleNotInChannel, r.src, d.pkg, d.name, "package %q, bundle %q not found in any channel entries", d.pkg, d.name)
		}
		if !b.bundleValid(r.src, &d) {
			continue
		}
		ver, err := semver.Parse(d.packages[0].Version)
		if err != nil {
			b.load(RuleVersion, r.src, d.pkg, d.name, "error parsing bundle %q version %q: %v", d.name, d.packages[0].Version, err)
			continue
		}
		rel, err := ParseRelease(d.packages[0].Release)
		if err != nil {
			b.load(RuleVersion, r.src, d.pkg, d.name, "error parsing bundle %q release version %q: %v", d.name, d.packages[0].Release, err)
			continue
		}
		for _, mb := range inChannels {
			mb.HasBlob, mb.Invalid = true, false
			mb.Image = d.image
			mb.Version, mb.Release = ver, rel
			mb.ObjectCount = d.objectCount
			mb.LegacyDeprecated = d.deprecated
			mb.Source = r.src
		}
	}
}

// bundleValid applies the load rules that concern the bundle's own blob,
// in upstream's order, reporting the first one broken.
func (b *build) bundleValid(src Source, d *bundleData) bool {
	if d.objectErr != nil {
		// Upstream reads bundle objects while loading, before the rest.
		b.load(RuleBundleObject, src, d.pkg, d.name, "read bundle objects: package %q, bundle %q: %v", d.pkg, d.name, d.objectErr)
		return false
	}
	if d.parseErr != nil {
		// Upstream's words, where the blob is, and what is wrong in words.
		msg := fmt.Sprintf("%s: parse properties for bundle %q: %v", src, d.name, d.parseErr)
		var pe property.ParseError
		if errors.As(d.parseErr, &pe) {
			if why := pe.Explain(); why != "" {
				msg += fmt.Sprintf(" (property %d of type %q: %s)", pe.Idx, pe.Typ, why)
			}
		}
		b.load(RuleProperty, src, d.pkg, d.name, "%s", msg)
		return false
	}
	if len(d.packages) != 1 {
		b.load(RulePackageProperty, src, d.pkg, d.name, "package %q bundle %q must have exactly 1 %q property, found %d", d.pkg, d.name, property.TypePackage, len(d.packages))
		return false
	}
	if d.pkg != d.packages[0].PackageName {
		b.load(RuleBundlePackage, src, d.pkg, d.name, "package %q does not match %q property %q", d.pkg, property.TypePackage, d.packages[0].PackageName)
		return false
	}
	return b.imagesValid(src, d)
}

func (b *build) imagesValid(src Source, d *bundleData) bool {
	if d.imageErr != "" {
		b.load(RuleImage, src, d.pkg, d.name, "%s", d.imageErr)
		return false
	}
	return true
}

// imageProblem returns upstream's message for the first of bd's image and
// related images that is not a valid pull spec, or "".
func imageProblem(bd *declcfg.Bundle) string {
	if bd.Image != "" {
		if err := imageref.Validate(bd.Image); err != nil {
			return fmt.Sprintf("package %q bundle %q image: invalid image pull spec %q: %v", bd.Package, bd.Name, bd.Image, err)
		}
	}
	for i, ri := range bd.RelatedImages {
		if ri.Image == "" {
			continue
		}
		if err := imageref.Validate(ri.Image); err != nil {
			return fmt.Sprintf("package %q bundle %q relatedImages[%d].image: invalid image pull spec %q: %v", bd.Package, bd.Name, i, ri.Image, err)
		}
	}
	return ""
}

// entriesWithoutBundles reports channel entries that no olm.bundle blob
// fills, per package. (Upstream only checks the last channel it reads of
// each package; every channel is checked here.)
func (b *build) entriesWithoutBundles() {
	for _, name := range sortedPackageNames(b.m) {
		pkg := b.m[name]
		if b.ambiguous[name] || b.unchecked(name) {
			continue
		}
		missing := map[string]bool{}
		var src Source
		for _, ch := range sortedChannels(pkg) {
			for _, mb := range ch.Bundles {
				if !mb.HasBlob && !mb.Invalid {
					if !missing[mb.Name] && src.Path == "" {
						src = ch.Source
					}
					missing[mb.Name] = true
				}
			}
		}
		if len(missing) > 0 {
			names := make([]string, 0, len(missing))
			for n := range missing {
				names = append(names, n)
			}
			sort.Strings(names)
			b.load(RuleEntryWithoutBundle, src, name, "", "no olm.bundle blobs found in package %q for olm.channel entries %s", name, fmt.Sprint(names))
		}
	}
}

// defaultChannels gives a package whose default channel is declared but
// does not exist an empty channel of that name, as upstream does. Upstream
// then reports a channel without bundles; validate reports the default
// channel that names no channel (its words in upstream's tree).
func (b *build) defaultChannels() {
	b.missingDefault = map[*Channel]bool{}
	for name, pkg := range b.m {
		def := b.defaults[name]
		if def != "" && pkg.DefaultChannel == nil {
			ch := &Channel{Package: pkg, Name: def, Bundles: map[string]*Bundle{}, Source: pkg.Source}
			pkg.DefaultChannel = ch
			pkg.Channels[def] = ch
			b.missingDefault[ch] = true
		}
	}
}

func (b *build) deprecations() {
	byPkg := map[string]bool{}
	for i, r := range b.deps {
		d := r.v
		if d.Package == "" {
			b.load(RuleDeprecation, r.src, "", "", "package name must be set for deprecation item %v", i)
			continue
		}
		pkg := b.m[d.Package]
		if pkg == nil {
			if !b.unchecked(d.Package) {
				b.load(RuleUnknownPackage, r.src, "", "", "cannot apply deprecations to an unknown package %q", d.Package)
			}
			continue
		}
		if b.ambiguous[d.Package] {
			continue
		}
		// A bundle or channel it names may be in what could not be read.
		complete := !b.unchecked(d.Package)
		if byPkg[d.Package] {
			b.load(RuleDeprecation, r.src, d.Package, "", "expected a maximum of one deprecation per package: %q", d.Package)
			continue
		}
		byPkg[d.Package] = true
		refs := map[declcfg.PackageScopedReference]bool{}
		for j, e := range d.Entries {
			ref := e.Reference
			if ref.Schema == "" {
				b.load(RuleDeprecation, r.src, d.Package, "", "schema must be set for deprecation entry [%v] for package %q", j, d.Package)
				continue
			}
			if refs[ref] {
				b.load(RuleDeprecation, r.src, d.Package, "", "duplicate deprecation entry %s for package %q", goSyntaxRef(ref), d.Package)
				continue
			}
			refs[ref] = true
			dep := &Deprecation{Message: e.Message}
			switch ref.Schema {
			case declcfg.SchemaBundle:
				found := false
				for _, mb := range b.entries[d.Package][ref.Name] {
					if mb.HasBlob {
						mb.Deprecation = dep
						found = true
					}
				}
				if !found && complete {
					b.load(RuleDeprecation, r.src, d.Package, ref.Name, "cannot deprecate bundle %q for package %q: bundle not found", ref.Name, d.Package)
				}
			case declcfg.SchemaChannel:
				ch := pkg.Channels[ref.Name]
				if ch == nil {
					if complete {
						b.load(RuleDeprecation, r.src, d.Package, "", "cannot deprecate channel %q for package %q: channel not found", ref.Name, d.Package)
					}
					continue
				}
				ch.Deprecation = dep
			case declcfg.SchemaPackage:
				if ref.Name != "" {
					b.load(RuleDeprecation, r.src, d.Package, "", "package name must be empty for deprecated package %q (specified %q)", d.Package, ref.Name)
					continue
				}
				pkg.Deprecation = dep
			default:
				b.load(RuleDeprecation, r.src, d.Package, "", "cannot deprecate object %s referenced by entry %v for package %q: object schema unknown", goSyntaxRef(ref), j, d.Package)
			}
		}
	}
}

// goSyntaxRef prints a reference as upstream's %#v does.
func goSyntaxRef(r declcfg.PackageScopedReference) string {
	return fmt.Sprintf("declcfg.PackageScopedReference{Schema:%q, Name:%q}", r.Schema, r.Name)
}

func sortedPackageNames(m Model) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func sortedChannels(p *Package) []*Channel {
	out := make([]*Channel, 0, len(p.Channels))
	for _, ch := range p.Channels {
		out = append(out, ch)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func sortedBundles(c *Channel) []*Bundle {
	out := make([]*Bundle, 0, len(c.Bundles))
	for _, b := range c.Bundles {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

var dns1123LabelRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// dns1123Label returns Kubernetes' messages for a name that is not a
// DNS-1123 label (validation.IsDNS1123Label).
func dns1123Label(s string) []string {
	var errs []string
	if len(s) > 63 {
		errs = append(errs, "must be no more than 63 characters")
	}
	if !dns1123LabelRE.MatchString(s) {
		errs = append(errs, "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
	}
	return errs
}
