package server

// The wire goldens: the protobuf bytes of every answer, as upstream sent
// them, for the catalogs that have a testdata/golden/<catalog>/wire.txt.gz
// (see testdata/golden/WIRE.md). The JSON goldens (golden_test.go) compare
// decoded answers with the JSON text inside csvJson, object and property
// values canonicalized, and repeated fields and streams sorted; these
// compare the bytes a client receives.

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/fastopm/fastopm/pkg/api"
)

var (
	wireAddr = flag.String("wire.addr", "", "TestWireRecord: address of the running opm serve to record")
	wireOut  = flag.String("wire.out", "", "TestWireRecord: file to write the wire document to (gzip when it ends in .gz)")
)

// checkWire compares the bytes of every answer of the server behind conn
// with the wire golden of goldenDir, if it has one.
func checkWire(t *testing.T, conn grpc.ClientConnInterface, goldenDir string) {
	want, err := readMaybeGzip(filepath.Join(goldenDir, "wire.txt.gz"))
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	got, err := recordWire(t.Context(), conn)
	if err != nil {
		t.Fatal(err)
	}
	if d := wireDiff(got, want); d != "" {
		t.Errorf("wire bytes differ from upstream's (-ours +upstream):\n%s", d)
	}
}

// TestWireRecord writes the wire document of the server at -wire.addr to
// -wire.out; without them it is skipped. It records the wire goldens from
// upstream's opm (testdata/golden/WIRE.md), and compares any two servers:
// record both and diff the files.
func TestWireRecord(t *testing.T) {
	if *wireAddr == "" || *wireOut == "" {
		t.Skip("records only with -wire.addr and -wire.out")
	}
	conn, err := grpc.NewClient(*wireAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	doc, err := recordWire(t.Context(), conn)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(*wireOut, ".gz") {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		zw.Write(doc)
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		doc = b.Bytes()
	}
	if err := os.WriteFile(*wireOut, doc, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWireDiffNamesTheField: a changed byte inside one field of one answer
// is reported as that answer's question and field.
func TestWireDiffNamesTheField(t *testing.T) {
	t.Parallel()
	bundle := func(csvJSON string) []byte {
		b := protowire.AppendTag(nil, 1, protowire.BytesType)
		b = protowire.AppendString(b, "a.v1")
		b = protowire.AppendTag(b, 4, protowire.BytesType)
		return protowire.AppendString(b, csvJSON)
	}
	b, other := bundle(`{"kind":"ClusterServiceVersion"}`), bundle(`{"kind": "ClusterServiceVersion"}`)
	doc := func(m []byte) []byte {
		var w bytes.Buffer
		w.WriteString("GetBundle pkgName=\"p\"\n")
		writeMessage(&w, m)
		return w.Bytes()
	}
	if d := wireDiff(doc(b), doc(b)); d != "" {
		t.Errorf("equal documents: diff %q", d)
	}
	d := wireDiff(doc(b), doc(other))
	if !strings.Contains(d, `GetBundle pkgName="p"`) || !strings.Contains(d, "-    4:34:") || !strings.Contains(d, "+    4:35:") {
		t.Errorf("diff does not name the question and field 4:\n%s", d)
	}
}

func readMaybeGzip(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if !strings.HasSuffix(path, ".gz") {
		return io.ReadAll(f)
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// wireCaller asks questions and returns the answers' bytes undecoded.
type wireCaller struct {
	ctx  context.Context
	conn grpc.ClientConnInterface
}

var wireOpts = []grpc.CallOption{grpc.ForceCodecV2(rawCodec{}), grpc.MaxCallRecvMsgSize(1 << 30)}

func (c wireCaller) unary(method string, req proto.Message) ([]byte, error) {
	var out rawBytes
	err := c.conn.Invoke(c.ctx, "/api.Registry/"+method, req, &out, wireOpts...)
	return out, err
}

func (c wireCaller) stream(method string, req proto.Message) ([][]byte, error) {
	st, err := c.conn.NewStream(c.ctx, &grpc.StreamDesc{ServerStreams: true}, "/api.Registry/"+method, wireOpts...)
	if err != nil {
		return nil, err
	}
	if err := st.SendMsg(req); err != nil {
		return nil, err
	}
	if err := st.CloseSend(); err != nil {
		return nil, err
	}
	var out [][]byte
	for {
		var m rawBytes
		err := st.RecvMsg(&m)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
}

// recordWire asks the server behind conn the questions of the golden
// README (the same as recorder.record) and writes, for each, the question
// and a line per answer message: its length, SHA-256 and top-level fields
// (number:length:SHA-256 prefix, in wire order). Streams that upstream
// sends in random order (ListPackages and the channel entry streams) have
// their lines sorted; ListBundles keeps its order. An error is recorded by
// its message only (the codes differ on purpose, see docs/serve.md). A
// GetBundleThatReplaces question with several candidates, which upstream
// answers with a random one, is recorded as the first candidate by name
// when the answer is the GetBundle answer of one of them.
func recordWire(ctx context.Context, conn grpc.ClientConnInterface) ([]byte, error) {
	c := wireCaller{ctx, conn}
	var w bytes.Buffer
	fmt.Fprintf(&w, "# opm serve wire answers: testdata/golden/WIRE.md\n")
	question := func(method string, args ...string) {
		w.WriteString(method)
		for i := 0; i+1 < len(args); i += 2 {
			fmt.Fprintf(&w, " %s=%q", args[i], args[i+1])
		}
		w.WriteByte('\n')
	}
	unary := func(b []byte, err error) []byte {
		if err != nil {
			fmt.Fprintf(&w, "  error: %s\n", status.Convert(err).Message())
			return nil
		}
		writeMessage(&w, b)
		return b
	}
	stream := func(ms [][]byte, err error, sorted bool) {
		if err != nil {
			fmt.Fprintf(&w, "  error: %s\n", status.Convert(err).Message())
			return
		}
		var lines [][]byte
		for _, m := range ms {
			var l bytes.Buffer
			writeMessage(&l, m)
			lines = append(lines, l.Bytes())
		}
		if sorted {
			slices.SortFunc(lines, bytes.Compare)
		}
		fmt.Fprintf(&w, "  %d messages\n", len(ms))
		for _, l := range lines {
			w.Write(l)
		}
	}

	question("ListPackages")
	rawPkgs, err := c.stream("ListPackages", &api.ListPackageRequest{})
	stream(rawPkgs, err, true)
	question("ListBundles")
	rawBundles, lbErr := c.stream("ListBundles", &api.ListBundlesRequest{})
	stream(rawBundles, lbErr, false)

	pkgSet := map[string]bool{}
	for _, b := range rawPkgs {
		var p api.PackageName
		if err := proto.Unmarshal(b, &p); err != nil {
			return nil, err
		}
		pkgSet[p.GetName()] = true
	}
	var bundles []*api.Bundle
	for _, b := range rawBundles {
		var m api.Bundle
		if err := proto.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		bundles = append(bundles, &m)
		pkgSet[m.GetPackageName()] = true
	}
	slices.SortStableFunc(bundles, func(a, b *api.Bundle) int {
		return cmp.Or(strings.Compare(a.GetPackageName(), b.GetPackageName()),
			strings.Compare(a.GetChannelName(), b.GetChannelName()), strings.Compare(a.GetCsvName(), b.GetCsvName()))
	})
	for _, pkg := range slices.Sorted(maps.Keys(pkgSet)) {
		question("GetPackage", "name", pkg)
		pb := unary(c.unary("GetPackage", &api.GetPackageRequest{Name: pkg}))
		chans := map[string]bool{}
		if pb != nil {
			var p api.Package
			if err := proto.Unmarshal(pb, &p); err != nil {
				return nil, err
			}
			for _, ch := range p.GetChannels() {
				chans[ch.GetName()] = true
			}
		}
		for _, b := range bundles {
			if b.GetPackageName() == pkg {
				chans[b.GetChannelName()] = true
			}
		}
		for _, ch := range slices.Sorted(maps.Keys(chans)) {
			question("GetBundleForChannel", "pkgName", pkg, "channelName", ch)
			unary(c.unary("GetBundleForChannel", &api.GetBundleInChannelRequest{PkgName: pkg, ChannelName: ch}))
			var inCh []*api.Bundle
			for _, b := range bundles {
				if b.GetPackageName() == pkg && b.GetChannelName() == ch {
					inCh = append(inCh, b)
				}
			}
			getBundle := map[string][]byte{}
			var getBundleErr error
			for _, b := range inCh {
				question("GetBundle", "pkgName", pkg, "channelName", ch, "csvName", b.GetCsvName())
				gb, err := c.unary("GetBundle", &api.GetBundleRequest{PkgName: pkg, ChannelName: ch, CsvName: b.GetCsvName()})
				getBundle[b.GetCsvName()] = unary(gb, err)
				getBundleErr = cmp.Or(getBundleErr, err)
			}
			for _, b := range inCh {
				name := b.GetCsvName()
				question("GetBundleThatReplaces", "csvName", name, "pkgName", pkg, "channelName", ch)
				ans, err := c.unary("GetBundleThatReplaces", &api.GetReplacementRequest{CsvName: name, PkgName: pkg, ChannelName: ch})
				var replacers []string
				for _, o := range inCh {
					if o.GetReplaces() == name || slices.Contains(o.GetSkips(), name) {
						replacers = append(replacers, o.GetCsvName())
					}
				}
				slices.Sort(replacers)
				if err == nil && getBundleErr == nil && len(replacers) >= 2 && slices.ContainsFunc(replacers, func(r string) bool { return bytes.Equal(getBundle[r], ans) }) {
					fmt.Fprintf(&w, "  one of %d replacers, recorded as the first: %s\n", len(replacers), replacers[0])
					ans = getBundle[replacers[0]]
				}
				unary(ans, err)
			}
		}
	}

	names := map[string]bool{}
	type gvk struct{ group, version, kind, plural string }
	provided := map[gvk]bool{}
	for _, b := range bundles {
		names[b.GetCsvName()] = true
		for _, g := range b.GetProvidedApis() {
			provided[gvk{g.GetGroup(), g.GetVersion(), g.GetKind(), g.GetPlural()}] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		question("GetChannelEntriesThatReplace", "csvName", name)
		ms, err := c.stream("GetChannelEntriesThatReplace", &api.GetAllReplacementsRequest{CsvName: name})
		stream(ms, err, true)
	}
	gvks := slices.SortedFunc(maps.Keys(provided), func(a, b gvk) int {
		return cmp.Or(strings.Compare(a.group, b.group), strings.Compare(a.version, b.version),
			strings.Compare(a.kind, b.kind), strings.Compare(a.plural, b.plural))
	})
	for _, g := range gvks {
		args := []string{"group", g.group, "version", g.version, "kind", g.kind, "plural", g.plural}
		question("GetChannelEntriesThatProvide", args...)
		ms, err := c.stream("GetChannelEntriesThatProvide", &api.GetAllProvidersRequest{Group: g.group, Version: g.version, Kind: g.kind, Plural: g.plural})
		stream(ms, err, true)
		question("GetLatestChannelEntriesThatProvide", args...)
		ms, err = c.stream("GetLatestChannelEntriesThatProvide", &api.GetLatestProvidersRequest{Group: g.group, Version: g.version, Kind: g.kind, Plural: g.plural})
		stream(ms, err, true)
		question("GetDefaultBundleThatProvides", args...)
		unary(c.unary("GetDefaultBundleThatProvides", &api.GetDefaultProviderRequest{Group: g.group, Version: g.version, Kind: g.kind, Plural: g.plural}))
	}
	return w.Bytes(), nil
}

// writeMessage writes the line of one answer message: "  <length>
// <sha256>" and one "number:length:sha256-prefix" per top-level field, in
// wire order, so that a difference names its field.
func writeMessage(w *bytes.Buffer, m []byte) {
	sum := sha256.Sum256(m)
	fmt.Fprintf(w, "  %d %s", len(m), hex.EncodeToString(sum[:]))
	for b := m; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			w.WriteString(" malformed")
			break
		}
		v := protowire.ConsumeFieldValue(num, typ, b[n:])
		if v < 0 {
			w.WriteString(" malformed")
			break
		}
		fs := sha256.Sum256(b[:n+v])
		fmt.Fprintf(w, "\n    %d:%d:%s", num, n+v, hex.EncodeToString(fs[:6]))
		b = b[n+v:]
	}
	w.WriteByte('\n')
}

// wireDiff describes the questions whose answers differ: each question's
// lines of got (-) and want (+) from the first differing line, a few
// questions at most; "" when the documents are equal.
func wireDiff(got, want []byte) string {
	if bytes.Equal(got, want) {
		return ""
	}
	g, gOrder := wireBlocks(got)
	wb, wOrder := wireBlocks(want)
	var out strings.Builder
	shown := 0
	for _, q := range wOrder {
		if shown == 5 {
			out.WriteString("...\n")
			break
		}
		gl, ok := g[q]
		wl := wb[q]
		if !ok {
			fmt.Fprintf(&out, "%s: not asked of ours\n", q)
			shown++
			continue
		}
		if slices.Equal(gl, wl) {
			continue
		}
		shown++
		i := 0
		for i < len(gl) && i < len(wl) && gl[i] == wl[i] {
			i++
		}
		fmt.Fprintf(&out, "%s:\n", q)
		for _, l := range gl[i:min(len(gl), i+6)] {
			fmt.Fprintf(&out, "-%s\n", l)
		}
		for _, l := range wl[i:min(len(wl), i+6)] {
			fmt.Fprintf(&out, "+%s\n", l)
		}
	}
	for _, q := range gOrder {
		if _, ok := wb[q]; !ok && shown < 5 {
			fmt.Fprintf(&out, "%s: not asked of upstream\n", q)
			shown++
		}
	}
	if out.Len() == 0 {
		return "the documents differ in their order of questions"
	}
	return out.String()
}

// wireBlocks splits a wire document into its questions' answer lines.
func wireBlocks(doc []byte) (map[string][]string, []string) {
	blocks := map[string][]string{}
	var order []string
	q := ""
	for l := range strings.Lines(string(doc)) {
		l = strings.TrimSuffix(l, "\n")
		if strings.HasPrefix(l, "#") {
			continue
		}
		if !strings.HasPrefix(l, " ") {
			q = l
			order = append(order, q)
			continue
		}
		blocks[q] = append(blocks[q], l)
	}
	return blocks, order
}
