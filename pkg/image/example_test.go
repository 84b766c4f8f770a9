package image_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/fastopm/fastopm/pkg/bundle"
	"github.com/fastopm/fastopm/pkg/image"
)

// pushExample pushes an image of files with labels to a fresh in-process
// registry and returns its reference.
func pushExample(files map[string][]byte, labels map[string]string) (ref string, stop func()) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	ref = strings.TrimPrefix(srv.URL, "http://") + "/example:v1"
	img, err := crane.Image(files)
	if err == nil {
		img, err = mutate.Config(img, v1.Config{Labels: labels})
	}
	if err == nil {
		err = crane.Push(img, ref)
	}
	if err != nil {
		log.Fatal(err)
	}
	return ref, srv.Close
}

func ExampleExtract() {
	ref, stop := pushExample(map[string][]byte{
		"configs/etcd/catalog.json": []byte(`{"schema":"olm.package","name":"etcd"}`),
		"bin/opm":                   []byte("not unpacked: outside /configs"),
	}, map[string]string{image.ConfigsLabel: "/configs"})
	defer stop()

	dir, err := os.MkdirTemp("", "example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	x, err := image.Extract(context.Background(), ref, dir)
	if err != nil {
		log.Fatal(err)
	}
	rel, _ := filepath.Rel(dir, x.Dir)
	body, _ := os.ReadFile(filepath.Join(x.Dir, "etcd", "catalog.json"))
	fmt.Println(x.Kind, rel, string(body))
	// Output: catalog configs {"schema":"olm.package","name":"etcd"}
}

func ExampleUnknownImageError() {
	ref, stop := pushExample(map[string][]byte{"hello": []byte("world")},
		map[string]string{"maintainer": "me", "version": "1"})
	defer stop()

	_, err := image.Extract(context.Background(), ref, os.TempDir())
	var unknown *image.UnknownImageError
	if errors.As(err, &unknown) {
		fmt.Println(strings.ReplaceAll(err.Error(), ref, "REF"))
	}
	// Output:
	// "REF": image type could not be determined, found labels
	//   maintainer=me
	//   version=1
}

func ExamplePull() {
	ref, stop := pushExample(map[string][]byte{"manifests/csv.yaml": []byte("kind: ClusterServiceVersion")},
		map[string]string{bundle.AnnotationPackage: "etcd"})
	defer stop()

	img, err := image.Pull(context.Background(), ref,
		image.WithPlainHTTP(false),     // opm --use-http
		image.WithSkipTLSVerify(false), // opm --skip-tls-verify
	)
	if err != nil {
		log.Fatal(err)
	}
	labels, err := image.Labels(img)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(image.KindOf(labels), labels[bundle.AnnotationPackage])
	// Output: bundle etcd
}
