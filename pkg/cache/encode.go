package cache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/fastopm/fastopm/pkg/registry"
)

// Field numbers of the api.Bundle message (proto/registry.proto). They are
// part of the wire contract; pkg/cache's tests check them against the
// generated descriptor.
const (
	fieldCsvName      protowire.Number = 1
	fieldPackageName  protowire.Number = 2
	fieldChannelName  protowire.Number = 3
	fieldCsvJSON      protowire.Number = 4
	fieldObject       protowire.Number = 5
	fieldBundlePath   protowire.Number = 6
	fieldProvidedAPIs protowire.Number = 7
	fieldRequiredAPIs protowire.Number = 8
	fieldVersion      protowire.Number = 9
	fieldSkipRange    protowire.Number = 10
	fieldDependencies protowire.Number = 11
	fieldProperties   protowire.Number = 12
	fieldReplaces     protowire.Number = 13
	fieldSkips        protowire.Number = 14
	fieldDeprecation  protowire.Number = 15
)

// Field numbers of the small messages inside a Bundle.
const (
	gvkGroup   protowire.Number = 1
	gvkVersion protowire.Number = 2
	gvkKind    protowire.Number = 3
	propType   protowire.Number = 1
	propValue  protowire.Number = 2
	depMessage protowire.Number = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// A bundle record is the invariant part of a bundle's Bundle message,
// encoded once, in protobuf segments that are joined with the
// per-channel-entry fields when an answer is sent:
//
//	header     9 × uint32 little endian: the lengths of the six segments,
//	           a flags word, the CRC-32C of the header's first 28 bytes
//	           and the first three segments, and the CRC-32C of the last
//	           three
//	names      fields 1, 2 (csvName, packageName)
//	details    fields 6-9 (bundlePath, providedApis, requiredApis, version)
//	properties fields 11, 12 (dependencies, properties)
//	csvJSON    field 4
//	before     field 5, repeated: the objects before the CSV
//	after      field 5, repeated: the objects after the CSV
//
// The CSV is usually one of the bundle's objects and its largest: it is
// stored once, as csvJson, and sent a second time as an object between
// before and after when flag csvIsObject is set.
//
// ListBundles leaves out csvJson and object for bundles with an image, so
// it reads only the header and the first three segments (BodyRef.Prefix
// bytes); the other answers read the whole record (BodyRef.Len bytes).
const (
	recordHeader = 36
	flagsAt      = 24
	crcHeadAt    = 28
	crcBodyAt    = 32

	flagCSVIsObject = 1
)

// Parts are the decoded segments of a bundle record (protobuf bytes).
type Parts struct {
	// Names are fields 1 and 2 (csvName, packageName); Details fields 6
	// to 9 (bundlePath, providedApis, requiredApis, version); Properties
	// fields 11 and 12 (dependencies, properties).
	Names, Details, Properties []byte
	// CsvJSON is field 4; ObjectsBefore and ObjectsAfter are field 5 entries
	// before and after the CSV.
	CsvJSON, ObjectsBefore, ObjectsAfter []byte
	// CSVIsObject says the CSV is also an object, between ObjectsBefore and
	// ObjectsAfter.
	CSVIsObject bool
	// csvHeader is the length of CsvJSON's tag and length prefix.
	csvHeader int
}

// encodeBundle appends the record of a's answer to dst.
func encodeBundle(dst []byte, a *registry.BundleAnswer) ([]byte, error) {
	if !utf8.Valid(a.CsvJSON) {
		return dst, fmt.Errorf("bundle %q: csvJson is not valid UTF-8", a.CsvName)
	}
	csvAt := -1
	for i, o := range a.Objects {
		if csvAt < 0 && len(a.CsvJSON) > 0 && len(o) == len(a.CsvJSON) && (len(o) == 0 || &o[0] == &a.CsvJSON[0] || bytes.Equal(o, a.CsvJSON)) {
			csvAt = i
			continue
		}
		if !utf8.Valid(o) {
			return dst, fmt.Errorf("bundle %q: object %d is not valid UTF-8", a.CsvName, i)
		}
	}
	start := len(dst)
	dst = append(dst, make([]byte, recordHeader)...)
	var lens [6]int
	mark := len(dst)
	seg := func(i int) { lens[i], mark = len(dst)-mark, len(dst) }
	dst = appendString(dst, fieldCsvName, a.CsvName)
	dst = appendString(dst, fieldPackageName, a.PackageName)
	seg(0)
	dst = appendString(dst, fieldBundlePath, a.BundlePath)
	for _, g := range a.ProvidedAPIs {
		dst = appendGVK(dst, fieldProvidedAPIs, g)
	}
	for _, g := range a.RequiredAPIs {
		dst = appendGVK(dst, fieldRequiredAPIs, g)
	}
	dst = appendString(dst, fieldVersion, a.Version)
	seg(1)
	for _, d := range a.Dependencies {
		dst = appendProperty(dst, fieldDependencies, d)
	}
	for _, p := range a.Properties {
		dst = appendProperty(dst, fieldProperties, p)
	}
	seg(2)
	dst = appendBytes(dst, fieldCsvJSON, a.CsvJSON)
	seg(3)
	for i, o := range a.Objects {
		if i == csvAt {
			seg(4)
			continue
		}
		dst = protowire.AppendTag(dst, fieldObject, protowire.BytesType)
		dst = protowire.AppendBytes(dst, o)
	}
	if csvAt < 0 {
		seg(4)
	}
	seg(5)
	h := dst[start : start+recordHeader]
	for i, n := range lens {
		if n > maxSegment {
			return dst[:start], fmt.Errorf("bundle %q: answer too large (%d bytes)", a.CsvName, n)
		}
		binary.LittleEndian.PutUint32(h[4*i:], uint32(n))
	}
	if csvAt >= 0 {
		binary.LittleEndian.PutUint32(h[flagsAt:], flagCSVIsObject)
	}
	head := start + recordHeader + lens[0] + lens[1] + lens[2]
	crc := crc32.Update(crc32.Checksum(h[:crcHeadAt], castagnoli), castagnoli, dst[start+recordHeader:head])
	binary.LittleEndian.PutUint32(h[crcHeadAt:], crc)
	binary.LittleEndian.PutUint32(h[crcBodyAt:], crc32.Checksum(dst[head:], castagnoli))
	return dst, nil
}

// maxSegment bounds one segment of a record (the lengths are uint32 and
// gRPC cannot send 2 GiB messages anyway).
const maxSegment = 1<<31 - 1

// errCorruptRecord is a record whose header or checksum is wrong.
var errCorruptRecord = errors.New("record checksum mismatch")

// decodeRecord splits a record read from the body store. rec holds either
// the whole record or only its list prefix (BodyRef.Prefix bytes), in which
// case the payload segments are nil.
func decodeRecord(rec []byte) (*Parts, error) {
	if len(rec) < recordHeader {
		return nil, fmt.Errorf("%w: short record", errCorruptRecord)
	}
	h := rec[:recordHeader]
	var lens [6]int
	for i := range lens {
		lens[i] = int(binary.LittleEndian.Uint32(h[4*i:]))
	}
	head := recordHeader + lens[0] + lens[1] + lens[2]
	if head > len(rec) || head < recordHeader {
		return nil, fmt.Errorf("%w: bad segment lengths", errCorruptRecord)
	}
	crc := crc32.Update(crc32.Checksum(h[:crcHeadAt], castagnoli), castagnoli, rec[recordHeader:head])
	if crc != binary.LittleEndian.Uint32(h[crcHeadAt:]) {
		return nil, errCorruptRecord
	}
	p := &Parts{CSVIsObject: binary.LittleEndian.Uint32(h[flagsAt:])&flagCSVIsObject != 0}
	off := recordHeader
	next := func(i int) []byte {
		b := rec[off : off+lens[i]]
		off += lens[i]
		return b
	}
	p.Names, p.Details, p.Properties = next(0), next(1), next(2)
	if len(rec) == head {
		return p, nil
	}
	if len(rec) != head+lens[3]+lens[4]+lens[5] {
		return nil, fmt.Errorf("%w: bad record length", errCorruptRecord)
	}
	if crc32.Checksum(rec[head:], castagnoli) != binary.LittleEndian.Uint32(h[crcBodyAt:]) {
		return nil, errCorruptRecord
	}
	p.CsvJSON, p.ObjectsBefore, p.ObjectsAfter = next(3), next(4), next(5)
	if p.CSVIsObject {
		num, typ, n := protowire.ConsumeTag(p.CsvJSON)
		if n < 0 || num != fieldCsvJSON || typ != protowire.BytesType {
			return nil, fmt.Errorf("%w: CSV object without csvJson", errCorruptRecord)
		}
		v, m := protowire.ConsumeVarint(p.CsvJSON[n:])
		if m < 0 || uint64(len(p.CsvJSON)-n-m) != v {
			return nil, fmt.Errorf("%w: bad csvJson length", errCorruptRecord)
		}
		p.csvHeader = n + m
	}
	return p, nil
}

// recordLens returns the total length of a record and of its list prefix.
func recordLens(rec []byte) (total, list int) {
	h := rec[:recordHeader]
	list = recordHeader
	for i := range 3 {
		list += int(binary.LittleEndian.Uint32(h[4*i:]))
	}
	total = list
	for i := 3; i < 6; i++ {
		total += int(binary.LittleEndian.Uint32(h[4*i:]))
	}
	return total, list
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendBytes(b []byte, num protowire.Number, s []byte) []byte {
	if len(s) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, s)
}

func appendGVK(b []byte, num protowire.Number, g registry.GVK) []byte {
	n := sizeString(gvkGroup, g.Group) + sizeString(gvkVersion, g.Version) + sizeString(gvkKind, g.Kind)
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(n))
	b = appendString(b, gvkGroup, g.Group)
	b = appendString(b, gvkVersion, g.Version)
	return appendString(b, gvkKind, g.Kind)
}

