// Command crdsafetydiff checks alpha/crdsafety's OLM v1 verdicts and
// problems against operator-controller's own preflight: it writes pairs
// of bundles (the CRDs and the CSV of the two bundles of each update,
// and mutations of them), answers them with alpha/crdsafety, and compares
// those answers with the answers of a harness built from
// operator-controller's sources (kept out of this repository;
// docs/crd-safety.md, "Checked against operator-controller", says what it
// runs).
//
//	go run ./hack/crdsafetydiff pairs [-mutations N] OUT CATALOG...
//	go run ./hack/crdsafetydiff answer OUT > ours.jsonl
//	go run ./hack/crdsafetydiff compare OUT ours.jsonl theirs.jsonl...
//
// pairs writes OUT/NNNNN/{old,new}/NN.json (each bundle's v1 and v1beta1
// CRD manifests, as JSON, then its CSV) and OUT/NNNNN/meta.json, for
// every update OLM v0 takes in each CATALOG whose two bundles carry
// olm.bundle.object properties and a CRD of the same name, once per
// distinct pair of bundles; then N mutated pairs: a real CRD and a copy
// with a few schema changes (or a new served version that changes the
// first one), the new CSV declaring a conversion webhook for it in a
// quarter of them. The mutations are the same from run to run.
//
// answer prints one line per pair: {"id", "crds": [{"name", "refused",
// "problems"}]}, each CRD of the new bundle that the old one has, its
// OLM v1 verdict, and its problems written as operator-controller's
// preflight writes them ("VERSION: FIELD: CHECK: MESSAGE",
// "existingFieldRemoval: removed field : VERSION.FIELD").
// operator-controller's harness prints the same lines from its
// generators.BundleCRDGenerator and crdupgradesafety.Preflight.Upgrade
// (theirs.jsonl, one file per run).
//
// compare counts, per kind of pair (edge, mutation) and per run of
// theirs, the CRD pairs whose verdicts are the same, and whose lists of
// problems are the same as multisets: as they are ("raw"); with
// crdify's map-ordered required lists sorted and pointer addresses
// written 0x0 ("normalized"); and with, besides, what alpha/crdsafety
// folds into a removed field left out of theirs ("folded",
// docs/crd-safety.md, Messages). It then prints every CRD pair whose
// verdict or folded list differs, and exits 1 if there is one.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "pairs":
		err = pairs(os.Args[2:])
	case "answer":
		if len(os.Args) != 3 {
			usage()
		}
		err = answerAll(os.Args[2], os.Stdout)
	case "compare":
		if len(os.Args) < 5 {
			usage()
		}
		var n int
		n, err = compare(os.Args[2], os.Args[3], os.Args[4:], os.Stdout)
		if err == nil && n > 0 {
			os.Exit(1)
		}
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "crdsafetydiff:", err)
		os.Exit(2)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: crdsafetydiff pairs [-mutations N] OUT CATALOG... | answer OUT | compare OUT OURS THEIRS...")
	os.Exit(2)
}
