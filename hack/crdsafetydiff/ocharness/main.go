// Command crdharness runs operator-controller v1.11.0's own code on the
// pairs of bundles `go run ./hack/crdsafetydiff pairs` writes: its
// registry+v1 renderer's CRD generator (generators.BundleCRDGenerator: a
// CSV's conversion webhooks make the CRD's conversion a webhook) on each
// bundle, then its CRD upgrade-safety preflight
// (crdupgradesafety.Preflight.Upgrade) on each CRD of the new bundle,
// against a fake API server holding the old bundle's rendered CRD of the
// same name (its status.storedVersions the old CRD's storage version),
// and prints one JSON line per pair, as `crdsafetydiff answer` does: each
// CRD's verdict and problems, unwrapped from the preflight's error.
//
// It is a module of its own, whose path lies under operator-controller's
// so that it may import operator-controller's internal packages; its
// go.sum holds the hashes of operator-controller v1.11.0's own go.sum for
// crdify's pseudo-version, which the checksum database does not know.
//
//	cd hack/crdsafetydiff/ocharness && go build -o /tmp/crdharness .
//	/tmp/crdharness PAIRS > theirs.jsonl
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/fake"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/operator-framework/operator-controller/internal/operator-controller/rukpak/bundle"
	"github.com/operator-framework/operator-controller/internal/operator-controller/rukpak/preflights/crdupgradesafety"
	"github.com/operator-framework/operator-controller/internal/operator-controller/rukpak/render"
	"github.com/operator-framework/operator-controller/internal/operator-controller/rukpak/render/registryv1/generators"
)

type crdResult struct {
	Name     string   `json:"name"`
	Refused  bool     `json:"refused"`
	Problems []string `json:"problems,omitempty"`
	Error    string   `json:"error,omitempty"` // not a preflight verdict
}

type pairResult struct {
	ID        string      `json:"id"`
	RenderErr string      `json:"renderErr,omitempty"`
	CRDs      []crdResult `json:"crds"`
}

func readBundle(dir string) (*bundle.RegistryV1, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	rv1 := &bundle.RegistryV1{PackageName: "p"}
	seen := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var obj map[string]any
		if err := yaml.Unmarshal(data, &obj); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		switch obj["kind"] {
		case "ClusterServiceVersion":
			var csv v1alpha1.ClusterServiceVersion
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &csv); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			rv1.CSV = csv
		case "CustomResourceDefinition":
			if obj["apiVersion"] != "apiextensions.k8s.io/v1" {
				continue
			}
			var crd apiextensionsv1.CustomResourceDefinition
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &crd); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if seen[crd.Name] {
				continue // the first of a name, as OLM v1 reads a bundle
			}
			seen[crd.Name] = true
			rv1.CRDs = append(rv1.CRDs, crd)
		}
	}
	return rv1, nil
}

func renderCRDs(rv1 *bundle.RegistryV1) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	objs, err := generators.BundleCRDGenerator(rv1, render.Options{InstallNamespace: "ns", TargetNamespaces: []string{""}})
	if err != nil {
		return nil, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, o := range objs {
		out = append(out, o.(*apiextensionsv1.CustomResourceDefinition))
	}
	return out, nil
}

// problems unwraps the preflight's error: errors.Join of one
// "validating upgrade for CRD %q: %w" per CRD, each wrapping errors.Join
// of its problems.
func problems(err error) []string {
	var out []string
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		if strings.HasPrefix(e.Error(), "validating upgrade for CRD ") {
			if u := errors.Unwrap(e); u != nil {
				walk(u)
				return
			}
		}
		out = append(out, e.Error())
	}
	walk(err)
	return out
}

func runPair(ctx context.Context, dir string) pairResult {
	res := pairResult{ID: filepath.Base(dir)}
	oldB, err := readBundle(filepath.Join(dir, "old"))
	if err != nil {
		res.RenderErr = "old: " + err.Error()
		return res
	}
	newB, err := readBundle(filepath.Join(dir, "new"))
	if err != nil {
		res.RenderErr = "new: " + err.Error()
		return res
	}
	oldCRDs, err := renderCRDs(oldB)
	if err != nil {
		res.RenderErr = "old: " + err.Error()
		return res
	}
	newCRDs, err := renderCRDs(newB)
	if err != nil {
		res.RenderErr = "new: " + err.Error()
		return res
	}
	byName := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, c := range oldCRDs {
		byName[c.Name] = c
	}
	for _, n := range newCRDs {
		o := byName[n.Name]
		if o == nil {
			continue
		}
		cluster := o.DeepCopy()
		cluster.Status.StoredVersions = nil
		for _, v := range cluster.Spec.Versions {
			if v.Storage {
				cluster.Status.StoredVersions = append(cluster.Status.StoredVersions, v.Name)
			}
		}
		cs := fake.NewSimpleClientset(cluster)
		pf := crdupgradesafety.NewPreflight(cs.ApiextensionsV1().CustomResourceDefinitions())
		nn := n.DeepCopy()
		nn.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		cr := crdResult{Name: n.Name}
		err := pf.Upgrade(ctx, []client.Object{nn})
		if err != nil {
			if strings.HasPrefix(err.Error(), "validating upgrade for CRD") {
				cr.Refused = true
				cr.Problems = problems(err)
			} else {
				cr.Refused = true
				cr.Error = err.Error()
			}
		}
		res.CRDs = append(res.CRDs, cr)
	}
	return res
}

func main() {
	flag.Parse()
	ctx := context.Background()
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	for _, root := range flag.Args() {
		dirs, _ := filepath.Glob(filepath.Join(root, "*"))
		sort.Strings(dirs)
		for _, d := range dirs {
			if st, err := os.Stat(d); err != nil || !st.IsDir() {
				continue
			}
			if err := enc.Encode(runPair(ctx, d)); err != nil {
				log.Fatal(err)
			}
		}
	}
}
