package olmv1

import (
	"fmt"
)

// StatusNoResolution is a row whose ClusterExtension does not resolve.
const StatusNoResolution = "does not resolve"

// Report answers, for every package and channel of a catalog, which
// bundle a ClusterExtension for that channel resolves to and whether OLM
// v1 can install it.
type Report struct {
	Catalog string `json:"catalog"`
	Rows    []*Row `json:"rows"`
}

// Row is one package and channel.
type Row struct {
	Package        string `json:"package"`
	Channel        string `json:"channel"`
	DefaultChannel bool   `json:"defaultChannel,omitempty"`
	// Bundle is the bundle OLM v1 resolves to (or picks and then refuses).
	Bundle  string `json:"bundle,omitempty"`
	Version string `json:"version,omitempty"`
	// Status is an installability Status, or StatusNoResolution.
	Status string `json:"status"`
	// Reasons are why not: the resolution error, or Check's reasons.
	Reasons []string `json:"reasons,omitempty"`
	Notes   []string `json:"notes,omitempty"`
	// Checked is what Check read.
	Checked string `json:"checked,omitempty"`

	answer *Answer
}

// Answer returns the resolution behind the row.
func (r *Row) Answer() *Answer { return r.answer }

// Counts returns how many rows have each status.
func (r *Report) Counts() map[string]int {
	out := map[string]int{}
	for _, row := range r.Rows {
		out[row.Status]++
	}
	return out
}

// All asks, for every package and channel of the catalog named catalog
// ("" for the first), what a ClusterExtension with that channel and a
// selector for that catalog resolves to, and whether OLM v1 installs it.
// check, when not nil, replaces Check for bundles whose objects the
// catalog does not carry (it may pull the bundle image).
func (r *Resolver) All(catalog string, check func(*Bundle) *Installability) (*Report, error) {
	var cat *Catalog
	for _, c := range r.catalogs {
		if catalog == "" || c.Name == catalog {
			cat = c
			break
		}
	}
	if cat == nil {
		return nil, fmt.Errorf("no catalog named %q", catalog)
	}
	rep := &Report{Catalog: cat.Name, Rows: []*Row{}}
	for _, pn := range cat.Packages() {
		p := cat.Package(pn)
		for _, ch := range p.Channels {
			spec := Spec{Package: pn, Channels: []string{ch.Name}, Selector: NameLabel + "=" + cat.Name}
			a, err := r.Resolve(spec, nil)
			if err != nil {
				return nil, err
			}
			row := &Row{Package: pn, Channel: ch.Name, DefaultChannel: ch.Name == p.DefaultChannel, answer: a}
			if a.Bundle != nil {
				row.Bundle, row.Version = a.Bundle.Name, a.Bundle.Version
			}
			if a.Bundle != nil && a.Installable != nil && check != nil && !a.Bundle.bundle.HasObjects() {
				a.Installable = check(a.Bundle.bundle)
			}
			switch {
			case a.Installable != nil:
				row.Status = string(a.Installable.Status)
				row.Reasons = a.Installable.Reasons
				row.Notes = a.Installable.Notes
				row.Checked = a.Installable.Checked
			default:
				row.Status = StatusNoResolution
				row.Reasons = []string{a.Error}
			}
			rep.Rows = append(rep.Rows, row)
		}
	}
	return rep, nil
}
