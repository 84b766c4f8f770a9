package cache

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/fastopm/fastopm/alpha/model"
	"github.com/fastopm/fastopm/pkg/registry"
)

// The index is a flat sequence of unsigned varints and length-prefixed
// strings, in this order: producer; fingerprint (count, then path, size and
// 8-byte XXH64 per file); packages (count, then per package: name,
// default channel, deprecation, channels: name, deprecation, head, entries:
// bundle, replaces, skips, skip range); bundles (count, then package,
// name, flags, deprecation, provided APIs, body reference); custom blobs
// (count, then schema, package, name, hash, body reference); the table of
// the catalog's JSON lines (0, or 1 then the section's offset, length and
// CRC-32C, the strings, and per line its length and the indexes of its
// schema, package and name among the strings, 0 for none). A deprecation
// is a 0 or 1 followed, for 1, by its message.

type encoder struct{ b []byte }

func (e *encoder) uv(v uint64)  { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) int(v int)    { e.uv(uint64(v)) }
func (e *encoder) str(s string) { e.int(len(s)); e.b = append(e.b, s...) }

func (e *encoder) dep(d *model.Deprecation) {
	if d == nil {
		e.uv(0)
		return
	}
	e.uv(1)
	e.str(d.Message)
}

func (e *encoder) body(r registry.BodyRef) {
	e.uv(r.Off)
	e.uv(uint64(r.Len))
	e.uv(uint64(r.Prefix))
}

func encodeIndex(x *registry.Index, fp Fingerprint, producer string, lines *Lines) []byte {
	e := &encoder{b: make([]byte, 0, 64<<10)}
	e.str(producer)
	e.int(len(fp.Files))
	for _, f := range fp.Files {
		e.str(f.Path)
		e.uv(uint64(f.Size))
		e.b = append(e.b, f.Sum[:]...)
	}
	e.int(len(x.Packages))
	for i := range x.Packages {
		p := &x.Packages[i]
		e.str(p.Name)
		e.str(p.DefaultChannel)
		e.dep(p.Deprecation)
		e.int(len(p.Channels))
		for j := range p.Channels {
			c := &p.Channels[j]
			e.str(c.Name)
			e.dep(c.Deprecation)
			e.int(c.Head)
			e.int(len(c.Entries))
			for k := range c.Entries {
				en := &c.Entries[k]
				e.int(en.Bundle)
				e.str(en.Replaces)
				e.int(len(en.Skips))
				for _, s := range en.Skips {
					e.str(s)
				}
				e.str(en.SkipRange)
			}
		}
	}
	e.int(len(x.Bundles))
	for i := range x.Bundles {
		b := &x.Bundles[i]
		e.int(b.Package)
		e.str(b.Name)
		var flags uint64
		if b.HasImage {
			flags |= 1
		}
		e.uv(flags)
		e.dep(b.Deprecation)
		e.int(len(b.Provides))
		for _, g := range b.Provides {
			e.str(g.Group)
			e.str(g.Version)
			e.str(g.Kind)
		}
		e.body(b.Body)
	}
	e.int(len(x.Metas))
	for i := range x.Metas {
		m := &x.Metas[i]
		e.str(m.Schema)
		e.str(m.Package)
		e.str(m.Name)
		e.b = binary.LittleEndian.AppendUint64(e.b, m.Hash)
		e.body(m.Body)
	}
	encodeLines(e, lines)
	return e.b
}

var errShort = errors.New("unexpected end of index")

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uv() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

// int reads a non-negative int no larger than max.
func (d *decoder) int(max int) int {
	v := d.uv()
	if v > uint64(max) {
		if d.err == nil {
			d.err = fmt.Errorf("value %d out of range", v)
		}
		return 0
	}
	return int(v)
}

// list makes a list of n elements; nil when n is 0.
func list[T any](n int) []T {
	if n == 0 {
		return nil
	}
	return make([]T, n)
}

// count reads the length of a list whose elements take at least one byte
// each, so a damaged count cannot make a huge allocation.
func (d *decoder) count() int { return d.int(len(d.b)) }

func (d *decoder) raw(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.b) {
		d.err = errShort
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string { return string(d.raw(d.count())) }

func (d *decoder) dep() *model.Deprecation {
	switch d.uv() {
	case 0:
		return nil
	case 1:
		return &model.Deprecation{Message: d.str()}
	}
	if d.err == nil {
		d.err = errors.New("bad deprecation flag")
	}
	return nil
}

func (d *decoder) body() registry.BodyRef {
	return registry.BodyRef{Off: d.uv(), Len: uint32(d.int(1<<32 - 1)), Prefix: uint32(d.int(1<<32 - 1))}
}

func decodeIndex(b []byte) (*registry.Index, Fingerprint, string, *Lines, error) {
	d := &decoder{b: b}
	producer := d.str()
	var fp Fingerprint
	fp.Files = list[FileSum](d.count())
	for i := range fp.Files {
		f := &fp.Files[i]
		f.Path = d.str()
		f.Size = int64(d.int(1 << 62))
		copy(f.Sum[:], d.raw(len(f.Sum)))
	}
	x := &registry.Index{}
	x.Packages = list[registry.Package](d.count())
	for i := range x.Packages {
		p := &x.Packages[i]
		p.Name = d.str()
		p.DefaultChannel = d.str()
		p.Deprecation = d.dep()
		p.Channels = list[registry.Channel](d.count())
		for j := range p.Channels {
			c := &p.Channels[j]
			c.Name = d.str()
			c.Deprecation = d.dep()
			c.Head = d.int(1 << 31)
			c.Entries = list[registry.Entry](d.count())
			for k := range c.Entries {
				en := &c.Entries[k]
				en.Bundle = d.int(1 << 31)
				en.Replaces = d.str()
				en.Skips = list[string](d.count())
				for s := range en.Skips {
					en.Skips[s] = d.str()
				}
				en.SkipRange = d.str()
			}
		}
	}
	x.Bundles = list[registry.Bundle](d.count())
	for i := range x.Bundles {
		b := &x.Bundles[i]
		b.Package = d.int(1 << 31)
		b.Name = d.str()
		b.HasImage = d.uv()&1 != 0
		b.Deprecation = d.dep()
		b.Provides = list[registry.GVK](d.count())
		for g := range b.Provides {
			b.Provides[g] = registry.GVK{Group: d.str(), Version: d.str(), Kind: d.str()}
		}
		b.Body = d.body()
	}
	x.Metas = list[registry.Meta](d.count())
	for i := range x.Metas {
		m := &x.Metas[i]
		m.Schema = d.str()
		m.Package = d.str()
		m.Name = d.str()
		if h := d.raw(8); h != nil {
			m.Hash = binary.LittleEndian.Uint64(h)
		}
		m.Body = d.body()
	}
	lines := decodeLines(d)
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%d unexpected bytes after the index", len(d.b))
	}
	if d.err != nil {
		return nil, Fingerprint{}, "", nil, d.err
	}
	return x, fp, producer, lines, nil
}
