package schema

import (
	"sort"
	"strings"
	"sync"
	"testing"
)

func TestShape(t *testing.T) {
	c := sharedChecker(t)
	long := `"` + strings.Repeat("QUJD", 1<<18) + `"`
	tests := []struct {
		name, in, want string
		wantErr        bool
	}{
		{name: "strings", in: `{"data":"x","group":"","kind":"olm.package","name":"OwnNamespace","ref":"olm.packages"}`,
			want: `{"data":"s","group":"","kind":"olm.package","name":"OwnNamespace","ref":"s"}`},
		{name: "escaped literal", in: `{"data":"olm\u002epackage","group":"\n","kind":"\\"}`,
			want: `{"data":"olm.package","group":"s","kind":"s"}`},
		{name: "escaped quotes and backslashes", in: `{"data":"x\"y","group":"x\\","kind":"\\\"","name":1}`,
			want: `{"data":"s","group":"s","kind":"s","name":0}`},
		{name: "long string", in: `{"data":` + long + `,"type":"olm.bundle.object"}`,
			want: `{"data":"s","type":"olm.bundle.object"}`},
		{name: "label keys kept", in: `{"x-descriptors":"a","name":"b","n\u0061me":"c"}`,
			want: `{"x-descriptors":"s","name":"s","n\u0061me":"s"}`},
		{name: "other keys anonymized", in: `{"alm-examples":"[]","capabilities":"Basic","createdAt":"","name":"n","replicas":3,"zz":"a"}`,
			want: `{"name":"s","~0":"","~1":"s","~2":0}`},
		{name: "anonymized keys nested", in: `{"a":{"b":[1,2],"c":{"d":1}},"e":{"f":[2,1]}}`,
			want: `{"~0":{"~0":[0],"~1":{"~0":0}},"~1":{"~0":[0]}}`},
		{name: "scalars", in: `[1,1.5e3,-2,true,false,null,1]`,
			want: `[0,0.5,false,null,true]`},
		// CUE types an integer literal int and any other number float;
		// schema.cue has no number literals or bounds.
		{name: "numbers", in: `[-0,10,123456789012345678901234567890,1.0,1e3,-2.5,1E+2]`, want: `[0,0.5]`},
		{name: "list of strings", in: `["a","b","c"]`, want: `["s"]`},
		{name: "list of objects", in: `[{"name":"a"},{"kind":1},{"name":"b"}]`, want: `[{"kind":0},{"name":"s"}]`},
		{name: "list order", in: `[{"name":1},{"kind":"a"}]`, want: `[{"kind":"s"},{"name":0}]`},
		{name: "nested lists", in: `[[1,2.5],[2.5,1],[1]]`, want: `[[0,0.5],[0]]`},
		{name: "many distinct", in: `[` + manyShapes(100) + `,[1],[1.5]]`, want: `[` + sortedShapes(100) + `]`},
		// Shapes stop at shapeDepth: below, {} and [] whatever they hold.
		{name: "deep", in: strings.Repeat("[", shapeDepth+5) + "1" + strings.Repeat("]", shapeDepth+5),
			want: strings.Repeat("[", shapeDepth+1) + strings.Repeat("]", shapeDepth+1)},
		{name: "deep objects", in: `{"a":` + strings.Repeat(`{"b":[1],"c":`, shapeDepth+5) + "1" + strings.Repeat("}", shapeDepth+6),
			want: `{"~0":` + strings.Repeat(`{"~0":[0],"~1":`, shapeDepth-2) + `{"~0":[],"~1":{}}` + strings.Repeat("}", shapeDepth-1)},
		{name: "many distinct anonymized", in: `{` + manyKeys(100) + `}`, want: `{` + anonKeys(100) + `}`},
		{name: "many alike anonymized", in: `{` + manyNumberKeys(100) + `}`, want: `{"~0":0}`},
		{name: "empty", in: `{"data":[],"ref":{}}`, want: `{"data":[],"ref":{}}`},
		{name: "whitespace", in: " { \"data\" : [ 1 , 1 ] ,\n\"ref\":\t\"\" } ", want: `{"data":[0],"ref":""}`},
		{name: "truncated", in: `{"a":`, wantErr: true},
		{name: "missing value", in: `{"a":}`, wantErr: true},
		{name: "trailing comma", in: `[1,]`, wantErr: true},
		{name: "unterminated string", in: `{"a":"x`, wantErr: true},
		{name: "bad literal", in: `[nul]`, wantErr: true},
		// String contents are not validated: Check's input is canonical.
		{name: "bad escape", in: `["\q"]`, want: `["s"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &shaper{voc: &c.voc}
			got, _, err := s.value(nil, []byte(tt.in), 0)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want error %v", err, tt.wantErr)
			}
			if !tt.wantErr && string(got) != tt.want {
				t.Errorf("shape:\ngot  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// manyKeys is "k99":99,...,"k0":0.
// elemKinds are JSON values of distinct shapes, with their shapes.
var elemKinds = [][2]string{{"1", "0"}, {"1.5", "0.5"}, {"true", "true"}, {"false", "false"}, {"null", "null"}, {`""`, `""`}, {`"x"`, `"s"`}, {"[]", "[]"}, {"{}", "{}"}}

// distinct is the i-th (from 1) of 2^len(elemKinds)-1 lists of distinct
// shapes: the elements of elemKinds its bits select, and its shape. (Not
// lists nested i deep: shapes stop at shapeDepth.)
func distinct(i int) (in, shape string) {
	var ins, shapes []string
	for b, k := range elemKinds {
		if i&(1<<b) != 0 {
			ins = append(ins, k[0])
			shapes = append(shapes, k[1])
		}
	}
	sort.Strings(shapes)
	return "[" + strings.Join(ins, ",") + "]", "[" + strings.Join(shapes, ",") + "]"
}

// manyShapes is n values of distinct shapes.
func manyShapes(n int) string {
	all := make([]string, n)
	for i := range all {
		all[i], _ = distinct(i + 1)
	}
	return strings.Join(all, ",")
}

// sortedShapes is the shapes of manyShapes(n), in byte order.
func sortedShapes(n int) string {
	all := make([]string, n)
	for i := range all {
		_, all[i] = distinct(i + 1)
	}
	sort.Strings(all)
	return strings.Join(all, ",")
}

// manyKeys is n keys that are not schema labels, with values of distinct
// shapes.
func manyKeys(n int) string {
	var b strings.Builder
	for i := n - 1; i >= 0; i-- {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		in, _ := distinct(i + 1)
		b.WriteString(`"k` + itoa(i) + `":` + in)
	}
	return b.String()
}

// anonKeys is the shape of manyKeys(n): anonymous keys in order of value.
func anonKeys(n int) string {
	shapes := make([]string, n)
	for i := range shapes {
		_, shapes[i] = distinct(i + 1)
	}
	sort.Strings(shapes)
	var b strings.Builder
	for k, sh := range shapes {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"~` + itoa(k) + `":` + sh)
	}
	return b.String()
}

