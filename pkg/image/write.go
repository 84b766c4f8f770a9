package image

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/match"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/fastopm/fastopm/pkg/progress"
)

// LayoutPrefix marks a destination of Write that is an OCI image layout
// directory rather than a registry reference: "oci-layout:PATH".
const LayoutPrefix = "oci-layout:"

// refNameAnnotation names an image in an OCI layout's index.json.
const refNameAnnotation = "org.opencontainers.image.ref.name"

// Write stores img at dst: in the OCI image layout directory PATH when dst
// is "oci-layout:PATH" (see WriteLayout), else in the registry dst names
// (see Push).
func Write(ctx context.Context, img v1.Image, dst string, opts ...Option) error {
	if p, ok := strings.CutPrefix(dst, LayoutPrefix); ok {
		if p == "" {
			return fmt.Errorf("write image to %q: empty layout path", dst)
		}
		return WriteLayout(p, img, "")
	}
	return Push(ctx, img, dst, opts...)
}

// Push uploads img to the registry reference ref (a tag or a digest),
// with the TLS, plain-HTTP and credential options of Pull. Blobs the
// registry already has are not uploaded again.
func Push(ctx context.Context, img v1.Image, ref string, opts ...Option) error {
	o, err := makeOptions(opts...)
	if err != nil {
		return err
	}
	r, err := o.parseReference(ref)
	if err != nil {
		return err
	}
	ropts := o.remoteOptions(ctx)
	var done func(err error)
	if o.progress != nil {
		ropts, done = pushProgress(o.progress, ref, ropts)
	}
	err = remote.Write(r, img, ropts...)
	if done != nil {
		done(err)
	}
	if err != nil {
		return fmt.Errorf("push %s: %w", ref, err)
	}
	return nil
}

// pushProgress adds to ropts a progress channel whose updates count the
// megabytes pushed on a status line; done ends the line with a summary.
func pushProgress(r *progress.Reporter, ref string, ropts []remote.Option) ([]remote.Option, func(error)) {
	updates := make(chan v1.Update, 16)
	finished := make(chan struct{})
	start := time.Now()
	var total int64
	go func() {
		defer close(finished)
		var (
			task *progress.Task
			mb   int
		)
		for u := range updates {
			if task == nil && u.Total > 0 {
				task = r.Start("pushing "+ref+" (MB)", int((u.Total+(1<<20)-1)>>20))
			}
			total = u.Total
			if now := int(u.Complete >> 20); now > mb {
				task.Add(now - mb)
				mb = now
			}
		}
		task.Done("")
	}()
	return append(ropts, remote.WithProgress(updates)), func(err error) {
		if err != nil {
			// remote.Write closes the channel, unless it failed before
			// it started writing.
			select {
			case <-finished:
			case <-time.After(time.Second):
			}
			return
		}
		<-finished
		r.Printf("pushed %s (%.1f MB) in %v", ref, float64(total)/1e6, time.Since(start).Round(10*time.Millisecond))
	}
}

// WriteLayout writes img into the OCI image layout directory dir, creating
// the layout if needed. With refName, the image is annotated
// org.opencontainers.image.ref.name=refName and replaces the image that had
// that name; without it, the layout's index lists img alone. Blobs already
// present are not written again.
func WriteLayout(dir string, img v1.Image, refName string) error {
	p, err := openLayout(dir)
	if err != nil {
		return fmt.Errorf("write image to layout %s: %w", dir, err)
	}
	matcher := func(v1.Descriptor) bool { return true }
	var lopts []layout.Option
	if refName != "" {
		matcher = match.Annotation(refNameAnnotation, refName)
		lopts = append(lopts, layout.WithAnnotations(map[string]string{refNameAnnotation: refName}))
	}
	if err := p.ReplaceImage(img, matcher, lopts...); err != nil {
		return fmt.Errorf("write image to layout %s: %w", dir, err)
	}
	return nil
}

// openLayout opens the OCI layout at dir, or creates an empty one.
func openLayout(dir string) (layout.Path, error) {
	_, err := os.Stat(filepath.Join(dir, "index.json"))
	switch {
	case err == nil:
		return layout.FromPath(dir)
	case errors.Is(err, fs.ErrNotExist):
		return layout.Write(dir, empty.Index)
	default:
		return "", err
	}
}
