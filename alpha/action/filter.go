//go:build !opm_lean

package action

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing/fstest"

	"github.com/blang/semver/v4"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/model"
	"github.com/fastopm/fastopm/alpha/updates"
	"github.com/fastopm/fastopm/pkg/progress"
	"github.com/fastopm/fastopm/pkg/suggest"
)

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
	// Progress, when set, shows the steps on a terminal.
	Progress *progress.Reporter
}

// filterPlan is what to keep of one package.
type filterPlan struct {
	defaultChannel string
	// channels maps each kept channel to its new entries.
	channels map[string][]declcfg.ChannelEntry
	bundles  map[string]bool
}

// FilterSummary counts what a filter kept.
type FilterSummary struct {
	Packages, Channels, Bundles int
}

func (s FilterSummary) String() string {
	return fmt.Sprintf("kept %s, %s, %s", plural(s.Packages, "package"), plural(s.Channels, "channel"), plural(s.Bundles, "bundle"))
}

// Run filters the catalog. The result is checked as a catalog before
// anything is written; then it is written blob by blob, so memory holds
// the kept blobs once, never their indented text (a blob nested 9,000
// deep is 18 KB, and 324 MB indented).
func (f Filter) Run(ctx context.Context) (FilterSummary, error) {
	var sum FilterSummary
	src, err := f.Sources.Resolve(ctx, f.Ref)
	if err != nil {
		return sum, err
	}
	if src.Close != nil {
		defer src.Close()
	}
	if src.FS == nil {
		return sum, fmt.Errorf("%s is not a catalog", f.Ref)
	}
	task := f.Progress.Start("reading "+f.Ref, 0)
	res, err := Validate{FS: src.FS, SkipSchema: true, MaxFileSize: f.MaxFileSize}.Run(ctx)
	task.Done("")
	if err != nil {
		return sum, err
	}
	if err := res.Err(); err != nil {
		return sum, err
	}
	plans, err := planFilter(res.Model, f.Config)
	if err != nil {
		return sum, err
	}
	task = f.Progress.Start("filtering", 0)
	cfg, err := collectFiltered(ctx, src.FS, plans, f.MaxFileSize)
	task.Done("")
	if err != nil {
		return sum, err
	}
	format := f.Format
	if format == "" {
		format = declcfg.FormatJSON
	}
	for i := range cfg.Bundles {
		declcfg.PrepareForRender(&cfg.Bundles[i])
	}
	items := declcfg.RenderOrder(cfg.Items())
	if f.OutputDir != "" {
		for _, it := range items {
			if it.Group != "" {
				if err := checkPackageDirName(it.Group); err != nil {
					return sum, err
				}
			}
		}
	}
	// The result must be a valid catalog before anything is written. It
	// is checked as compact JSON: the same blobs, without the
	// indentation, which means nothing to a catalog and can be most of
	// its size.
	task = f.Progress.Start("checking the result", 0)
	var compact []byte
	for _, it := range items {
		compact = declcfg.AppendCompactJSON(compact, it.Value)
		compact = append(compact, '\n')
	}
	mem := fstest.MapFS{}
	if len(compact) > 0 {
		mem["catalog.json"] = &fstest.MapFile{Data: compact, Mode: 0o644}
	}
	check, err := Validate{FS: mem, SkipSchema: true}.Run(ctx)
	compact = nil
	task.Done("")
	if err != nil {
		return sum, err
	}
	if err := check.Err(); err != nil {
		return sum, fmt.Errorf("the filtered catalog would not be valid (a bug: please report it with your configuration): %w", err)
	}
	sum = FilterSummary{Packages: len(cfg.Packages), Channels: len(cfg.Channels), Bundles: len(cfg.Bundles)}
	task = f.Progress.Start("writing", len(items))
	defer task.Done("")
	if f.OutputDir != "" {
		return sum, writeTreeWith(f.OutputDir, func(tmp string) error { return writePackages(tmp, format, items, task) })
	}
	bw := bufio.NewWriterSize(f.Out, 256<<10)
	var buf []byte
	for _, it := range items {
		if buf, err = format.Write(bw, buf, it.Value); err != nil {
			return sum, err
		}
		task.Add(1)
	}
	return sum, bw.Flush()
}

