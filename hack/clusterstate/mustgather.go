package main

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// mustGather writes files and counts them.
type mustGather struct {
	w     *world
	root  string
	bytes int64
	files int
	logs  []string // the log files to pad, relative to root
}

func (m *mustGather) write(rel string, data []byte) error {
	p := filepath.Join(m.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		return err
	}
	m.bytes += int64(len(data))
	m.files++
	return nil
}

func (m *mustGather) object(rel string, o object) error {
	y, err := yaml.Marshal(o)
	if err != nil {
		return err
	}
	return m.write(rel, y)
}

// list writes objects as the List `oc adm inspect` writes for a
// namespace's resource (namespaces/NS/GROUP/RESOURCE.yaml).
func (m *mustGather) list(rel, kind string, items []any) error {
	return m.object(rel, object{"apiVersion": "v1", "kind": kind, "items": items, "metadata": object{"resourceVersion": "4242"}})
}

// writeMustGather lays the objects out as `oc adm must-gather` does: the
// must-gather image's directory holding cluster-scoped-resources/ and
// namespaces/, one file per OLM object, with the copied CSVs in every
// namespace, and pads it to size with what the reader does not open.
func (w *world) writeMustGather(dir string, size int64) (int64, int, error) {
	root := filepath.Join(dir, fmt.Sprintf("must-gather.local.%d", 5321849012+w.rng.IntN(1e6)))
	image := "quay-io-openshift-release-dev-ocp-v4-0-art-dev-sha256-" + fmt.Sprintf("%016x%016x%016x%016x", w.rng.Uint64(), w.rng.Uint64(), w.rng.Uint64(), w.rng.Uint64())
	m := &mustGather{w: w, root: root}
	if err := m.write("timestamp", []byte("2026-03-01 08:00:00.000000000 +0000 UTC m=+0.041\n")); err != nil {
		return 0, 0, err
	}
	m.root = filepath.Join(root, image)
	if err := m.write("version", []byte("oc adm must-gather 4.16.0\nquay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:"+image[len(image)-64:]+"\n")); err != nil {
		return 0, 0, err
	}
	if err := m.write("timestamp", []byte("2026-03-01 08:00:00.000000000 +0000 UTC m=+0.041\n2026-03-01 08:04:31.000000000 +0000 UTC m=+271.2\n")); err != nil {
		return 0, 0, err
	}

	// The OLM objects, one file per object.
	// (In a fixed order: OperatorConditions take serial numbers.)
	for _, kr := range [][2]string{{"CatalogSource", "catalogsources"}, {"Subscription", "subscriptions"}, {"ClusterServiceVersion", "clusterserviceversions"},
		{"OperatorGroup", "operatorgroups"}, {"InstallPlan", "installplans"}} {
		kind, res := kr[0], kr[1]
		for _, o := range w.kinds[kind] {
			md := o["metadata"].(map[string]any)
			if err := m.object(fmt.Sprintf("namespaces/%s/operators.coreos.com/%s/%s.yaml", md["namespace"], res, md["name"]), o); err != nil {
				return 0, 0, err
			}
			if kind == "ClusterServiceVersion" {
				if err := m.operatorCondition(md); err != nil {
					return 0, 0, err
				}
			}
		}
	}
	everyNamespace := w.allNamespaces()
	for _, ns := range everyNamespace[1:] {
		for _, c := range w.copies {
			cc := copyOf(c, ns)
			if err := m.object(fmt.Sprintf("namespaces/%s/operators.coreos.com/clusterserviceversions/%s.yaml", ns, cc["metadata"].(map[string]any)["name"]), cc); err != nil {
				return 0, 0, err
			}
		}
	}
	// Namespace objects only for the namespaces inspected as such:
	// OpenShift's, not the users'.
	for _, o := range w.kinds["Namespace"] {
		name := o["metadata"].(map[string]any)["name"].(string)
		if slices.Contains(openshiftNamespaces, name) || name == "openshift-operators" {
			if err := m.object(fmt.Sprintf("namespaces/%s/%s.yaml", name, name), o); err != nil {
				return 0, 0, err
			}
		}
	}
	// A few CRDs: those something inspected.
	for i, o := range w.kinds["CustomResourceDefinition"] {
		if i%8 != 0 {
			continue
		}
		name := o["metadata"].(map[string]any)["name"].(string)
		if err := m.object("cluster-scoped-resources/apiextensions.k8s.io/customresourcedefinitions/"+name+".yaml", o); err != nil {
			return 0, 0, err
		}
	}
	if err := m.clusterScoped(); err != nil {
		return 0, 0, err
	}
	// What every namespace also holds: lists of its resources, pods and
	// their logs.
	for _, ns := range everyNamespace {
		if err := m.namespaceResources(ns); err != nil {
			return 0, 0, err
		}
	}
	if err := m.write("gather.logs", []byte(strings.Repeat("[must-gather      ] OUT gather logs\n", 2000))); err != nil {
		return 0, 0, err
	}
	if err := m.padLogs(size); err != nil {
		return 0, 0, err
	}
	return m.bytes, m.files, nil
}

