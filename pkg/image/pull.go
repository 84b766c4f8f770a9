package image

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	// maxManifestSize bounds manifests and indexes read from a registry
	// or the cache.
	maxManifestSize = 8 << 20
	// maxConfigSize bounds image configuration blobs.
	maxConfigSize = 32 << 20
	// maxIndexDepth bounds indexes nested in indexes.
	maxIndexDepth = 4
)

// Pull resolves ref (a tag or a digest reference) and returns its image.
// A multi-platform index is resolved to one image (see WithPlatform).
//
// Pull fetches the manifest only; the configuration and the layers are
// fetched when first read (Labels, Unpack), with ctx, so ctx must stay
// alive while the image is used. With WithCacheDir, blobs come from the
// cache when present and are stored there as they are read.
//
// Options used: WithPlainHTTP, WithSkipTLSVerify, WithRootCAs, WithAuth,
// WithCacheDir, WithPlatform.
func Pull(ctx context.Context, ref string, opts ...Option) (v1.Image, error) {
	o, err := makeOptions(opts...)
	if err != nil {
		return nil, err
	}
	return o.pull(ctx, ref)
}

func (o *options) pull(ctx context.Context, ref string) (v1.Image, error) {
	r, err := o.parseReference(ref)
	if err != nil {
		return nil, err
	}
	p := &puller{ctx: ctx, ref: r, repo: r.Context()}
	d, err := o.openCache()
	if err != nil {
		return nil, err
	}
	if d != nil {
		p.cache = openBlobCache(d)
	}
	if p.remote, err = remote.NewPuller(o.remoteOptions(ctx)...); err != nil {
		return nil, fmt.Errorf("pull %s: %w", ref, err)
	}

	raw, mt, dgst, err := p.manifest(r)
	if err != nil {
		return nil, fmt.Errorf("pull %s: %w", ref, err)
	}
	for depth := 0; isIndex(mt); depth++ {
		if depth == maxIndexDepth {
			return nil, fmt.Errorf("pull %s: indexes nested more than %d deep", ref, maxIndexDepth)
		}
		im, err := v1.ParseIndexManifest(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("pull %s: parse index %s: %w", ref, dgst, err)
		}
		child, err := selectManifest(im, o.platform)
		if err != nil {
			return nil, fmt.Errorf("pull %s: index %s: %w", ref, dgst, err)
		}
		raw, mt, dgst, err = p.manifest(p.repo.Digest(child.Digest.String()))
		if err != nil {
			return nil, fmt.Errorf("pull %s: %w", ref, err)
		}
	}
	switch mt {
	case types.OCIManifestSchema1, types.DockerManifestSchema2:
	case types.DockerManifestSchema1, types.DockerManifestSchema1Signed:
		return nil, fmt.Errorf("pull %s: docker schema 1 manifests are not supported", ref)
	default:
		return nil, fmt.Errorf("pull %s: manifest %s has media type %q, not an image", ref, dgst, mt)
	}
	m, err := v1.ParseManifest(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("pull %s: parse manifest %s: %w", ref, dgst, err)
	}
	core := &pulledImage{p: p, raw: raw, mediaType: mt, manifest: m}
	img, err := partial.CompressedToImage(core)
	if err != nil {
		return nil, fmt.Errorf("pull %s: %w", ref, err)
	}
	return &namedImage{Image: img, name: r.String(), p: p}, nil
}

// namedImage is an image that knows the reference it was pulled by, so
// that errors can name it.
type namedImage struct {
	v1.Image
	name string
	p    *puller // where its layers come from
}

func (n *namedImage) imageName() string { return n.name }

// imageName names img for error messages: the reference it was pulled
// by, else its digest.
func imageName(img v1.Image) string {
	if n, ok := img.(interface{ imageName() string }); ok {
		return n.imageName()
	}
	if d, err := img.Digest(); err == nil {
		return d.String()
	}
	return "image"
}

// puller fetches the manifests and blobs of one repository, through the
// cache when there is one.
type puller struct {
	ctx    context.Context
	ref    name.Reference
	repo   name.Repository
	remote *remote.Puller
	cache  *blobCache // nil: no cache
}

// manifest returns the manifest or index ref names, with its media type
// and digest. A digest reference found in the cache needs no request.
func (p *puller) manifest(ref name.Reference) ([]byte, types.MediaType, v1.Hash, error) {
	if d, ok := ref.(name.Digest); ok && p.cache != nil {
		h, err := v1.NewHash(d.DigestStr())
		if err != nil {
			return nil, "", v1.Hash{}, fmt.Errorf("manifest %s: %w", d.DigestStr(), err)
		}
		// Not cached, corrupt (and now removed) or unreadable: fetch it.
		if raw, err := p.cache.readAll(h, -1, maxManifestSize); err == nil {
			return raw, sniffMediaType(raw), h, nil
		}
	}
	desc, err := p.remote.Get(p.ctx, ref)
	if err != nil {
		return nil, "", v1.Hash{}, fmt.Errorf("fetch manifest: %w", err)
	}
	raw := desc.Manifest
	if len(raw) > maxManifestSize {
		return nil, "", v1.Hash{}, fmt.Errorf("%w: manifest is larger than %d bytes", ErrLimitExceeded, maxManifestSize)
	}
	sum := sha256.Sum256(raw)
	h := v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])}
	if d, ok := ref.(name.Digest); ok && d.DigestStr() != h.String() {
		return nil, "", v1.Hash{}, fmt.Errorf("manifest %s: content has digest %s", d.DigestStr(), h)
	}
	mt := desc.MediaType
	if !mt.IsImage() && !mt.IsIndex() && !mt.IsSchema1() {
		// Some registries send a generic Content-Type; trust the body.
		mt = sniffMediaType(raw)
	}
	if p.cache != nil {
		_ = p.cache.put(h, raw) // best effort: the cache only saves requests
	}
	return raw, mt, h, nil
}