func appendProperty(b []byte, num protowire.Number, p registry.Property) []byte {
	n := sizeString(propType, p.Type) + sizeBytes(propValue, p.Value)
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(n))
	b = appendString(b, propType, p.Type)
	return appendBytes(b, propValue, p.Value)
}

func sizeString(num protowire.Number, s string) int {
	if s == "" {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeBytes(len(s))
}

func sizeBytes(num protowire.Number, s []byte) int {
	if len(s) == 0 {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeBytes(len(s))
}

// Shape says which optional parts a Bundle answer carries.
type Shape struct {
	// Payload includes csvJson and object (the stored record must have
	// been read whole).
	Payload bool
	// DropObjects leaves out object even when Payload is set.
	DropObjects bool
	// Edges includes replaces and skips (ListBundles only: the other
	// answers clear them, as upstream does).
	Edges bool
}

// AppendBundle joins a bundle's stored segments with the fields of one channel
// entry into the pieces of a Bundle message, in field order, appending
// them to dst. It returns the pieces and the message's total size.
func AppendBundle(dst [][]byte, p *Parts, h registry.Hit, s Shape) ([][]byte, int) {
	var pre, mid, post []byte
	pre = appendString(pre, fieldChannelName, h.Channel.Name)
	mid = appendString(mid, fieldSkipRange, h.Entry.SkipRange)
	if s.Edges {
		post = appendString(post, fieldReplaces, h.Entry.Replaces)
		for _, sk := range h.Entry.Skips {
			post = protowire.AppendTag(post, fieldSkips, protowire.BytesType)
			post = protowire.AppendString(post, sk)
		}
	}
	if d := h.Bundle.Deprecation; d != nil {
		post = protowire.AppendTag(post, fieldDeprecation, protowire.BytesType)
		post = protowire.AppendVarint(post, uint64(sizeString(depMessage, d.Message)))
		post = appendString(post, depMessage, d.Message)
	}
	start := len(dst)
	dst = append(dst, p.Names, pre)
	if s.Payload {
		dst = append(dst, p.CsvJSON)
		if !s.DropObjects {
			dst = append(dst, p.ObjectsBefore)
			if p.CSVIsObject {
				// csvJson's field 4 header, retagged as field 5, and
				// its payload: the same bytes, stored once.
				h := p.csvHeader
				hdr := protowire.AppendTag(nil, fieldObject, protowire.BytesType)
				hdr = protowire.AppendVarint(hdr, uint64(len(p.CsvJSON)-h))
				dst = append(dst, hdr, p.CsvJSON[h:])
			}
			dst = append(dst, p.ObjectsAfter)
		}
	}
	dst = append(dst, p.Details, mid, p.Properties, post)
	n := 0
	out := dst[:start]
	for _, piece := range dst[start:] {
		if len(piece) > 0 {
			out = append(out, piece)
			n += len(piece)
		}
	}
	return out, n
}
