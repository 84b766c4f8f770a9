package install

import (
	"encoding/binary"
	"errors"
	"maps"
	"slices"

	"github.com/cespare/xxhash/v2"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/model"
	"github.com/fastopm/fastopm/alpha/property"
)

// A snapshot is what Load builds of a catalog, but its name and priority,
// as bytes: its packages, channels and upgrade edges, and each bundle's
// name, package, image, place in the catalog and properties (those the
// resolver reads). DecodeSnapshot rebuilds from it the catalog Load builds,
// through the same code (a bundle's properties are read again as they
// were from its blob), so that the answers over either are the same; the
// query commands keep snapshots in their catalog cache, keyed by the
// catalog's fingerprint, and load nothing from a catalog they have seen.
//
// The bytes: a magic string (its last byte the format's version), the
// bundles (name, package, image, source path and line, properties), the
// packages (name, default channel, channels, each channel's entries: the
// bundle's number, replaces, skipRange, skips), all varint-encoded, and
// the XXH64 of everything before it. DecodeSnapshot checks the checksum
// and every length and number before it builds anything.

// snapshotMagic starts a snapshot.
const snapshotMagic = "opminst\x01"

// SnapshotFormat names the format of snapshots, and of what Load builds:
// a cache of snapshots keys them by it, so that a snapshot written before
// either changed is not read. Change its version when they do.
const SnapshotFormat = snapshotMagic

// ErrBadSnapshot is DecodeSnapshot's error for bytes that are no snapshot
// of this format (damaged, cut short, another version).
var ErrBadSnapshot = errors.New("not a valid catalog snapshot")

// AppendSnapshot appends the snapshot of c, a catalog Load or
// DecodeSnapshot made, to b.
func (c *Catalog) AppendSnapshot(b []byte) []byte {
	start := len(b)
	b = append(b, snapshotMagic...)
	// Bundles, numbered in the order of the catalog's entries.
	num := map[*Bundle]int{}
	var bundles []*Bundle
	for _, e := range c.entries {
		if _, ok := num[e.Bundle]; !ok {
			num[e.Bundle] = len(bundles)
			bundles = append(bundles, e.Bundle)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(bundles)))
	for _, bn := range bundles {
		b = appendString(b, bn.Name)
		b = appendString(b, bn.Package)
		b = appendString(b, bn.Image)
		b = appendString(b, bn.Source.Path)
		b = binary.AppendUvarint(b, uint64(max(bn.Source.Line, 0)))
		own := bn.Properties[:bn.own]
		b = binary.AppendUvarint(b, uint64(len(own)))
		for _, p := range own {
			b = appendString(b, p.Type)
			b = appendString(b, string(p.Value))
		}
	}
	names := slices.Sorted(maps.Keys(c.packages))
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, pn := range names {
		p := c.packages[pn]
		b = appendString(b, pn)
		b = appendString(b, p.defaultChannel)
		b = binary.AppendUvarint(b, uint64(len(p.channels)))
		for _, cn := range p.channels {
			b = appendString(b, cn)
			entries := p.byChannel[cn]
			b = binary.AppendUvarint(b, uint64(len(entries)))
			for _, e := range entries {
				b = binary.AppendUvarint(b, uint64(num[e.Bundle]))
				b = appendString(b, e.Replaces)
				b = appendString(b, e.SkipRange)
				b = binary.AppendUvarint(b, uint64(len(e.Skips)))
				for _, s := range e.Skips {
					b = appendString(b, s)
				}
			}
		}
	}
	return binary.BigEndian.AppendUint64(b, xxhash.Sum64(b[start:]))
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// DecodeSnapshot rebuilds the catalog name (with priority) that the
// snapshot data holds. Bytes that are no such snapshot are ErrBadSnapshot.
func DecodeSnapshot(data []byte, name string, priority int) (*Catalog, error) {
	if len(data) < len(snapshotMagic)+8 || string(data[:len(snapshotMagic)]) != snapshotMagic {
		return nil, ErrBadSnapshot
	}
	body := data[:len(data)-8]
	if xxhash.Sum64(body) != binary.BigEndian.Uint64(data[len(data)-8:]) {
		return nil, ErrBadSnapshot
	}
	r := snapReader{b: body[len(snapshotMagic):]}
	bundles := make([]*Bundle, r.count())
	for i := range bundles {
		bd := declcfg.Bundle{Name: r.string(), Package: r.string(), Image: r.string()}
		src := model.Source{Path: r.string(), Line: int(r.uvarint())}
		props := make([]property.Property, r.count())
		for j := range props {
			props[j] = property.Property{Type: r.string(), Value: r.bytes()}
		}
		if r.err != nil {
			return nil, ErrBadSnapshot
		}
		bd.Properties = props
		bundles[i] = newBundle(&bd)
		bundles[i].Source = src
	}
	l := make(layout, r.count())
	for i := range l {
		lp := &l[i]
		lp.name, lp.defaultChannel = r.string(), r.string()
		lp.channels = make([]layoutChannel, r.count())
		for j := range lp.channels {
			lc := &lp.channels[j]
			lc.name = r.string()
			lc.entries = make([]layoutEntry, r.count())
			for k := range lc.entries {
				le := &lc.entries[k]
				n := r.uvarint()
				if n >= uint64(len(bundles)) {
					return nil, ErrBadSnapshot
				}
				le.bundle = bundles[n]
				le.replaces, le.skipRange = r.string(), r.string()
				if ns := r.count(); ns > 0 {
					le.skips = make([]string, ns)
					for s := range le.skips {
						le.skips[s] = r.string()
					}
				}
			}
		}
		if r.err != nil {
			return nil, ErrBadSnapshot
		}
	}
	if r.err != nil || len(r.b) != 0 {
		return nil, ErrBadSnapshot
	}
	return l.catalog(name, priority), nil
}

// snapReader reads a snapshot's varints and strings; the first problem
// sticks in err, and every read after it gives zero values.
type snapReader struct {
	b   []byte
	err error
}

func (r *snapReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = ErrBadSnapshot
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads the number of items that follow, each at least a byte: no
// more than the bytes left.
func (r *snapReader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.err = ErrBadSnapshot
		return 0
	}
	return int(n)
}

func (r *snapReader) bytes() []byte {
	n := r.count()
	if r.err != nil {
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *snapReader) string() string { return string(r.bytes()) }