// blob returns the compressed content of the blob desc names.
func (p *puller) blob(desc v1.Descriptor) (io.ReadCloser, error) {
	return p.blobContext(p.ctx, desc)
}

// blobContext is blob with the requests bound to ctx.
func (p *puller) blobContext(ctx context.Context, desc v1.Descriptor) (io.ReadCloser, error) {
	if p.cache != nil {
		rc, err := p.cache.open(desc.Digest, desc.Size)
		if err == nil {
			return rc, nil
		}
	}
	l, err := p.remote.Layer(ctx, p.repo.Digest(desc.Digest.String()))
	if err != nil {
		return nil, fmt.Errorf("fetch blob %s: %w", desc.Digest, err)
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, fmt.Errorf("fetch blob %s: %w", desc.Digest, err)
	}
	if p.cache != nil {
		return p.cache.tee(rc, desc.Digest, desc.Size), nil
	}
	return rc, nil
}

// pulledImage implements partial.CompressedImageCore over a puller.
type pulledImage struct {
	p         *puller
	raw       []byte
	mediaType types.MediaType
	manifest  *v1.Manifest

	configOnce sync.Once
	config     []byte
	configErr  error
}

var _ partial.CompressedImageCore = (*pulledImage)(nil)

func (i *pulledImage) RawManifest() ([]byte, error)        { return i.raw, nil }
func (i *pulledImage) MediaType() (types.MediaType, error) { return i.mediaType, nil }

func (i *pulledImage) RawConfigFile() ([]byte, error) {
	i.configOnce.Do(func() {
		desc := i.manifest.Config
		if desc.Size > maxConfigSize {
			i.configErr = fmt.Errorf("%w: config blob %s is %d bytes, more than %d", ErrLimitExceeded, desc.Digest, desc.Size, maxConfigSize)
			return
		}
		rc, err := i.p.blob(desc)
		if err != nil {
			i.configErr = err
			return
		}
		defer rc.Close()
		i.config, i.configErr = readLimited(rc, maxConfigSize)
		if i.configErr != nil {
			i.configErr = fmt.Errorf("read config blob %s: %w", desc.Digest, i.configErr)
		}
	})
	return i.config, i.configErr
}

func (i *pulledImage) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	if h == i.manifest.Config.Digest {
		return &pulledLayer{p: i.p, desc: i.manifest.Config}, nil
	}
	for _, l := range i.manifest.Layers {
		if l.Digest == h {
			return &pulledLayer{p: i.p, desc: l}, nil
		}
	}
	return nil, fmt.Errorf("image has no layer %s", h)
}

// pulledLayer implements partial.CompressedLayer over a puller.
type pulledLayer struct {
	p    *puller
	desc v1.Descriptor
}

func (l *pulledLayer) Digest() (v1.Hash, error)            { return l.desc.Digest, nil }
func (l *pulledLayer) Size() (int64, error)                { return l.desc.Size, nil }
func (l *pulledLayer) MediaType() (types.MediaType, error) { return l.desc.MediaType, nil }
func (l *pulledLayer) Compressed() (io.ReadCloser, error)  { return l.p.blob(l.desc) }

func isIndex(mt types.MediaType) bool {
	return mt == types.OCIImageIndex || mt == types.DockerManifestList
}

// sniffMediaType guesses the media type of a cached manifest from its
// mediaType field, or its shape when the field is absent (OCI allows
// that).
func sniffMediaType(raw []byte) types.MediaType {
	var probe struct {
		SchemaVersion int              `json:"schemaVersion"`
		MediaType     types.MediaType  `json:"mediaType"`
		Manifests     *json.RawMessage `json:"manifests"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return ""
	}
	switch {
	case probe.MediaType != "":
		return probe.MediaType
	case probe.SchemaVersion == 1:
		return types.DockerManifestSchema1
	case probe.Manifests != nil:
		return types.OCIImageIndex
	default:
		return types.OCIManifestSchema1
	}
}

// selectManifest picks the image of an index: the one for want, or
// without want the best of preferredPlatforms, else the first image.
// Attestation manifests (platform unknown/unknown) never count.
func selectManifest(im *v1.IndexManifest, want *v1.Platform) (v1.Descriptor, error) {
	var cands []v1.Descriptor
	for _, m := range im.Manifests {
		if !m.MediaType.IsImage() && !m.MediaType.IsIndex() {
			continue
		}
		if m.Platform != nil && m.Platform.OS == "unknown" && m.Platform.Architecture == "unknown" {
			continue
		}
		if m.Annotations["vnd.docker.reference.type"] == "attestation-manifest" {
			continue
		}
		cands = append(cands, m)
	}
	if len(cands) == 0 {
		return v1.Descriptor{}, errors.New("index lists no image")
	}
	prefs := preferredPlatforms()
	if want != nil {
		prefs = []v1.Platform{*want}
	}
	for _, pref := range prefs {
		for _, m := range cands {
			if m.Platform != nil && m.Platform.Satisfies(pref) {
				return m, nil
			}
		}
	}
	if want == nil {
		return cands[0], nil
	}
	var have []string
	for _, m := range cands {
		if m.Platform != nil {
			have = append(have, m.Platform.String())
		}
	}
	return v1.Descriptor{}, fmt.Errorf("no image for platform %s (index has %s)", want, strings.Join(have, ", "))
}
