package action

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing/fstest"

	"github.com/blang/semver/v4"
	"sigs.k8s.io/yaml"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/model"
	"github.com/fastopm/fastopm/alpha/updates"
)

// FilterConfig says what `opm alpha filter` keeps. Its meaning follows
// oc-mirror v2's operator filtering (its ImageSetConfiguration's
// operators entry): without packages, every package; a package without
// channels means its default channel; without versions, a channel keeps
// only its head, unless Full.
type FilterConfig struct {
	// Schema, when set, must be "olm.filter.v1" (a marker for readers).
	Schema string `json:"schema,omitempty"`
	// Full keeps every bundle of the selected channels (within the
	// version bounds) instead of heads only.
	Full     bool            `json:"full,omitempty"`
	Packages []FilterPackage `json:"packages,omitempty"`
}

// FilterPackage selects a package.
type FilterPackage struct {
	Name string `json:"name"`
	// DefaultChannel replaces the package's default channel; required
	// when the channels kept leave the default channel out.
	DefaultChannel string `json:"defaultChannel,omitempty"`
	// MinVersion and MaxVersion bound the default channel's bundles
	// (inclusive); not allowed with Channels, which carry their own.
	MinVersion string          `json:"minVersion,omitempty"`
	MaxVersion string          `json:"maxVersion,omitempty"`
	Channels   []FilterChannel `json:"channels,omitempty"`
}

// FilterChannel selects a channel, with optional inclusive bounds.
type FilterChannel struct {
	Name       string `json:"name"`
	MinVersion string `json:"minVersion,omitempty"`
	MaxVersion string `json:"maxVersion,omitempty"`
}

// ParseFilterConfig reads a filter configuration (YAML or JSON); unknown
// fields are errors.
func ParseFilterConfig(data []byte) (*FilterConfig, error) {
	var c FilterConfig
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, err
	}
	if c.Schema != "" && c.Schema != "olm.filter.v1" {
		return nil, fmt.Errorf("unknown schema %q: expected olm.filter.v1", c.Schema)
	}
	seen := map[string]bool{}
	for i, p := range c.Packages {
		if p.Name == "" {
			return nil, fmt.Errorf("packages[%d]: name is required", i)
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("packages[%d]: package %q is listed twice", i, p.Name)
		}
		seen[p.Name] = true
		if len(p.Channels) > 0 && (p.MinVersion != "" || p.MaxVersion != "") {
			return nil, fmt.Errorf("package %q: minVersion and maxVersion go on each channel when channels are listed, not on the package", p.Name)
		}
		if err := checkBounds(p.MinVersion, p.MaxVersion); err != nil {
			return nil, fmt.Errorf("package %q: %w", p.Name, err)
		}
		chSeen := map[string]bool{}
		for j, ch := range p.Channels {
			if ch.Name == "" {
				return nil, fmt.Errorf("package %q: channels[%d]: name is required", p.Name, j)
			}
			if chSeen[ch.Name] {
				return nil, fmt.Errorf("package %q: channel %q is listed twice", p.Name, ch.Name)
			}
			chSeen[ch.Name] = true
			if err := checkBounds(ch.MinVersion, ch.MaxVersion); err != nil {
				return nil, fmt.Errorf("package %q, channel %q: %w", p.Name, ch.Name, err)
			}
		}
	}
	return &c, nil
}

func checkBounds(lo, hi string) error {
	var l, h semver.Version
	var err error
	if lo != "" {
		if l, err = semver.ParseTolerant(lo); err != nil {
			return fmt.Errorf("minVersion %q: %w", lo, err)
		}
	}
	if hi != "" {
		if h, err = semver.ParseTolerant(hi); err != nil {
			return fmt.Errorf("maxVersion %q: %w", hi, err)
		}
	}
	if lo != "" && hi != "" && h.LT(l) {
		return fmt.Errorf("maxVersion %s is lower than minVersion %s", hi, lo)
	}
	return nil
}

// Filter writes the part of a catalog a FilterConfig selects, as a valid
// catalog: edges to removed bundles are trimmed, replaces edges re-pointed
// to the nearest kept bundle down the chain, and a kept bundle whose only
// path to the head ran through removed bundles is skipped by the new head,
// so every kept bundle still updates to it. The result is validated before
// anything is written.
type Filter struct {
	Ref         string
	Config      *FilterConfig
	Sources     SourceResolver
	MaxFileSize int64
	Format      declcfg.Format
	// OutputDir receives one directory per package, as `opm migrate`
	// writes; empty writes a stream to Out.
	OutputDir string
	Out       io.Writer
}

// filterPlan is what to keep of one package.
type filterPlan struct {
	defaultChannel string
	// channels maps each kept channel to its new entries.
	channels map[string][]declcfg.ChannelEntry
	bundles  map[string]bool
}

