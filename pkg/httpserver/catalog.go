package httpserver

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cespare/xxhash/v2"

	"github.com/fastopm/fastopm/alpha/model"
	"github.com/fastopm/fastopm/alpha/property"
	"github.com/fastopm/fastopm/pkg/suggest"
)

// The package list with what each package's head bundle says of its
// operator (display name, provider, categories ...), and one bundle's
// details. The list's operator summaries are read when the list is first
// asked for, not at start-up: serve reaches SERVING as fast without them,
// and a process that is never asked keeps no more memory.

// catalogList is the package list with the operator summaries, made once.
type catalogList struct {
	once sync.Once
	pkgs []pkgSummary
}

// packageNames are the catalog's package names, for suggestions.
func (s *Server) packageNames() []string {
	names := make([]string, len(s.pkgs))
	for i, p := range s.pkgs {
		names[i] = p.Name
	}
	return names
}

// hasPackage says whether the catalog has the package.
func (s *Server) hasPackage(name string) bool {
	_, ok := slices.BinarySearchFunc(s.pkgs, name, func(p pkgSummary, n string) int { return strings.Compare(p.Name, n) })
	return ok
}

// catalog returns the package list with the operator summaries, reading
// them on the first call: for each package its olm.package blob (has it an
// icon?) and its default channel's head bundle's blob.
func (s *Server) catalog() []pkgSummary {
	s.list.once.Do(func() { s.list.pkgs = s.readCatalog() })
	return s.list.pkgs
}

func (s *Server) readCatalog() []pkgSummary {
	x := s.snap.Index
	out := slices.Clone(s.pkgs)
	var buf []byte
	for i := range out {
		p := &out[i]
		p.haystack = p.lower
		if pb, err := s.packageBlob(p.Name); err != nil {
			s.log.Error("cannot read a package", "package", p.Name, "error", err)
		} else {
			p.Icon = iconType(pb.Icon) != ""
		}
		k, ok := x.PackageIndex(p.Name)
		if !ok {
			continue
		}
		ch := x.Packages[k].Channel(p.DefaultChannel)
		if ch == nil || ch.Head < 0 || ch.Head >= len(ch.Entries) {
			continue
		}
		p.Head = x.BundleName(&ch.Entries[ch.Head])
		line, err := s.bundleLine(p.Name, p.Head, buf)
		if err != nil {
			s.log.Error("cannot read a bundle", "package", p.Name, "bundle", p.Head, "error", err)
			continue
		}
		if line == nil {
			continue
		}
		buf = line[:0]
		b, m, err := readCSVMetadata(line)
		if err != nil {
			s.log.Warn("cannot read a bundle's CSV metadata", "package", p.Name, "bundle", p.Head, "error", err)
		}
		if b != nil {
			p.Version = bundleVersion(b)
		}
		if m != nil {
			p.operatorSummary = summarize(m)
			p.haystack = strings.ToLower(strings.Join(append([]string{p.Name, p.DisplayName, p.ShortDescription}, p.Keywords...), "\n"))
		}
	}
	return out
}

// bundleVersion is the version of a bundle's olm.package property.
func bundleVersion(b *bundleBlob) string {
	for _, p := range b.Properties {
		if p.Type == property.TypePackage {
			var v struct {
				Version string `json:"version"`
			}
			if lenient(p.Value, &v) == nil {
				return v.Version
			}
		}
	}
	return ""
}

// filterParams are the list's filters: a package matches when, for each
// parameter given, one of its values is among the package's (case
// insensitive), as the page's filters do.
var filterParams = []string{"category", "provider", "capability", "installMode", "infrastructure"}

// newFilter returns the test of a package against the request's search
// text (every word must be in the package's name, display name, short
// description or keywords) and filters.
func newFilter(q url.Values) func(p *pkgSummary) bool {
	words := strings.Fields(strings.ToLower(q.Get("q")))
	return func(p *pkgSummary) bool {
		for _, w := range words {
			if !strings.Contains(p.haystack, w) {
				return false
			}
		}
		for _, f := range filterParams {
			want := q[f]
			if len(want) == 0 {
				continue
			}
			var have []string
			switch f {
			case "category":
				have = p.Categories
			case "provider":
				have = []string{p.Provider}
			case "capability":
				have = []string{p.Capabilities}
			case "installMode":
				have = p.InstallModes
			case "infrastructure":
				have = p.Infrastructure
			}
			if !slices.ContainsFunc(want, func(w string) bool {
				return slices.ContainsFunc(have, func(h string) bool { return strings.EqualFold(h, w) })
			}) {
				return false
			}
		}
		return true
	}
}