// manyNumberKeys is n keys that are not schema labels, with distinct
// integer values: one shape.
func manyNumberKeys(n int) string {
	var b strings.Builder
	for i := range n {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + itoa(i) + `":` + itoa(i))
	}
	return b.String()
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func TestSkipValue(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int // index just past the value; -1: an error
	}{
		{`1,`, 1}, {` -2.5e3}`, 7}, {`true]`, 4}, {`null`, 4}, {`"a,}\"b"x`, 8},
		{`[1,[2,{"a":"]"}]],3`, 17}, {`{}`, 2}, {`{"a":{}}}`, 8},
		{`[1,2`, -1}, {`"abc`, -1}, {`{"a":[}`, -1},
		{strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1), -1},
	} {
		got, err := skipValue([]byte(tt.in), 0)
		if tt.want < 0 {
			if err == nil {
				t.Errorf("skipValue(%.20q): no error", tt.in)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("skipValue(%.20q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

// TestSkeleton checks the decomposition: which top-level lists are split
// off for each kind, and what the skeleton shape looks like.
func TestSkeleton(t *testing.T) {
	c := sharedChecker(t)
	tests := []struct {
		schema, blob, want string
		elems              int
	}{
		{"olm.bundle",
			`{"image":"i","name":"n","package":"p","properties":[{"type":"olm.gvk","value":{}},{"type":"x","value":1}],"relatedImages":[{"image":"a"}],"schema":"olm.bundle"}`,
			`{"image":"s","name":"s","package":"s","properties":[],"relatedImages":[],"schema":"olm.bundle"}`, 3},
		{"olm.channel",
			`{"entries":[{"name":"a"}],"name":"n","package":"p","properties":[],"schema":"olm.channel"}`,
			`{"entries":[],"name":"s","package":"s","properties":[],"schema":"olm.channel"}`, 1},
		{"olm.package",
			`{"defaultChannel":"d","entries":[{"name":"a"}],"name":"n","properties":[{"type":"x","value":1}],"schema":"olm.package"}`,
			`{"defaultChannel":"s","entries":[{"name":"s"}],"name":"s","properties":[],"schema":"olm.package"}`, 1},
		{"olm.deprecations",
			`{"entries":[{"message":"m","reference":{"schema":"olm.package"}}],"package":"p","properties":[{"type":"x","value":1}],"schema":"olm.deprecations"}`,
			`{"entries":[],"package":"s","properties":[{"type":"s","value":0}],"schema":"olm.deprecations"}`, 1},
		{"olm.template",
			`{"entries":[1],"properties":[{"type":"x","value":1}],"relatedImages":[2],"schema":"olm.template"}`,
			`{"properties":[],"schema":"s"}`, 1},
		// _Meta is open: fields it does not name are left out of the
		// skeleton, whatever their values.
		{"other",
			`{"a":{"b":[1,{"c":"\"]}"}]},"name":"n","package":"p","schema":"other","z":"x"}`,
			`{"package":"s","schema":"s"}`, 0},
		{"other",
			`{"a":1.5,"name":"n","properties":[{"type":"t","value":2}],"schema":"other","z":null}`,
			`{"properties":[],"schema":"s"}`, 1},
		{"olm.bundle",
			`{"properties":"x","schema":"olm.bundle"}`,
			`{"properties":"s","schema":"olm.bundle"}`, 0},
	}
	for _, tt := range tests {
		st := &checkState{shaper: shaper{voc: &c.voc}}
		if _, err := c.scan(st, blobKind(tt.schema), []byte(tt.blob)); err != nil {
			t.Fatalf("%s: %v", tt.blob, err)
		}
		if got := string(st.skeleton[1:]); got != tt.want {
			t.Errorf("%s skeleton:\ngot  %s\nwant %s", tt.schema, got, tt.want)
		}
		n := 0
		for _, l := range st.lists {
			if l.end <= l.start {
				t.Errorf("%s: bad list span %+v", tt.schema, l)
			}
			n += l.count
		}
		if n != tt.elems {
			t.Errorf("%s: %d elements split off, want %d", tt.schema, n, tt.elems)
		}
	}
}

// TestMemo: a second check of the same blobs evaluates no CUE.
func TestMemo(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	blobs := fixtures(t)
	for _, b := range blobs {
		c.Check(b.schema, b.data)
	}
	first := c.Stats()
	if first.Shapes == 0 || first.ShapeEvals == 0 {
		t.Fatalf("no shapes memoized: %+v", first)
	}
	for _, b := range blobs {
		c.Check(b.schema, b.data)
	}
	second := c.Stats()
	if second.ShapeEvals != first.ShapeEvals || second.Shapes != first.Shapes {
		t.Errorf("second pass evaluated shapes: %+v then %+v", first, second)
	}
	t.Logf("%d blobs: %+v", len(blobs), second)
}

// TestConcurrentCheck runs Check from many goroutines on a fresh Checker
// (run with -race) and compares with sequential results.
func TestConcurrentCheck(t *testing.T) {
	seq := sharedChecker(t)
	blobs := fixtures(t)
	for _, tc := range checkCases {
		data, _, err := canonical([]byte(tc.blob))
		if err != nil {
			t.Fatal(err)
		}
		blobs = append(blobs, testBlob{name: tc.name, schema: tc.schema, data: data})
	}
	want := make([][]Violation, len(blobs))
	for i, b := range blobs {
		want[i] = seq.Check(b.schema, b.data)
	}
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range blobs {
				i := (k + w*7) % len(blobs)
				if d := diffViolations(c.Check(blobs[i].schema, blobs[i].data), want[i]); d != "" {
					t.Errorf("%s: concurrent result differs:\n%s", blobs[i].name, d)
				}
			}
		}()
	}
	wg.Wait()
}

// TestCheckMalformed: input that is not what Check expects gets a
// violation, never a panic.
func TestCheckMalformed(t *testing.T) {
	c := sharedChecker(t)
	deep := `{"schema":"x","a":` + strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1) + `}`
	if vs := c.Check("x", []byte(deep)); len(vs) != 1 || vs[0].Message != errTooDeep.Error() {
		t.Errorf("Check(deeply nested): %v", vs)
	}
	for _, in := range []string{"", "{", `{"schema":}`, `{"schema":"olm.bundle"`, "null", `"x"`, `{"a":1} {"b":2}`, "\x00", `{"properties":[1,]}`} {
		for _, s := range fuzzSchemas {
			if vs := c.Check(s, []byte(in)); len(vs) == 0 {
				t.Errorf("Check(%q, %q): no violation", s, in)
			}
		}
	}
}