// Run filters the catalog.
func (f Filter) Run(ctx context.Context) error {
	src, err := f.Sources.Resolve(ctx, f.Ref)
	if err != nil {
		return err
	}
	if src.Close != nil {
		defer src.Close()
	}
	if src.FS == nil {
		return fmt.Errorf("%s is not a catalog", f.Ref)
	}
	res, err := Validate{FS: src.FS, SkipSchema: true, MaxFileSize: f.MaxFileSize}.Run(ctx)
	if err != nil {
		return err
	}
	if err := res.Err(); err != nil {
		return err
	}
	plans, err := planFilter(res.Model, f.Config)
	if err != nil {
		return err
	}
	cfg, err := collectFiltered(ctx, src.FS, plans, f.MaxFileSize)
	if err != nil {
		return err
	}
	format := f.Format
	if format == "" {
		format = declcfg.FormatJSON
	}
	// The result must be a valid catalog before anything is written: the
	// files of the directory, or the stream, are validated as they are.
	var files map[string][]byte
	if f.OutputDir != "" {
		if files, err = splitByPackage(cfg, format); err != nil {
			return err
		}
	} else {
		for i := range cfg.Bundles {
			declcfg.PrepareForRender(&cfg.Bundles[i])
		}
		var stream appendWriter
		if err := cfg.WriteTo(&stream, format); err != nil {
			return err
		}
		files = map[string][]byte{}
		if len(stream) > 0 {
			files["catalog."+string(format)] = stream
		}
	}
	mem := fstest.MapFS{}
	for p, b := range files {
		mem[p] = &fstest.MapFile{Data: b, Mode: 0o644}
	}
	check, err := Validate{FS: mem, SkipSchema: true}.Run(ctx)
	if err != nil {
		return err
	}
	if err := check.Err(); err != nil {
		return fmt.Errorf("the filtered catalog would not be valid (a bug: please report it with your configuration): %w", err)
	}
	if f.OutputDir != "" {
		return writeTree(f.OutputDir, files)
	}
	_, err = f.Out.Write(files["catalog."+string(format)])
	return err
}

// appendWriter collects what is written to it.
type appendWriter []byte

func (w *appendWriter) Write(p []byte) (int, error) {
	*w = append(*w, p...)
	return len(p), nil
}

// planFilter decides, from the model, what each kept package keeps.
func planFilter(m model.Model, c *FilterConfig) (map[string]*filterPlan, error) {
	pkgs := c.Packages
	if len(pkgs) == 0 {
		for _, name := range slices.Sorted(maps.Keys(m)) {
			pkgs = append(pkgs, FilterPackage{Name: name})
		}
	}
	plans := map[string]*filterPlan{}
	for _, fp := range pkgs {
		pkg, ok := m[fp.Name]
		if !ok {
			return nil, fmt.Errorf("package %q is not in the catalog", fp.Name)
		}
		sel := fp.Channels
		if len(sel) == 0 {
			if c.Full && fp.MinVersion == "" && fp.MaxVersion == "" {
				for _, name := range slices.Sorted(maps.Keys(pkg.Channels)) {
					sel = append(sel, FilterChannel{Name: name})
				}
			} else if pkg.DefaultChannel != nil {
				sel = []FilterChannel{{Name: pkg.DefaultChannel.Name, MinVersion: fp.MinVersion, MaxVersion: fp.MaxVersion}}
			}
		}
		plan := &filterPlan{channels: map[string][]declcfg.ChannelEntry{}, bundles: map[string]bool{}}
		for _, fc := range sel {
			ch, ok := pkg.Channels[fc.Name]
			if !ok {
				return nil, fmt.Errorf("package %q has no channel %q (its channels: %s)", fp.Name, fc.Name, strings.Join(slices.Sorted(maps.Keys(pkg.Channels)), ", "))
			}
			entries, err := filterChannel(ch, fc, c.Full)
			if err != nil {
				return nil, err
			}
			plan.channels[fc.Name] = entries
			for _, e := range entries {
				plan.bundles[e.Name] = true
			}
		}
		plan.defaultChannel = fp.DefaultChannel
		if plan.defaultChannel == "" && pkg.DefaultChannel != nil {
			plan.defaultChannel = pkg.DefaultChannel.Name
		}
		if _, kept := plan.channels[plan.defaultChannel]; !kept {
			if fp.DefaultChannel != "" {
				return nil, fmt.Errorf("package %q: defaultChannel %q is not one of the channels kept (%s)", fp.Name, fp.DefaultChannel, strings.Join(slices.Sorted(maps.Keys(plan.channels)), ", "))
			}
			return nil, fmt.Errorf("package %q: its default channel %q is filtered out: name one of the channels kept (%s) as defaultChannel in the configuration", fp.Name, plan.defaultChannel, strings.Join(slices.Sorted(maps.Keys(plan.channels)), ", "))
		}
		plans[fp.Name] = plan
	}
	return plans, nil
}