// headDetails reads what the head of p's default channel says of the
// operator; nil when it has no CSV metadata.
func (s *Server) headDetails(p *model.Package) *operatorDetails {
	if p == nil || p.DefaultChannel == nil {
		return nil
	}
	h, err := p.DefaultChannel.Head()
	if err != nil || !h.HasBlob {
		return nil
	}
	line, err := s.bundleLine(p.Name, h.Name, nil)
	if err != nil || line == nil {
		if err != nil {
			s.log.Error("cannot read a bundle", "package", p.Name, "bundle", h.Name, "error", err)
		}
		return nil
	}
	_, m, err := readCSVMetadata(line)
	if err != nil {
		s.log.Warn("cannot read a bundle's CSV metadata", "package", p.Name, "bundle", h.Name, "error", err)
	}
	if m == nil {
		return nil
	}
	return detail(h.Name, m)
}

// bundleDetail is /api/v1/packages/{package}/bundles/{bundle}.
type bundleDetail struct {
	Package    string   `json:"package"`
	Name       string   `json:"name"`
	Version    string   `json:"version,omitempty"`
	Image      string   `json:"image,omitempty"`
	Channels   []string `json:"channels"`
	Deprecated string   `json:"deprecated,omitempty"`
	// Properties are the bundle's properties but its olm.bundle.object
	// and olm.csv.metadata ones (shown as Operator).
	Properties    []property.Property `json:"properties"`
	RelatedImages []relatedImage      `json:"relatedImages,omitempty"`
	// Objects is the number of olm.bundle.object properties.
	Objects  int              `json:"objects,omitempty"`
	Operator *operatorDetails `json:"operator,omitempty"`
}

func (s *Server) bundle(w http.ResponseWriter, r *http.Request) {
	if !onlyParams(w, r) {
		return
	}
	v := s.pkgOf(w, r)
	if v == nil {
		return
	}
	name := r.PathValue("bundle")
	p := v.model[v.name]
	var b *model.Bundle
	a := bundleDetail{Package: v.name, Name: name, Channels: []string{}, Properties: []property.Property{}}
	for _, cn := range sortedKeys(p.Channels) {
		if cb := p.Channels[cn].Bundles[name]; cb != nil && cb.HasBlob {
			b = cb
			a.Channels = append(a.Channels, cn)
		}
	}
	if b == nil {
		var names []string
		for _, c := range p.Channels {
			for bn, cb := range c.Bundles {
				if cb.HasBlob {
					names = append(names, bn)
				}
			}
		}
		jsonError(w, r, http.StatusNotFound, "bundle %q not found in package %q%s", name, v.name, suggest.BundleHint(name, names))
		return
	}
	a.Version, a.Image, a.Deprecated = b.Version.String(), b.Image, message(b.Deprecation)
	line, err := s.bundleLine(v.name, name, nil)
	if err != nil || line == nil {
		s.log.Error("cannot read a bundle", "package", v.name, "bundle", name, "error", err)
		jsonError(w, r, http.StatusInternalServerError, "cannot read bundle %q", name)
		return
	}
	bb, m, err := readCSVMetadata(line)
	if err != nil {
		s.log.Warn("cannot read a bundle's CSV metadata", "package", v.name, "bundle", name, "error", err)
	}
	if bb != nil {
		for _, pr := range bb.Properties {
			switch pr.Type {
			case property.TypeBundleObject:
				a.Objects++
			case property.TypeCSVMetadata:
			default:
				a.Properties = append(a.Properties, pr)
			}
		}
		a.RelatedImages = bb.RelatedImages
	}
	if m != nil {
		a.Operator = detail(name, m)
	}
	writeJSON(w, r, http.StatusOK, a)
}

// bodyETag is a strong ETag of a body: a hash of its bytes.
func bodyETag(b []byte) string {
	return `"` + strconv.FormatUint(xxhash.Sum64(b), 36) + `"`
}