func (m *mustGather) operatorCondition(md map[string]any) error {
	w := m.w
	return m.object(fmt.Sprintf("namespaces/%s/operators.coreos.com/operatorconditions/%s.yaml", md["namespace"], md["name"]), object{
		"apiVersion": "operators.coreos.com/v2", "kind": "OperatorCondition", "metadata": w.meta(md["name"].(string), md["namespace"].(string)),
		"spec":   object{"deployments": []any{strings.SplitN(md["name"].(string), ".", 2)[0]}, "serviceAccounts": []any{"default"}},
		"status": object{"conditions": []any{}},
	})
}

func (m *mustGather) clusterScoped() error {
	w := m.w
	if err := m.object("cluster-scoped-resources/config.openshift.io/clusterversions/version.yaml", object{
		"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion", "metadata": w.meta("version", ""),
		"spec":   object{"channel": "stable-4.16", "clusterID": w.uid()},
		"status": object{"desired": object{"version": "4.16.21", "image": "quay.io/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("ab", 32)}},
	}); err != nil {
		return err
	}
	for _, co := range []string{"authentication", "console", "dns", "etcd", "image-registry", "ingress", "kube-apiserver", "machine-config", "marketplace", "monitoring", "network", "operator-lifecycle-manager", "operator-lifecycle-manager-catalog", "operator-lifecycle-manager-packageserver", "storage"} {
		if err := m.object("cluster-scoped-resources/config.openshift.io/clusteroperators/"+co+".yaml", object{
			"apiVersion": "config.openshift.io/v1", "kind": "ClusterOperator", "metadata": w.meta(co, ""),
			"status": object{"conditions": []any{object{"type": "Available", "status": "True", "lastTransitionTime": w.stamp()}}, "versions": []any{object{"name": "operator", "version": "4.16.21"}}},
		}); err != nil {
			return err
		}
	}
	if err := m.object("cluster-scoped-resources/operators.coreos.com/olmconfigs/cluster.yaml", object{
		"apiVersion": "operators.coreos.com/v1", "kind": "OLMConfig", "metadata": w.meta("cluster", ""), "spec": object{},
	}); err != nil {
		return err
	}
	for _, s := range w.kinds["Subscription"] {
		md := s["metadata"].(map[string]any)
		name := fmt.Sprintf("%s.%s", md["name"], md["namespace"])
		if err := m.object("cluster-scoped-resources/operators.coreos.com/operators/"+name+".yaml", object{
			"apiVersion": "operators.coreos.com/v1", "kind": "Operator", "metadata": w.meta(name, ""), "spec": object{},
			"status": object{"components": object{"labelSelector": object{"matchExpressions": []any{object{"key": "operators.coreos.com/" + name, "operator": "Exists"}}}}},
		}); err != nil {
			return err
		}
	}
	for i := range 6 {
		role := "worker"
		if i < 3 {
			role = "master"
		}
		name := fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", 16*i+3, 100+i)
		if err := m.object("cluster-scoped-resources/core/nodes/"+name+".yaml", object{
			"apiVersion": "v1", "kind": "Node", "metadata": w.meta(name, ""),
			"status": object{"nodeInfo": object{"kubeletVersion": "v1.29.9+5865c5b", "osImage": "Red Hat Enterprise Linux CoreOS 416.94"}, "capacity": object{"cpu": "8", "memory": "32386596Ki"}},
			"spec":   object{"taints": []any{object{"key": "node-role.kubernetes.io/" + role, "effect": "NoSchedule"}}},
		}); err != nil {
			return err
		}
	}
	return nil
}

var fakePEM = "-----BEGIN CERTIFICATE-----\n" + strings.Repeat(base64.StdEncoding.EncodeToString([]byte(strings.Repeat("certificate-bytes", 3)))[:64]+"\n", 18) + "-----END CERTIFICATE-----\n"

// namespaceResources writes what `oc adm inspect` writes of a namespace
// besides OLM's objects: Lists of its ConfigMaps, events, pods,
// services, deployments, and each pod's own file and its containers' logs
// (empty here: padLogs fills them).
func (m *mustGather) namespaceResources(ns string) error {
	w := m.w
	cms := []any{
		object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": w.meta("kube-root-ca.crt", ns), "data": object{"ca.crt": fakePEM + fakePEM}},
		object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": w.meta("openshift-service-ca.crt", ns), "data": object{"service-ca.crt": fakePEM}},
	}
	for i := range w.rng.IntN(6) {
		var b strings.Builder
		for j := range 40 + w.rng.IntN(200) {
			fmt.Fprintf(&b, "setting.%d.%d = %x\n", i, j, w.rng.Uint64())
		}
		cms = append(cms, object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": w.meta(fmt.Sprintf("%s-config-%d", strings.TrimPrefix(ns, "openshift-"), i), ns), "data": object{"config.properties": b.String()}})
	}
	if err := m.list("namespaces/"+ns+"/core/configmaps.yaml", "ConfigMapList", cms); err != nil {
		return err
	}
	var pods, deployments, services, events []any
	npods := 1 + w.rng.IntN(4)
	for i := range npods {
		app := fmt.Sprintf("%s-%d", strings.TrimPrefix(ns, "openshift-"), i)
		pod := app + "-" + randomName(w.rng, 10) + "-" + randomName(w.rng, 5)
		containers := []any{object{"name": app, "image": "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:" + strings.Repeat(fmt.Sprintf("%04x", w.rng.IntN(65536)), 16),
			"resources": object{"requests": object{"cpu": "10m", "memory": "50Mi"}}, "terminationMessagePolicy": "FallbackToLogsOnError"}}
		if w.rng.IntN(2) == 0 {
			containers = append(containers, object{"name": "kube-rbac-proxy", "image": "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:" + strings.Repeat("cd", 32)})
		}
		p := object{"apiVersion": "v1", "kind": "Pod", "metadata": w.meta(pod, ns), "spec": object{"containers": containers, "serviceAccountName": app, "nodeName": "ip-10-0-3-100.ec2.internal"},
			"status": object{"phase": "Running", "podIP": fmt.Sprintf("10.128.%d.%d", w.rng.IntN(255), w.rng.IntN(255)), "startTime": w.stamp()}}
		pods = append(pods, p)
		if err := m.object(fmt.Sprintf("namespaces/%s/pods/%s/%s.yaml", ns, pod, pod), p); err != nil {
			return err
		}
		for _, c := range containers {
			name := c.(object)["name"].(string)
			for _, f := range []string{"current.log", "previous.log"} {
				rel := fmt.Sprintf("namespaces/%s/pods/%s/%s/%s/logs/%s", ns, pod, name, name, f)
				if err := m.write(rel, nil); err != nil {
					return err
				}
				if f == "current.log" {
					m.logs = append(m.logs, rel)
				}
			}
		}
		deployments = append(deployments, object{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": w.meta(app, ns),
			"spec":   object{"replicas": 1, "selector": object{"matchLabels": object{"app": app}}, "template": object{"spec": object{"containers": containers}}},
			"status": object{"availableReplicas": 1, "readyReplicas": 1, "replicas": 1}})
		services = append(services, object{"apiVersion": "v1", "kind": "Service", "metadata": w.meta(app, ns),
			"spec": object{"clusterIP": fmt.Sprintf("172.30.%d.%d", w.rng.IntN(255), w.rng.IntN(255)), "ports": []any{object{"name": "https", "port": 8443, "protocol": "TCP"}}}})
		for range 10 + w.rng.IntN(120) {
			events = append(events, object{"apiVersion": "v1", "kind": "Event", "metadata": w.meta(pod+"."+fmt.Sprintf("%x", w.rng.Uint64()), ns),
				"involvedObject": object{"kind": "Pod", "name": pod, "namespace": ns, "apiVersion": "v1"},
				"reason":         []string{"Scheduled", "Pulled", "Created", "Started", "ProbeError", "Unhealthy", "BackOff"}[w.rng.IntN(7)],
				"message":        fmt.Sprintf("Readiness probe error: Get \"https://10.128.%d.%d:8443/healthz\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)", w.rng.IntN(255), w.rng.IntN(255)),
				"source":         object{"component": "kubelet", "host": "ip-10-0-3-100.ec2.internal"}, "type": "Warning", "count": 1 + w.rng.IntN(400),
				"firstTimestamp": w.stamp(), "lastTimestamp": w.stamp()})
		}
	}
	for _, f := range []struct {
		rel, kind string
		items     []any
	}{{"core/pods.yaml", "PodList", pods}, {"core/services.yaml", "ServiceList", services}, {"core/events.yaml", "EventList", events},
		{"apps/deployments.yaml", "DeploymentList", deployments}, {"core/persistentvolumeclaims.yaml", "PersistentVolumeClaimList", []any{}}} {
		if err := m.list("namespaces/"+ns+"/"+f.rel, f.kind, f.items); err != nil {
			return err
		}
	}
	return nil
}

// padLogs fills the containers' current logs with log lines until the
// must-gather holds size bytes.
func (m *mustGather) padLogs(size int64) error {
	left := size - m.bytes
	if left <= 0 || len(m.logs) == 0 {
		return nil
	}
	w := m.w
	per := left / int64(len(m.logs))
	levels := []string{"info", "info", "info", "debug", "error", "warning"}
	for i, rel := range m.logs {
		n := per
		if i == len(m.logs)-1 {
			n = size - m.bytes
		}
		f, err := os.OpenFile(filepath.Join(m.root, filepath.FromSlash(rel)), os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		bw := bufio.NewWriterSize(f, 1<<20)
		var written int64
		for written < n {
			line := fmt.Sprintf("%s %s controller-runtime: reconciling {\"controller\": \"%s\", \"namespace\": \"%s\", \"name\": \"%s\", \"reconcileID\": \"%s\", \"duration\": \"%dms\"}\n",
				w.clock.Add(int64ToDuration(written)).Format("2006-01-02T15:04:05.000000Z"), levels[w.rng.IntN(len(levels))], filepath.Base(filepath.Dir(filepath.Dir(rel))),
				strings.Split(rel, "/")[1], randomName(w.rng, 12), w.uid(), w.rng.IntN(900))
			if rest := n - written; int64(len(line)) > rest {
				line = line[:rest]
			}
			bw.WriteString(line)
			written += int64(len(line))
		}
		if err := bw.Flush(); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		m.bytes += written
	}
	return nil
}

// int64ToDuration spaces log lines: a line per ~2 ms of log per byte
// offset, enough for increasing timestamps.
func int64ToDuration(offset int64) time.Duration {
	return time.Duration(offset) * 20 * time.Microsecond
}
