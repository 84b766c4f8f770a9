package cache

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/fastopm/fastopm/pkg/canonjson"
)

// Field numbers of google.protobuf.Struct, Value and ListValue
// (google/protobuf/struct.proto). Struct's map<string, Value> is encoded
// as repeated entries {key = 1, value = 2}.
const (
	structFields protowire.Number = 1
	entryKey     protowire.Number = 1
	entryValue   protowire.Number = 2
	valueNull    protowire.Number = 1
	valueNumber  protowire.Number = 2
	valueString  protowire.Number = 3
	valueBool    protowire.Number = 4
	valueStruct  protowire.Number = 5
	valueList    protowire.Number = 6
	listValues   protowire.Number = 1
)

// structEncoder encodes canonical JSON as a google.protobuf.Struct without
// building Go values: byte for byte what
// proto.MarshalOptions{Deterministic: true} gives for the structpb.Struct
// of the object that encoding/json decodes (numbers as float64, map keys
// in Go string order). It keeps one scratch buffer per nesting level; it
// is not safe for concurrent use.
type structEncoder struct {
	levels [][]byte
	keys   []member
}

type member struct {
	key string
	val []byte
}

var errNotObject = errors.New("not a JSON object")

// appendStruct appends the encoded Struct of the canonical JSON object obj
// to dst.
func (e *structEncoder) appendStruct(dst, obj []byte) ([]byte, error) {
	if canonjson.Kind(obj) != '{' {
		return dst, errNotObject
	}
	return e.structBody(dst, obj, 0)
}

// scratch returns the empty buffer of nesting level depth.
func (e *structEncoder) scratch(depth int) []byte {
	for len(e.levels) <= depth {
		e.levels = append(e.levels, nil)
	}
	return e.levels[depth][:0]
}

// structBody appends the fields of a Struct message for the object obj.
func (e *structEncoder) structBody(dst, obj []byte, depth int) ([]byte, error) {
	base := len(e.keys)
	defer func() { e.keys = e.keys[:base] }()
	var err error
	canonjson.ForEachMember(obj, func(rawKey, val []byte) bool {
		k, ok := canonjson.Key(rawKey)
		if !ok {
			err = fmt.Errorf("bad object key %q", rawKey)
			return false
		}
		e.keys = append(e.keys, member{k, val})
		return true
	})
	if err != nil {
		return dst, err
	}
	ms := e.keys[base:]
	// Canonical JSON sorts keys by their escaped bytes; the encoding sorts
	// them decoded. They differ only for keys with escapes. A repeated key
	// keeps its last value, as when decoding into a map.
	if !slices.IsSortedFunc(ms, cmpMember) {
		slices.SortStableFunc(ms, cmpMember)
	}
	for i, m := range ms {
		if i+1 < len(ms) && ms[i+1].key == m.key {
			continue
		}
		entry := e.scratch(depth)
		entry = protowire.AppendTag(entry, entryKey, protowire.BytesType)
		entry = protowire.AppendString(entry, m.key)
		entry = protowire.AppendTag(entry, entryValue, protowire.BytesType)
		if entry, err = e.valueMessage(entry, m.val, depth+1); err != nil {
			return dst, err
		}
		e.levels[depth] = entry
		dst = protowire.AppendTag(dst, structFields, protowire.BytesType)
		dst = protowire.AppendBytes(dst, entry)
	}
	return dst, nil
}

func cmpMember(a, b member) int {
	switch {
	case a.key < b.key:
		return -1
	case a.key > b.key:
		return 1
	}
	return 0
}

// valueMessage appends the length-prefixed Value message of the JSON
// value val.
func (e *structEncoder) valueMessage(dst, val []byte, depth int) ([]byte, error) {
	v := e.scratch(depth)
	var err error
	switch canonjson.Kind(val) {
	case 'n':
		v = protowire.AppendTag(v, valueNull, protowire.VarintType)
		v = protowire.AppendVarint(v, 0)
	case 't', 'f':
		v = protowire.AppendTag(v, valueBool, protowire.VarintType)
		v = protowire.AppendVarint(v, protowire.EncodeBool(val[0] == 't'))
	case '0':
		f, perr := strconv.ParseFloat(string(val), 64)
		if perr != nil {
			return dst, fmt.Errorf("number %s: %w", val, perr)
		}
		v = protowire.AppendTag(v, valueNumber, protowire.Fixed64Type)
		v = protowire.AppendFixed64(v, math.Float64bits(f))
	case '"':
		s, ok := canonjson.String(val)
		if !ok {
			return dst, fmt.Errorf("bad string %.40s", val)
		}
		v = protowire.AppendTag(v, valueString, protowire.BytesType)
		v = protowire.AppendString(v, s)
	case '{':
		inner, err := e.structBody(e.scratch(depth+1), val, depth+2)
		if err != nil {
			return dst, err
		}
		e.levels[depth+1] = inner
		v = protowire.AppendTag(v, valueStruct, protowire.BytesType)
		v = protowire.AppendBytes(v, inner)
	case '[':
		list := e.scratch(depth + 1)
		canonjson.ForEachElement(val, func(elem []byte) bool {
			list = protowire.AppendTag(list, listValues, protowire.BytesType)
			list, err = e.valueMessage(list, elem, depth+2)
			return err == nil
		})
		if err != nil {
			return dst, err
		}
		e.levels[depth+1] = list
		v = protowire.AppendTag(v, valueList, protowire.BytesType)
		v = protowire.AppendBytes(v, list)
	default:
		return dst, fmt.Errorf("bad JSON value %.40s", val)
	}
	e.levels[depth] = v
	return protowire.AppendBytes(dst, v), nil
}
