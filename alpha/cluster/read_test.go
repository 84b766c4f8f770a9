package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const subYAML = `apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata:
  name: etcd
  namespace: ns1
spec:
  name: etcd
  channel: stable
  source: community
  sourceNamespace: olm
status:
  installedCSV: etcdoperator.v0.9.2
`

const csvYAML = `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: etcdoperator.v0.9.2
  namespace: ns1
  annotations:
    alm-examples: '[{"big": "example"}]'
    olm.operatorNamespace: ns1
    olm.targetNamespaces: ns1
spec:
  version: 0.9.2
  description: a long description
  customresourcedefinitions:
    owned:
    - name: etcdclusters.etcd.database.coreos.com
      version: v1beta2
      kind: EtcdCluster
      description: dropped
  installModes:
  - type: OwnNamespace
    supported: true
  install:
    strategy: deployment
status:
  phase: Succeeded
`

// TestReadKinds: one file of several documents, a List in JSON, a copied
// CSV, kinds not read; what is kept of a CSV.
func TestReadKinds(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"state.yaml": "# a dump\n---\n" + subYAML + "---\n" + csvYAML + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: ns1\n---\n",
		"list.json": `{"apiVersion": "v1", "kind": "List", "items": [
			{"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup", "metadata": {"name": "og", "namespace": "ns1"}, "spec": {"targetNamespaces": ["ns1"]}},
			{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource", "metadata": {"name": "community", "namespace": "olm"}, "spec": {"sourceType": "grpc", "image": "quay.io/x/y:1", "priority": 5}},
			{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion", "metadata": {"name": "etcdoperator.v0.9.2", "namespace": "ns2", "annotations": {"olm.operatorNamespace": "ns1"}}, "spec": {}},
			{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1", "labels": {"team": "a"}}}
		]}`,
	})
	s, err := Read(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Subscriptions) != 1 || len(s.CSVs) != 1 || len(s.OperatorGroups) != 1 || len(s.CatalogSources) != 1 || len(s.Namespaces) != 1 || s.Copied != 1 || s.Skipped["ConfigMap"] != 1 || s.Files != 2 {
		t.Fatalf("read: %s", s.Summary())
	}
	csv := s.CSV("ns1", "etcdoperator.v0.9.2")
	if csv == nil || csv.Spec.Description != "" || csv.Annotations["alm-examples"] != "" || csv.Annotations["olm.targetNamespaces"] != "ns1" ||
		csv.Spec.CustomResourceDefinitions.Owned[0].Kind != "EtcdCluster" || csv.Spec.CustomResourceDefinitions.Owned[0].Description != "" ||
		csv.Spec.Version.String() != "0.9.2" || csv.Status.Phase != "Succeeded" {
		t.Errorf("kept of the CSV: %+v", csv)
	}
	if got := s.Origin(ObjectKey{KindSubscription, "ns1", "etcd"}); got != filepath.Join(dir, "state.yaml")+":3" {
		t.Errorf("origin %q", got)
	}
	if c := s.CatalogSource("olm", "community"); c == nil || c.Spec.Priority != 5 {
		t.Errorf("catalog source %+v", c)
	}
}

// TestReadMustGather: a must-gather's OLM files are read and nothing else
// is opened (a malformed log file would fail the read).
func TestReadMustGather(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"timestamp":                            "x",
		"quay-io-openshift-sha256-abc/version": "4.16",
		"quay-io-openshift-sha256-abc/namespaces/ns1/ns1.yaml":                                                             "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns1\n",
		"quay-io-openshift-sha256-abc/namespaces/ns1/operators.coreos.com/subscriptions/etcd.yaml":                         subYAML,
		"quay-io-openshift-sha256-abc/namespaces/ns1/operators.coreos.com/clusterserviceversions/etcdoperator.v0.9.2.yaml": csvYAML,
		"quay-io-openshift-sha256-abc/namespaces/ns1/core/configmaps.yaml":                                                 ": not yaml [",
		"quay-io-openshift-sha256-abc/namespaces/ns1/pods/x/logs/current.log":                                              "not yaml: [",
		"quay-io-openshift-sha256-abc/cluster-scoped-resources/operators.coreos.com/operators/etcd.ns1.yaml":               "not read: [",
		"quay-io-openshift-sha256-abc/cluster-scoped-resources/apiextensions.k8s.io/customresourcedefinitions/x.yaml":      "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: etcdclusters.etcd.database.coreos.com\nspec:\n  group: etcd.database.coreos.com\n  names: {kind: EtcdCluster, plural: etcdclusters}\n  scope: Namespaced\n  versions: []\n",
	})
	s, err := Read(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Subscriptions) != 1 || len(s.CSVs) != 1 || len(s.Namespaces) != 1 || len(s.CRDs) != 1 || s.Files != 4 {
		t.Fatalf("read: %s", s.Summary())
	}
}

// TestReadErrors: every bad input is an error naming the file, the line
// or the object, and the problem.
func TestReadErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"malformed yaml", map[string]string{"a.yaml": subYAML + "---\nkind: Subscription\nmetadata:\n  name: [\n"}, "a.yaml:16: did not find expected node content"},
		{"no kind", map[string]string{"a.yaml": "metadata:\n  name: x\n"}, "a.yaml: not a Kubernetes object: it has no kind"},
		{"no package", map[string]string{"a.yaml": strings.Replace(subYAML, "  name: etcd\n  channel", "  channel", 1)}, "Subscription ns1/etcd: spec.name (the package) is missing"},
		{"no namespace", map[string]string{"a.yaml": strings.Replace(subYAML, "  namespace: ns1\n", "", 1)}, "Subscription etcd without metadata.namespace"},
		{"wrong type", map[string]string{"a.yaml": strings.Replace(subYAML, "channel: stable", "channel: [stable]", 1)}, "Subscription ns1/etcd: json: cannot unmarshal array"},
		{"duplicate", map[string]string{"a.yaml": subYAML, "b.yaml": strings.Replace(subYAML, "channel: stable", "channel: fast", 1)}, "is also in"},
		{"not json", map[string]string{"a.json": `{"kind": "Subscription", "metadata": {"name": "x"}, }`}, "a.json:1: invalid character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(context.Background(), writeFiles(t, tc.files))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	// The same object twice (a dump and a must-gather of one cluster):
	// read once.
	s, err := Read(context.Background(), writeFiles(t, map[string]string{"a.yaml": subYAML, "b.yaml": subYAML}))
	if err != nil || len(s.Subscriptions) != 1 {
		t.Errorf("the same object twice: %v, %d", err, len(s.Subscriptions))
	}
}
