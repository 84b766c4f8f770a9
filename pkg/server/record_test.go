package server

// The recorder of the golden api.json documents: it asks a running server
// every question of ../shared/golden/README.md ("api.json") and writes the
// answers exactly as that README says, so that our answers and upstream's
// can be compared byte for byte.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"sort"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/fastopm/fastopm/internal/testutil"
	"github.com/fastopm/fastopm/pkg/api"
)

// canonical writes v as canonical JSON: encoding/json with HTML escaping
// off, no trailing newline.
func canonical(v any) string {
	b, err := testutil.CanonicalJSON(v)
	if err != nil {
		panic(err) // only values decoded from JSON are encoded here
	}
	return string(b)
}

// decodeJSON decodes exactly one JSON value, numbers kept as written.
func decodeJSON(s string) (any, bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false
	}
	return v, true
}

// canonString canonicalizes a string holding one JSON value.
func canonString(s any) any {
	str, ok := s.(string)
	if !ok {
		return s
	}
	if v, ok := decodeJSON(str); ok {
		return canonical(v)
	}
	return s
}

// message turns a message into its recorded form.
func message(m proto.Message) any {
	b, err := protojson.Marshal(m)
	if err != nil {
		panic(err)
	}
	v, _ := decodeJSON(string(b))
	obj := v.(map[string]any)
	switch m.(type) {
	case *api.Bundle:
		if s, ok := obj["csvJson"]; ok {
			obj["csvJson"] = canonString(s)
		}
		if objs, ok := obj["object"].([]any); ok {
			for i := range objs {
				objs[i] = canonString(objs[i])
			}
		}
		for _, k := range []string{"properties", "dependencies"} {
			if l, ok := obj[k].([]any); ok {
				for _, e := range l {
					if e, ok := e.(map[string]any); ok {
						if val, ok := e["value"]; ok {
							e["value"] = canonString(val)
						}
					}
				}
			}
		}
		for _, k := range []string{"properties", "dependencies", "providedApis", "requiredApis"} {
			if l, ok := obj[k].([]any); ok {
				sortByCanonical(l)
			}
		}
		if l, ok := obj["skips"].([]any); ok {
			slices.SortStableFunc(l, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
		}
	case *api.Package:
		if l, ok := obj["channels"].([]any); ok {
			slices.SortStableFunc(l, func(a, b any) int {
				return strings.Compare(a.(map[string]any)["name"].(string), b.(map[string]any)["name"].(string))
			})
		}
	}
	return obj
}

func sortByCanonical(l []any) {
	keys := make(map[*any]string, len(l))
	for i := range l {
		keys[&l[i]] = canonical(l[i])
	}
	type kv struct {
		k string
		v any
	}
	kvs := make([]kv, len(l))
	for i := range l {
		kvs[i] = kv{keys[&l[i]], l[i]}
	}
	slices.SortStableFunc(kvs, func(a, b kv) int { return strings.Compare(a.k, b.k) })
	for i := range kvs {
		l[i] = kvs[i].v
	}
}

// errorRecord records a failed call. Our codes NotFound and
// InvalidArgument are upstream's Unknown (the one deliberate difference,
// see docs/serve.md); codes reports the codes we sent.
func errorRecord(err error, codesSeen map[codes.Code]int) any {
	st := status.Convert(err)
	code := st.Code()
	if codesSeen != nil {
		codesSeen[code]++
	}
	if code == codes.NotFound || code == codes.InvalidArgument {
		code = codes.Unknown
	}
	return map[string]any{"error": map[string]any{"code": code.String(), "message": st.Message()}}
}

// recorder asks one server the questions of the golden document.
type recorder struct {
	ctx   context.Context
	c     api.RegistryClient
	codes map[codes.Code]int
}

func newRecorder(ctx context.Context, conn grpc.ClientConnInterface) *recorder {
	return &recorder{ctx: ctx, c: api.NewRegistryClient(conn), codes: map[codes.Code]int{}}
}

type streamClient[T proto.Message] interface {
	Recv() (T, error)
}

// recv reads a whole stream; on failure it returns the error.
func recv[T proto.Message](s streamClient[T], err error) ([]T, error) {
	if err != nil {
		return nil, err
	}
	var out []T
	for {
		m, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
}

// streamRecord records a streamed answer: its messages sorted by their
// canonical text, or the error.
func streamRecord[T proto.Message](r *recorder, ms []T, err error) any {
	if err != nil {
		return errorRecord(err, r.codes)
	}
	out := make([]any, len(ms))
	for i, m := range ms {
		out[i] = message(m)
	}
	sortByCanonical(out)
	return out
}

func (r *recorder) unary(m proto.Message, err error) any {
	if err != nil {
		return errorRecord(err, r.codes)
	}
	return message(m)
}

// record builds the whole document.
func (r *recorder) record() ([]byte, error) {
	ctx, c := r.ctx, r.c
	doc := map[string]any{}

	pkgNames, pkgErr := recv(c.ListPackages(ctx, &api.ListPackageRequest{}))
	if pkgErr != nil {
		doc["packages"] = errorRecord(pkgErr, r.codes)
	} else {
		names := []any{}
		for _, p := range pkgNames {
			names = append(names, p.GetName())
		}
		slices.SortFunc(names, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
		doc["packages"] = names
	}

	bundles, lbErr := recv(c.ListBundles(ctx, &api.ListBundlesRequest{}))
	if lbErr != nil {
		doc["listBundles"] = errorRecord(lbErr, r.codes)
		bundles = nil
	} else {
		type rec struct {
			b    *api.Bundle
			v    any
			text string
		}
		recs := make([]rec, len(bundles))
		for i, b := range bundles {
			v := message(b)
			recs[i] = rec{b, v, canonical(v)}
		}
		slices.SortStableFunc(recs, func(a, b rec) int {
			return cmp.Or(strings.Compare(a.b.GetPackageName(), b.b.GetPackageName()),
				strings.Compare(a.b.GetChannelName(), b.b.GetChannelName()),
				strings.Compare(a.b.GetCsvName(), b.b.GetCsvName()), strings.Compare(a.text, b.text))
		})
		list := make([]any, len(recs))
		for i := range recs {
			list[i] = recs[i].v
		}
		doc["listBundles"] = list
	}

	// Keys of packageDetails.
	pkgSet := map[string]bool{}
	for _, p := range pkgNames {
		pkgSet[p.GetName()] = true
	}
	chOf := map[string]map[string]bool{}
	bundlesOf := map[[2]string][]*api.Bundle{}
	for _, b := range bundles {
		pkgSet[b.GetPackageName()] = true
		if chOf[b.GetPackageName()] == nil {
			chOf[b.GetPackageName()] = map[string]bool{}
		}
		chOf[b.GetPackageName()][b.GetChannelName()] = true
		k := [2]string{b.GetPackageName(), b.GetChannelName()}
		bundlesOf[k] = append(bundlesOf[k], b)
	}
	details := map[string]any{}
	for pkg := range pkgSet {
		p, err := c.GetPackage(ctx, &api.GetPackageRequest{Name: pkg})
		chans := map[string]bool{}
		for ch := range chOf[pkg] {
			chans[ch] = true
		}
		if err == nil {
			for _, ch := range p.GetChannels() {
				chans[ch.GetName()] = true
			}
		}
		chDetails := map[string]any{}
		for ch := range chans {
			//lint:ignore SA1019 OLM's package server still calls the deprecated RPC, so it is tested.
			bfc, err := c.GetBundleForChannel(ctx, &api.GetBundleInChannelRequest{PkgName: pkg, ChannelName: ch})
			bdet := map[string]any{}
			inCh := bundlesOf[[2]string{pkg, ch}]
			getBundle := map[string]any{}
			for _, b := range inCh {
				gb, err := c.GetBundle(ctx, &api.GetBundleRequest{PkgName: pkg, ChannelName: ch, CsvName: b.GetCsvName()})
				getBundle[b.GetCsvName()] = r.unary(gb, err)
			}
			for _, b := range inCh {
				name := b.GetCsvName()
				gbr, err := c.GetBundleThatReplaces(ctx, &api.GetReplacementRequest{CsvName: name, PkgName: pkg, ChannelName: ch})
				rec := r.unary(gbr, err)
				var replacers []string
				for _, o := range inCh {
					if o.GetReplaces() == name || slices.Contains(o.GetSkips(), name) {
						replacers = append(replacers, o.GetCsvName())
					}
				}
				if err == nil && len(replacers) >= 2 && slices.Contains(replacers, gbr.GetCsvName()) &&
					canonical(rec) == canonical(getBundle[gbr.GetCsvName()]) {
					sort.Strings(replacers)
					names := make([]any, len(replacers))
					for i, n := range replacers {
						names[i] = n
					}
					rec = map[string]any{"oneOf": names}
				}
				bdet[name] = map[string]any{"getBundle": getBundle[name], "getBundleThatReplaces": rec}
			}
			chDetails[ch] = map[string]any{"getBundleForChannel": r.unary(bfc, err), "bundles": bdet}
		}
		details[pkg] = map[string]any{"getPackage": r.unary(p, err), "channels": chDetails}
	}
	doc["packageDetails"] = details

	replace := map[string]any{}
	for _, b := range bundles {
		name := b.GetCsvName()
		if _, ok := replace[name]; ok {
			continue
		}
		es, err := recv(c.GetChannelEntriesThatReplace(ctx, &api.GetAllReplacementsRequest{CsvName: name}))
		replace[name] = streamRecord(r, es, err)
	}
	doc["channelEntriesThatReplace"] = replace

	provided := map[string]any{}
	for _, b := range bundles {
		for _, g := range b.GetProvidedApis() {
			key := g.GetGroup() + "/" + g.GetVersion() + "/" + g.GetKind() + "/" + g.GetPlural()
			if _, ok := provided[key]; ok {
				continue
			}
			all, err := recv(c.GetChannelEntriesThatProvide(ctx, &api.GetAllProvidersRequest{Group: g.GetGroup(), Version: g.GetVersion(), Kind: g.GetKind(), Plural: g.GetPlural()}))
			allRec := streamRecord(r, all, err)
			latest, err := recv(c.GetLatestChannelEntriesThatProvide(ctx, &api.GetLatestProvidersRequest{Group: g.GetGroup(), Version: g.GetVersion(), Kind: g.GetKind(), Plural: g.GetPlural()}))
			latestRec := streamRecord(r, latest, err)
			def, err := c.GetDefaultBundleThatProvides(ctx, &api.GetDefaultProviderRequest{Group: g.GetGroup(), Version: g.GetVersion(), Kind: g.GetKind(), Plural: g.GetPlural()})
			provided[key] = map[string]any{
				"getChannelEntriesThatProvide":       allRec,
				"getLatestChannelEntriesThatProvide": latestRec,
				"getDefaultBundleThatProvides":       r.unary(def, err),
			}
		}
	}
	doc["providedApis"] = provided
	return []byte(canonical(doc) + "\n"), nil
}

// recordAPI records the document of the server behind conn.
func recordAPI(t testing.TB, conn grpc.ClientConnInterface) ([]byte, map[codes.Code]int) {
	t.Helper()
	// The golden recorder raised its receive limit; so does this one.
	r := newRecorder(t.Context(), maxRecv{conn})
	doc, err := r.record()
	if err != nil {
		t.Fatal(err)
	}
	return doc, r.codes
}

// maxRecv raises the receive limit of every call to the largest message a
// server may send, so the recorder sees everything the server answers.
type maxRecv struct{ grpc.ClientConnInterface }

func (m maxRecv) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	return m.ClientConnInterface.Invoke(ctx, method, args, reply, append(opts, grpc.MaxCallRecvMsgSize(1<<30))...)
}

func (m maxRecv) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return m.ClientConnInterface.NewStream(ctx, desc, method, append(opts, grpc.MaxCallRecvMsgSize(1<<30))...)
}
