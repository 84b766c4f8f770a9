package catalogimage_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fastopm/fastopm/pkg/catalogimage"
	"github.com/fastopm/fastopm/pkg/image"
)

// Build a catalog image on scratch and write it into an OCI image layout.
// A real build passes the serve cache builder (action.BuildServeCache) and
// usually a base image pulled with image.Pull.
func ExampleBuild() {
	out, err := os.MkdirTemp("", "example-layout-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(out)

	stubCache := func(configsDir, cacheDir string) error {
		if err := os.Mkdir(cacheDir, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(cacheDir, "cache"), []byte("stub"), 0o644)
	}
	img, err := catalogimage.Build(context.Background(), catalogimage.Options{
		Dir:    "../../testdata/example",
		Cache:  stubCache,
		Labels: map[string]string{"org.opencontainers.image.title": "example catalog"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer img.Close()
	if err := image.Write(context.Background(), img, image.LayoutPrefix+out); err != nil {
		fmt.Println(err)
		return
	}
	cf, err := img.ConfigFile()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cf.Config.Labels[image.ConfigsLabel], cf.Created.Unix())
	// Output: /configs 0
}
