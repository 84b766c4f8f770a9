package action

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/model"
	"github.com/fastopm/fastopm/alpha/property"
	"github.com/fastopm/fastopm/pkg/canonjson"
	"github.com/fastopm/fastopm/pkg/csv"
	"github.com/fastopm/fastopm/pkg/suggest"
)

// List reads a catalog (a directory or a catalog image) into the model,
// validated as upstream's `opm alpha list` validates it, and lists its
// packages, channels or bundles in upstream's tables.
type List struct {
	// Ref is the catalog.
	Ref string
	// Package, when set, limits channels and bundles to that package.
	Package string
	// Sources resolves Ref; nil means directories only. Bundle references
	// are refused.
	Sources SourceResolver
	// MaxFileSize is the largest catalog file read, in bytes (0: the
	// loader's default; < 0: no limit).
	MaxFileSize int64
}

// PackageRow is a line of `list packages`.
type PackageRow struct {
	Name, DisplayName, DefaultChannel string
}

// ChannelRow is a line of `list channels`.
type ChannelRow struct {
	Package, Name, Head string
}

// BundleRow is a line of `list bundles`: a bundle in one of its channels.
type BundleRow struct {
	Package, Channel, Name, Replaces string
	Skips                            []string
	SkipRange, Image                 string
}

// Packages lists every package, by name, with the display name of its
// default channel head's ClusterServiceVersion.
func (l List) Packages(ctx context.Context) ([]PackageRow, error) {
	m, names, err := l.load(ctx, true)
	if err != nil {
		return nil, err
	}
	rows := make([]PackageRow, 0, len(m))
	for _, pkg := range m {
		row := PackageRow{Name: pkg.Name}
		if pkg.DefaultChannel != nil {
			row.DefaultChannel = pkg.DefaultChannel.Name
			if head, err := pkg.DefaultChannel.Head(); err == nil && head != nil {
				row.DisplayName = names[bundleKey{pkg.Name, head.Name}]
			}
		}
		rows = append(rows, row)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	return rows, nil
}

// Channels lists the channels of every package (or of l.Package) by
// package and name, with their heads.
func (l List) Channels(ctx context.Context) ([]ChannelRow, error) {
	m, _, err := l.load(ctx, false)
	if err != nil {
		return nil, err
	}
	var rows []ChannelRow
	for _, pkg := range m {
		for _, ch := range pkg.Channels {
			row := ChannelRow{Package: pkg.Name, Name: ch.Name}
			if head, err := ch.Head(); err != nil {
				row.Head = fmt.Sprintf("ERROR: %s", err)
			} else {
				row.Head = head.Name
			}
			rows = append(rows, row)
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Package != rows[j].Package {
			return rows[i].Package < rows[j].Package
		}
		return rows[i].Name < rows[j].Name
	})
	return rows, nil
}

// Bundles lists the bundles of every package (or of l.Package), once per
// channel they are in, by package, channel and name.
func (l List) Bundles(ctx context.Context) ([]BundleRow, error) {
	m, _, err := l.load(ctx, false)
	if err != nil {
		return nil, err
	}
	var rows []BundleRow
	for _, pkg := range m {
		for _, ch := range pkg.Channels {
			for _, b := range ch.Bundles {
				rows = append(rows, BundleRow{Package: pkg.Name, Channel: ch.Name, Name: b.Name, Replaces: b.Replaces,
					Skips: b.Skips, SkipRange: b.SkipRange, Image: b.Image})
			}
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		a, b := &rows[i], &rows[j]
		if a.Package != b.Package {
			return a.Package < b.Package
		}
		if a.Channel != b.Channel {
			return a.Channel < b.Channel
		}
		return a.Name < b.Name
	})
	return rows, nil
}

// WritePackages writes upstream's table of packages.
func WritePackages(w io.Writer, rows []PackageRow) error {
	tw := newListTable(w, "NAME\tDISPLAY NAME\tDEFAULT CHANNEL")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, r.DisplayName, r.DefaultChannel)
	}
	return tw.Flush()
}

// WriteChannels writes upstream's table of channels.
func WriteChannels(w io.Writer, rows []ChannelRow) error {
	tw := newListTable(w, "PACKAGE\tCHANNEL\tHEAD")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Package, r.Name, r.Head)
	}
	return tw.Flush()
}

// WriteBundles writes upstream's table of bundles.
func WriteBundles(w io.Writer, rows []BundleRow) error {
	tw := newListTable(w, "PACKAGE\tCHANNEL\tBUNDLE\tREPLACES\tSKIPS\tSKIP RANGE\tIMAGE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Package, r.Channel, r.Name, r.Replaces, strings.Join(r.Skips, ","), r.SkipRange, r.Image)
	}
	return tw.Flush()
}

