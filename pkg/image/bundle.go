package image

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"

	"github.com/fastopm/fastopm/pkg/interrupt"
)

// UnpackBundle implements `opm alpha bundle unpack IMAGE -o OUT`: it pulls
// the bundle image ref and writes its filesystem (manifests/, metadata/
// and whatever else the image holds, such as tests/scorecard/) into out.
//
// Like upstream opm, out is created (0755) when missing, must be a
// directory otherwise, and may already hold files: the image content is
// merged in, replacing files of the same name. The image is first
// unpacked, under the safety rules of Unpack, into a temporary directory
// inside out; the check of WithCheck (bundle validation) runs on it, and
// only if it passes is the content moved into place. The labels are not
// looked at, as upstream does not.
//
// It takes the options of Pull and Unpack, and WithCheck.
func UnpackBundle(ctx context.Context, ref, out string, opts ...Option) error {
	o, err := makeOptions(opts...)
	if err != nil {
		return err
	}
	fi, err := os.Stat(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(out, 0o755); err != nil {
			return fmt.Errorf("create output directory: %w", err)
		}
	case err != nil:
		return fmt.Errorf("output directory: %w", err)
	case !fi.IsDir():
		return fmt.Errorf("out %s is not a directory", out)
	}

	img, err := o.pull(ctx, ref)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(out, ".unpack-")
	if err != nil {
		return fmt.Errorf("create temporary directory: %w", err)
	}
	defer interrupt.OnExit(func() { _ = os.RemoveAll(tmp) })()
	defer os.RemoveAll(tmp)
	if err := o.unpack(ctx, img, tmp); err != nil {
		return err
	}
	if o.check != nil {
		if err := o.check(tmp); err != nil {
			return fmt.Errorf("bundle %s: %w", ref, err)
		}
	}

	root, err := os.OpenRoot(out)
	if err != nil {
		return fmt.Errorf("open output directory: %w", err)
	}
	defer root.Close()
	if err := merge(root, path.Base(tmp), "."); err != nil {
		return fmt.Errorf("bundle %s: move content into %s: %w", ref, out, err)
	}
	return nil
}

// merge moves the children of directory src into directory dst (both
// relative to root): a child dst lacks is renamed into place; a directory
// both have is merged; anything else in dst is replaced.
func merge(root *os.Root, src, dst string) error {
	d, err := root.Open(src)
	if err != nil {
		return err
	}
	ents, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return err
	}
	for _, e := range ents {
		from, to := path.Join(src, e.Name()), path.Join(dst, e.Name())
		fi, err := root.Lstat(to)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return err
		case fi.IsDir() && e.IsDir():
			if err := merge(root, from, to); err != nil {
				return err
			}
			continue
		default:
			if err := root.RemoveAll(to); err != nil {
				return err
			}
		}
		if err := root.Rename(from, to); err != nil {
			return err
		}
	}
	return nil
}