// writePackages writes items, in render order, into dir: one directory
// per package holding catalog.json (or .yaml), as opm migrate writes, and
// the blobs of no package in dir/catalog.json.
func writePackages(dir string, format declcfg.Format, items []declcfg.RenderItem, task *progress.Task) error {
	name := "catalog." + string(format)
	var (
		file *os.File
		bw   *bufio.Writer
		path string
		buf  []byte
	)
	closeFile := func() error {
		if file == nil {
			return nil
		}
		err := bw.Flush()
		if cerr := file.Close(); err == nil {
			err = cerr
		}
		file = nil
		if err != nil {
			return fmt.Errorf("write file %q: %w", path, err)
		}
		return nil
	}
	defer func() { _ = closeFile() }()
	// Render order groups each package's blobs; the package-less blobs
	// come last.
	for _, it := range items {
		p := name
		if it.Group != "" {
			p = filepath.Join(it.Group, name)
		}
		if p != path || file == nil {
			if err := closeFile(); err != nil {
				return err
			}
			path = p
			full := filepath.Join(dir, p)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				return err
			}
			var err error
			if file, err = os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err != nil {
				return err
			}
			if bw == nil {
				bw = bufio.NewWriterSize(file, 256<<10)
			} else {
				bw.Reset(file)
			}
		}
		var err error
		if buf, err = format.Write(bw, buf, it.Value); err != nil {
			return fmt.Errorf("write file %q: %w", path, err)
		}
		task.Add(1)
	}
	return closeFile()
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
			return nil, &FilterConfigError{Line: fp.Line, Field: "packages", Err: fmt.Errorf("package %q is not in the catalog%s", fp.Name, suggest.Hint(fp.Name, slices.Collect(maps.Keys(m))))}
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
				names := slices.Sorted(maps.Keys(pkg.Channels))
				return nil, &FilterConfigError{Line: fc.Line, Field: "channels", Err: fmt.Errorf("package %q has no channel %q (its channels: %s)%s", fp.Name, fc.Name, strings.Join(names, ", "), suggest.Hint(fc.Name, names))}
			}
			entries, err := filterChannel(ch, fc, c.Full)
			if err != nil {
				line := fc.Line
				if line == 0 {
					line = fp.Line
				}
				return nil, &FilterConfigError{Line: line, Err: err}
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
				return nil, &FilterConfigError{Line: fp.Line, Field: "defaultChannel", Err: fmt.Errorf("package %q: defaultChannel %q is not one of the channels kept (%s)", fp.Name, fp.DefaultChannel, strings.Join(slices.Sorted(maps.Keys(plan.channels)), ", "))}
			}
			return nil, &FilterConfigError{Line: fp.Line, Err: fmt.Errorf("package %q: its default channel %q is filtered out: name one of the channels kept (%s) as defaultChannel in the configuration", fp.Name, plan.defaultChannel, strings.Join(slices.Sorted(maps.Keys(plan.channels)), ", "))}
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
		bounds := fmt.Sprintf("between minVersion %s and maxVersion %s", fc.MinVersion, fc.MaxVersion)
		switch {
		case fc.MaxVersion == "":
			bounds = "at or above minVersion " + fc.MinVersion
		case fc.MinVersion == "":
			bounds = "at or below maxVersion " + fc.MaxVersion
		}
		var lowest, highest *semver.Version
		for _, b := range ch.Bundles {
			if lowest == nil || b.Version.LT(*lowest) {
				lowest = &b.Version
			}
			if highest == nil || b.Version.GT(*highest) {
				highest = &b.Version
			}
		}
		return nil, fmt.Errorf("package %q, channel %q: no bundle %s (its versions: %s to %s)", ch.Package.Name, ch.Name, bounds, lowest, highest)
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
