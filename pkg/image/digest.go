package image

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Digest resolves ref to the digest of what a pull of ref gets now (the
// manifest or the index a tag names), without pulling it: how catalogd
// polls an image for new content. A digest reference is its own digest.
// DigestRef is the reference by that digest, to pull exactly it.
//
// Options used: WithPlainHTTP, WithSkipTLSVerify, WithRootCAs, WithAuth.
func Digest(ctx context.Context, ref string, opts ...Option) (digest, digestRef string, err error) {
	o, err := makeOptions(opts...)
	if err != nil {
		return "", "", err
	}
	r, err := o.parseReference(ref)
	if err != nil {
		return "", "", err
	}
	if d, ok := r.(name.Digest); ok {
		return d.DigestStr(), d.String(), nil
	}
	desc, err := remote.Head(r, o.remoteOptions(ctx)...)
	if err != nil {
		// Some registries answer no HEAD of a manifest: ask for it.
		d, gerr := remote.Get(r, o.remoteOptions(ctx)...)
		if gerr != nil {
			return "", "", fmt.Errorf("resolve %s: %w", ref, gerr)
		}
		desc = &d.Descriptor
	}
	return desc.Digest.String(), r.Context().Digest(desc.Digest.String()).String(), nil
}