// filterChannel selects a channel's bundles and rewrites their edges.
func filterChannel(ch *model.Channel, fc FilterChannel, full bool) ([]declcfg.ChannelEntry, error) {
	g, err := updates.NewGraph(ch)
	if err != nil {
		return nil, err
	}
	var lo, hi *semver.Version
	if fc.MinVersion != "" {
		v, _ := semver.ParseTolerant(fc.MinVersion)
		lo = &v
	}
	if fc.MaxVersion != "" {
		v, _ := semver.ParseTolerant(fc.MaxVersion)
		hi = &v
	}
	keep := map[string]bool{}
	if lo == nil && hi == nil && !full {
		keep[g.Head().Name] = true
	} else {
		for name, b := range ch.Bundles {
			if (lo == nil || b.Version.GTE(*lo)) && (hi == nil || b.Version.LTE(*hi)) {
				keep[name] = true
			}
		}
	}
	if len(keep) == 0 {
		return nil, fmt.Errorf("package %q, channel %q: no bundle between minVersion %q and maxVersion %q", ch.Package.Name, ch.Name, fc.MinVersion, fc.MaxVersion)
	}
	return trimChannel(g, keep)
}

// trimChannel rewrites the entries of the bundles kept of g's channel so
// that they form a valid channel with a single head that every kept
// bundle updates to.
func trimChannel(g *updates.Graph, keep map[string]bool) ([]declcfg.ChannelEntry, error) {
	ch := g.Channel
	entries := map[string]*declcfg.ChannelEntry{}
	for name := range keep {
		b := ch.Bundles[name]
		e := &declcfg.ChannelEntry{Name: name, SkipRange: b.SkipRange}
		// Re-point replaces at the nearest kept bundle down the chain.
		seen := map[string]bool{name: true}
		for r := b.Replaces; r != "" && !seen[r]; {
			seen[r] = true
			rb, inChannel := ch.Bundles[r]
			if keep[r] {
				e.Replaces = r
				break
			}
			if !inChannel {
				break
			}
			r = rb.Replaces
		}
		for _, s := range b.Skips {
			if keep[s] {
				e.Skips = append(e.Skips, s)
			}
		}
		entries[name] = e
	}
	// One head: the kept bundle OLM prefers (nearest the original head),
	// which skips every other kept bundle that lost its way to it.
	incoming := map[string]bool{}
	for _, e := range entries {
		if e.Replaces != "" {
			incoming[e.Replaces] = true
		}
		for _, s := range e.Skips {
			incoming[s] = true
		}
	}
	var head string
	for _, b := range g.Order {
		if keep[b.Name] && !incoming[b.Name] {
			head = b.Name
			break
		}
	}
	var orphans []string
	for name := range entries {
		if !incoming[name] && name != head {
			orphans = append(orphans, name)
		}
	}
	slices.Sort(orphans)
	if head == "" {
		// Only skipped bundles kept, or a cycle: the newest is the head.
		if len(orphans) == 0 {
			return nil, fmt.Errorf("package %q, channel %q: the kept bundles have no head", ch.Package.Name, ch.Name)
		}
		slices.SortFunc(orphans, func(a, b string) int { return ch.Bundles[b].Version.Compare(ch.Bundles[a].Version) })
		head, orphans = orphans[0], orphans[1:]
		slices.Sort(orphans)
	}
	entries[head].Skips = append(entries[head].Skips, orphans...)
	out := make([]declcfg.ChannelEntry, 0, len(entries))
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		out = append(out, *entries[name])
	}
	return out, nil
}

// collectFiltered reads the catalog again and keeps the blobs of the plan.
func collectFiltered(ctx context.Context, fsys fs.FS, plans map[string]*filterPlan, maxFileSize int64) (*declcfg.DeclarativeConfig, error) {
	var (
		mu  sync.Mutex
		cfg declcfg.DeclarativeConfig
	)
	err := declcfg.Walk(ctx, fsys, func(b *declcfg.Blob) error {
		pkgName := b.Package
		if b.Schema == declcfg.SchemaPackage {
			pkgName = b.Name
		}
		plan, ok := plans[pkgName]
		if !ok {
			return nil
		}
		switch b.Schema {
		case declcfg.SchemaChannel:
			entries, kept := plan.channels[b.Name]
			if !kept {
				return nil
			}
			v, err := declcfg.DecodeBlob(&b.Meta)
			if err != nil {
				return err
			}
			c := v.(*declcfg.Channel)
			c.Entries = entries
			mu.Lock()
			cfg.Channels = append(cfg.Channels, *c)
			mu.Unlock()
			return nil
		case declcfg.SchemaBundle:
			if !plan.bundles[b.Name] {
				return nil
			}
		}
		v, err := declcfg.DecodeBlob(&b.Meta)
		if err != nil {
			return err
		}
		switch t := v.(type) {
		case *declcfg.Package:
			t.DefaultChannel = plan.defaultChannel
		case *declcfg.Deprecation:
			kept := t.Entries[:0]
			for _, e := range t.Entries {
				switch e.Reference.Schema {
				case declcfg.SchemaBundle:
					if !plan.bundles[e.Reference.Name] {
						continue
					}
				case declcfg.SchemaChannel:
					if _, ok := plan.channels[e.Reference.Name]; !ok {
						continue
					}
				}
				kept = append(kept, e)
			}
			if len(kept) == 0 {
				return nil
			}
			t.Entries = kept
		}
		mu.Lock()
		cfg.Add(v)
		mu.Unlock()
		return nil
	}, declcfg.WithMaxFileSize(maxFileSize))
	if err != nil {
		return nil, err
	}
	return &cfg, nil
}
