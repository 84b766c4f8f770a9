package cluster_test

import (
	"fmt"
	"os"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fastopm/fastopm/alpha/cluster"
	"github.com/fastopm/fastopm/pkg/bundle"
)

// The steps, effects and permissions of a real bundle
// (community-operators-prod's ack-ecrpublic-controller 1.4.1, in
// testdata/bundles) installed into openshift-operators, whose
// OperatorGroup targets all namespaces: docs/cluster.md's example.
func Example() {
	bd, _, err := bundle.RenderDir("../../testdata/bundles/ack-ecrpublic-controller-1.4.1", bundle.Options{})
	if err != nil {
		panic(err)
	}
	b, err := cluster.NewPlanBundle(bd, nil)
	if err != nil {
		panic(err)
	}
	src := cluster.CatalogRef{Name: "community-operators", Namespace: "openshift-marketplace"}
	steps, err := cluster.PlanSteps(b, "openshift-operators", src, "ack-ecrpublic-controller.v1.4.0")
	if err != nil {
		panic(err)
	}
	state := &cluster.State{OperatorGroups: []*operatorsv1.OperatorGroup{{
		ObjectMeta: metav1.ObjectMeta{Name: "global-operators", Namespace: "openshift-operators"},
		Status:     operatorsv1.OperatorGroupStatus{Namespaces: []string{""}},
	}}}
	for _, e := range state.Effects("openshift-operators", steps) {
		s := steps[e.Step].Resource
		fmt.Printf("%2d %-24s %-58s %-30s %s\n", e.Step, s.Kind, s.Name, s.Group+"/"+s.Version, e.Action)
	}
	fmt.Println()
	perms, err := cluster.Permissions(steps, state)
	if err != nil {
		panic(err)
	}
	if err := cluster.WritePermissionsText(os.Stdout, perms); err != nil {
		panic(err)
	}
	// Output:
	// 0 ClusterServiceVersion    ack-ecrpublic-controller.v1.4.1                            operators.coreos.com/v1alpha1  create
	//  1 CustomResourceDefinition repositories.ecrpublic.services.k8s.aws                    apiextensions.k8s.io/v1        unknown
	//  2 Role                     ack-ecrpublic-reader                                       rbac.authorization.k8s.io/v1   unknown
	//  3 Role                     ack-ecrpublic-writer                                       rbac.authorization.k8s.io/v1   unknown
	//  4 Service                  ack-ecrpublic-metrics-service                              /v1                            unknown
	//  5 ServiceAccount           ack-ecrpublic-controller                                   /v1                            unknown
	//  6 Role                     ack-ecrpublic-controller-4zH8y0h1SMKjnPqgOL4Ftghp42oeEdG3KCJHOb rbac.authorization.k8s.io/v1   unknown
	//  7 RoleBinding              ack-ecrpublic-controller-4zH8y0h1SMKjnPqgOL4Ftghp42oeEdG3KCJHOb rbac.authorization.k8s.io/v1   unknown
	//  8 ClusterRole              ack-ecrpublic-controller.-olsAeIGpgHstBoLIiTpy0i1nSSz85UQJ0bZs6 rbac.authorization.k8s.io/v1   unknown
	//  9 ClusterRoleBinding       ack-ecrpublic-controller.-olsAeIGpgHstBoLIiTpy0i1nSSz85UQJ0bZs6 rbac.authorization.k8s.io/v1   unknown
	//
	// ack-ecrpublic-controller.v1.4.1 (package ack-ecrpublic-controller 1.4.1) in namespace openshift-operators, replacing ack-ecrpublic-controller.v1.4.0
	//   service accounts: ack-ecrpublic-controller
	//   8 cluster-wide rules, 3 namespaced rules; OperatorGroup global-operators targets all namespaces (status.namespaces): OLM lifts the namespaced permissions to ClusterRoles and ClusterRoleBindings (plus get, list, watch on namespaces), counted here as cluster-wide
	//   findings:
	//   ! ServiceAccount ack-ecrpublic-controller (clusterPermissions) may get, list, patch, watch secrets cluster-wide
	//   cluster-wide rules:
	//     ack-ecrpublic-controller (clusterPermissions): apiGroups "" (core); resources configmaps,secrets; verbs get,list,patch,watch  [secrets]
	//     ack-ecrpublic-controller (clusterPermissions): apiGroups "" (core); resources namespaces; verbs get,list,watch
	//     ack-ecrpublic-controller (clusterPermissions): apiGroups ecrpublic.services.k8s.aws; resources repositories; verbs create,delete,get,list,patch,update,watch
	//     ack-ecrpublic-controller (clusterPermissions): apiGroups ecrpublic.services.k8s.aws; resources repositories/status; verbs get,patch,update
	//     ack-ecrpublic-controller (clusterPermissions): apiGroups services.k8s.aws; resources fieldexports,iamroleselectors; verbs create,delete,get,list,patch,update,watch
	//     ack-ecrpublic-controller (clusterPermissions): apiGroups services.k8s.aws; resources fieldexports/status,iamroleselectors/status; verbs get,patch,update
	//     ack-ecrpublic-controller (permissions): apiGroups coordination.k8s.io; resources leases; verbs get,list,watch,create,update,patch,delete
	//     ack-ecrpublic-controller (permissions): apiGroups "" (core); resources events; verbs create,patch
	//   namespaced rules:
	//     bundle Role ack-ecrpublic-reader: apiGroups ecrpublic.services.k8s.aws; resources repositories; verbs get,list,watch; bound to no one by the bundle
	//     bundle Role ack-ecrpublic-writer: apiGroups ecrpublic.services.k8s.aws; resources repositories; verbs create,delete,get,list,patch,update,watch; bound to no one by the bundle
	//     bundle Role ack-ecrpublic-writer: apiGroups ecrpublic.services.k8s.aws; resources repositories; verbs get,patch,update; bound to no one by the bundle
	//   CRDs:
	//     unknown repositories.ecrpublic.services.k8s.aws: unknown: the state holds no CustomResourceDefinition; OLM creates it, or updates it if it exists after its checks: existing custom resources must validate against the new schema (the state holds none: not checked), and no stored version (status.storedVersions) may be dropped
}
