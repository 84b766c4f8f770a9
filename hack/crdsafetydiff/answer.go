package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/fastopm/fastopm/alpha/crdsafety"
	"github.com/fastopm/fastopm/alpha/property"
)

// crdAnswer is one CRD's OLM v1 verdict and problems; theirs are read
// into it too.
type crdAnswer struct {
	Name     string   `json:"name"`
	Refused  bool     `json:"refused"`
	Problems []string `json:"problems,omitempty"`
	// Other are our changes without an OLM v1 refusal (OLM v0's, our
	// own checks without a verdict): not compared.
	Other []string `json:"other,omitempty"`
	// Error is an error of theirs that is not the preflight's verdict.
	Error string `json:"error,omitempty"`
}

type pairAnswer struct {
	ID      string      `json:"id"`
	Unknown string      `json:"unknown,omitempty"`
	CRDs    []crdAnswer `json:"crds"`
}

// pairDirs are the pairs under root, in order.
func pairDirs(root string) ([]string, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, filepath.Join(root, e.Name()))
		}
	}
	return out, nil
}

// objectFiles are a pair's side's manifests, in order.
func objectFiles(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	slices.Sort(files)
	return files, err
}

// bundleProperties are a side's manifests as the olm.bundle.object
// properties of a bundle.
func bundleProperties(dir string) ([]property.Property, error) {
	files, err := objectFiles(dir)
	if err != nil {
		return nil, err
	}
	var out []property.Property
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(map[string]string{"data": base64.StdEncoding.EncodeToString(data)})
		if err != nil {
			return nil, err
		}
		out = append(out, property.Property{Type: property.TypeBundleObject, Value: v})
	}
	return out, nil
}

// ocString writes a change as operator-controller's preflight writes a
// problem.
func ocString(c crdsafety.Change) string {
	switch {
	case c.Check == "existingFieldRemoval":
		return "existingFieldRemoval: removed field : " + c.Version + "." + c.Field
	case c.Version == "" && c.Field == "":
		return c.Check + ": " + c.Message
	}
	return c.Version + ": " + c.Field + ": " + c.Check + ": " + c.Message
}

func answerAll(root string, w io.Writer) error {
	ctx := context.Background()
	checker, err := crdsafety.NewChecker()
	if err != nil {
		return err
	}
	dirs, err := pairDirs(root)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, d := range dirs {
		res, err := answer(ctx, checker, d)
		if err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
		if err := enc.Encode(res); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// answer is ours on one pair, through ReadBundle and Index.Compare, as
// `opm alpha query updates` compares the bundles of an update.
func answer(ctx context.Context, checker *crdsafety.Checker, dir string) (pairAnswer, error) {
	res := pairAnswer{ID: filepath.Base(dir)}
	ix := crdsafety.NewIndex()
	var names [2][]string
	for i, side := range []string{"old", "new"} {
		props, err := bundleProperties(filepath.Join(dir, side))
		if err != nil {
			return res, err
		}
		b, err := crdsafety.ReadBundle(props)
		if err != nil {
			return res, fmt.Errorf("%s: %w", side, err)
		}
		ix.Add("p", side, b)
		for _, c := range b.CRDs {
			names[i] = append(names[i], c.Name)
		}
	}
	r, err := ix.Compare(ctx, checker, "p", "old", "new")
	if err != nil {
		return res, err
	}
	res.Unknown = r.Unknown
	for _, n := range names[1] {
		if slices.Contains(names[0], n) && !slices.ContainsFunc(res.CRDs, func(c crdAnswer) bool { return c.Name == n }) {
			res.CRDs = append(res.CRDs, crdAnswer{Name: n})
		}
	}
	for _, c := range r.Changes {
		i := slices.IndexFunc(res.CRDs, func(a crdAnswer) bool { return a.Name == c.CRD })
		if i < 0 {
			return res, fmt.Errorf("a change of CRD %s, which is not in both bundles", c.CRD)
		}
		cr := &res.CRDs[i]
		if c.V1 == crdsafety.Refuses || c.V1 == crdsafety.NotChecked {
			cr.Refused = true
			cr.Problems = append(cr.Problems, ocString(c))
		} else {
			cr.Other = append(cr.Other, c.String())
		}
	}
	return res, nil
}