// newListTable starts a table with upstream's tabwriter settings (no
// minimum width, tabs of 4, padding 2, spaces) and its header line. The
// tabwriter holds errors until Flush.
func newListTable(w io.Writer, header string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	return tw
}

type bundleKey struct{ pkg, name string }

// load reads the catalog into the model and validates it. With
// displayNames, it also reads the display name of every bundle's
// ClusterServiceVersion (its first olm.bundle.object that is a CSV), as
// upstream's loader finds a bundle's CSV.
func (l List) load(ctx context.Context, displayNames bool) (model.Model, map[bundleKey]string, error) {
	sources := l.Sources
	if sources == nil {
		sources = DirResolver{}
	}
	src, err := sources.Resolve(ctx, l.Ref)
	if err != nil {
		if errors.Is(err, ErrNotAllowed) {
			return nil, nil, fmt.Errorf("cannot list non-index %q", l.Ref)
		}
		return nil, nil, fmt.Errorf("render reference %q: %w", l.Ref, err)
	}
	if src.Close != nil {
		defer src.Close() //nolint:errcheck // best-effort cleanup of a temporary unpack
	}
	if src.FS == nil {
		return nil, nil, fmt.Errorf("cannot list non-index %q", l.Ref)
	}
	bld := model.NewBuilder()
	var (
		mu    sync.Mutex
		names = map[bundleKey]string{}
	)
	err = declcfg.Walk(ctx, src.FS, func(b *declcfg.Blob) error {
		bld.AddBlob(b)
		if displayNames && b.Schema == declcfg.SchemaBundle {
			if name := displayName(b); name != "" {
				mu.Lock()
				names[bundleKey{b.Package, b.Name}] = name
				mu.Unlock()
			}
		}
		return nil
	}, declcfg.WithMaxFileSize(l.MaxFileSize))
	var walkErrs declcfg.Errors
	if err != nil && !errors.As(err, &walkErrs) {
		return nil, nil, err
	}
	if len(walkErrs) > 0 {
		bld.MarkIncomplete()
	}
	m, problems := bld.Build()
	// What upstream's render would refuse (files and blobs that do not
	// read) is reported as render reports it; the rest as validate does.
	var loadMsgs []string
	for _, e := range walkErrs {
		loadMsgs = append(loadMsgs, e.Error())
	}
	for _, p := range problems.Errors() {
		if p.Rule == model.RuleParse {
			loadMsgs = append(loadMsgs, p.Message)
		}
	}
	if len(loadMsgs) > 0 {
		sort.Strings(loadMsgs)
		return nil, nil, fmt.Errorf("render reference %q: %s", l.Ref, strings.Join(loadMsgs, "\n"))
	}
	if err := problems.Err(); err != nil {
		return nil, nil, err
	}
	if l.Package != "" {
		pkg, ok := m[l.Package]
		if !ok {
			// Upstream's words, and a name near the one given.
			return nil, nil, fmt.Errorf("package %q not found%s", l.Package, suggest.Hint(l.Package, slices.Collect(maps.Keys(m))))
		}
		m = model.Model{l.Package: pkg}
	}
	return m, names, nil
}

// displayName returns spec.displayName of the bundle's CSV (its first
// olm.bundle.object that is a ClusterServiceVersion, as upstream's loader
// picks it), or "" when it has none or the CSV does not decode as
// upstream's typed CSV. Objects that do not mention the kind are skipped
// unread: they cannot be the CSV (and the model reports broken ones).
func displayName(b *declcfg.Blob) string {
	if !bytes.Contains(b.JSON, []byte(property.TypeBundleObject)) {
		return ""
	}
	bd, err := declcfg.DecodeBundle(b.JSON)
	if err != nil {
		return ""
	}
	var (
		buf []byte
		c   canonjson.Canonicalizer
	)
	for _, p := range bd.Properties {
		if p.Type != property.TypeBundleObject {
			continue
		}
		if buf, err = property.BundleObjectData(buf[:0], p.Value); err != nil || !bytes.Contains(buf, []byte(property.CSVKind)) {
			continue
		}
		js, err := property.ManifestJSON(buf)
		if err != nil || !property.IsCSV(js, &c) {
			continue
		}
		cv, err := csv.Parse(js)
		if err != nil {
			return ""
		}
		return cv.Spec.DisplayName
	}
	return ""
}
