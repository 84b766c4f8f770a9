package bundle_test

import (
	"fmt"
	"testing/fstest"
	"text/template"

	"github.com/fastopm/fastopm/pkg/bundle"
)

// Render a bundle directory (here an in-memory one; use RenderDir for a
// directory on disk) with an image reference template.
func ExampleRender() {
	fsys := fstest.MapFS{
		"metadata/annotations.yaml": {Data: []byte(`annotations:
  operators.operatorframework.io.bundle.package.v1: example
  operators.operatorframework.io.bundle.channels.v1: stable
`)},
		"manifests/example.clusterserviceversion.yaml": {Data: []byte(`apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: example.v0.1.0
spec:
  version: 0.1.0
  install:
    strategy: deployment
    spec:
      deployments:
      - name: example
        spec:
          template:
            spec:
              containers:
              - name: manager
                image: quay.io/example/operator:v0.1.0
`)},
	}
	tmpl := template.Must(template.New("image").Parse("quay.io/example/{{.Package}}-bundle:v{{.Version}}"))
	b, warnings, err := bundle.Render(fsys, "example", bundle.Options{ImageRefTemplate: tmpl})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, w := range warnings {
		fmt.Println("warning:", w)
	}
	fmt.Println(b.Name, b.Package, b.Image)
	for _, p := range b.Properties {
		if p.Type != "olm.bundle.object" {
			fmt.Println(p.Type, string(p.Value))
		}
	}
	for _, ri := range b.RelatedImages {
		fmt.Println("related:", ri.Image)
	}
	// Output:
	// example.v0.1.0 example quay.io/example/example-bundle:v0.1.0
	// olm.package {"packageName":"example","version":"0.1.0"}
	// related: quay.io/example/example-bundle:v0.1.0
	// related: quay.io/example/operator:v0.1.0
}
