package bundle

import "strings"

// supportedKinds are the object kinds OLM installs from a registry+v1
// bundle: the ClusterServiceVersion, CustomResourceDefinitions and the
// optional kinds listed in the registry+v1 bundle format documentation
// (OpenShift "Operator Framework packaging format", section 2.2.1.1).
// Upstream opm render accepts any kind; Render keeps the others too and
// reports them as warnings.
var supportedKinds = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range []string{
		kindCSV,
		kindCRD,
		"ClusterRole",
		"ClusterRoleBinding",
		"ConfigMap",
		"ConsoleCLIDownload",
		"ConsoleLink",
		"ConsoleQuickStart",
		"ConsoleYAMLSample",
		"PodDisruptionBudget",
		"PriorityClass",
		"PrometheusRule",
		"Role",
		"RoleBinding",
		"Secret",
		"Service",
		"ServiceAccount",
		"ServiceMonitor",
		"VerticalPodAutoscaler",
	} {
		m[strings.ToLower(k)] = true
	}
	return m
}()

// supportedKind reports whether OLM installs objects of this kind from a
// bundle. The documentation spells some kinds loosely (ConsoleYamlSample),
// so the comparison ignores case.
func supportedKind(kind string) bool {
	return supportedKinds[strings.ToLower(kind)]
}
