package cluster_test

import (
	"context"
	"fmt"

	"github.com/fastopm/fastopm/alpha/cluster"
	"sigs.k8s.io/yaml"
)

// ODLM's own samples (config/samples at 97a954d3, with a namespace): an
// OperandRegistry of two entries and an OperandRequest for both, against
// a community catalog that offers jaeger's channel but not
// mongodb-atlas-kubernetes's.
func ExampleODLM_Subscriptions() {
	o, err := cluster.ReadODLM(context.Background(),
		"testdata/odlm/odlm-sample-operandregistry.yaml", "testdata/odlm/odlm-sample-operandrequest.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	cat := &cluster.PackageManifests{GlobalNamespace: "openshift-marketplace", Catalogs: []cluster.CatalogPackages{{
		Namespace: "openshift-marketplace", Name: "community-operators",
		Packages: map[string][]string{"jaeger": {"stable"}, "mongodb-atlas-kubernetes": {"beta"}},
	}}}
	a := o.Subscriptions(cat, nil)
	for _, oc := range a.Outcomes {
		fmt.Printf("%s: %s %s (%s)\n", oc.Operand, oc.Action, oc.Subscription, oc.Catalog)
		if oc.Problem != "" {
			fmt.Printf("  %s: %s\n", oc.Phase, oc.Problem)
		}
	}
	for _, og := range a.OperatorGroups {
		fmt.Printf("OperatorGroup %s/%s targets %v\n", og.Namespace, og.Name, og.Spec.TargetNamespaces)
	}
	y, _ := yaml.Marshal(a.Subscriptions[0])
	fmt.Print(string(y))
	// Output:
	// jaeger: create openshift-operators/jaeger (the registry's catalog openshift-marketplace/community-operators, channel stable)
	// mongodb-atlas-kubernetes: none  (the registry's catalog openshift-marketplace/community-operators has neither channel "stable" of mongodb-atlas-kubernetes nor a fallback channel (none given): no catalog)
	//   Failed: failed to find catalogsource for subscription default/mongodb-atlas-kubernetes
	// OperatorGroup default/operand-deployment-lifecycle-manager-operatorgroup targets [default]
	// apiVersion: operators.coreos.com/v1alpha1
	// kind: Subscription
	// metadata:
	//   annotations:
	//     default.example-service.jaeger/operatorNamespace: openshift-operators
	//     default.example-service.jaeger/request: stable
	//     default.example-service/config: "true"
	//     default.example-service/registry: "true"
	//   labels:
	//     operator.ibm.com/opreq-control: "true"
	//   name: jaeger
	//   namespace: openshift-operators
	// spec:
	//   channel: stable
	//   installPlanApproval: Automatic
	//   name: jaeger
	//   source: community-operators
	//   sourceNamespace: openshift-marketplace
	// status:
	//   lastUpdated: null
}
