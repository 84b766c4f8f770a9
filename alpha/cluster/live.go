package cluster

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// LivePageSize is the number of objects ReadCluster asks for in each
// LIST request (limit; the rest through continue), as kubectl asks for
// 500: a page of CSVs, with their icons and examples, is the most it
// holds at once.
var LivePageSize int64 = 100

// liveResource is a kind ReadCluster lists.
type liveResource struct {
	gvr  schema.GroupVersionResource
	kind string
}

// liveResources are the kinds read, in the versions OLM v0.46.0 and
// Kubernetes serve and store them (OperatorGroups: v1; v1alpha2 has the
// same fields).
var liveResources = []liveResource{
	{schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, KindNamespace},
	{schema.GroupVersionResource{Group: operatorsGroup, Version: "v1alpha1", Resource: "catalogsources"}, KindCatalogSource},
	{schema.GroupVersionResource{Group: operatorsGroup, Version: "v1alpha1", Resource: "subscriptions"}, KindSubscription},
	{schema.GroupVersionResource{Group: operatorsGroup, Version: "v1alpha1", Resource: "clusterserviceversions"}, KindCSV},
	{schema.GroupVersionResource{Group: operatorsGroup, Version: "v1", Resource: "operatorgroups"}, KindOperatorGroup},
	{schema.GroupVersionResource{Group: operatorsGroup, Version: "v1alpha1", Resource: "installplans"}, KindInstallPlan},
	{schema.GroupVersionResource{Group: apiextensionsGroup, Version: "v1", Resource: "customresourcedefinitions"}, KindCRD},
}

// ReadCluster reads the kinds Read reads from a live cluster, through
// client-go's dynamic client: each kind listed across all namespaces, in
// pages of LivePageSize objects, every object going through what Read
// does with an object of a file (the same decoding, the same checks, the
// same fields kept, copied CSVs skipped and counted). An object's origin
// is "cluster: RESOURCE" (subscriptions.operators.coreos.com, …).
//
// Each kind is one consistent list (its pages share the first page's
// resourceVersion); different kinds are listed one after the other, as
// `oc adm inspect` and `kubectl get` do. A kind the cluster does not
// serve (404: OLM is not installed), a list the user may not make (403:
// the permission missing is named) or any other failure is an error.
func ReadCluster(ctx context.Context, cfg *rest.Config) (*State, error) {
	if cfg == nil {
		return nil, errors.New("state: cluster: no client configuration")
	}
	c := rest.CopyConfig(cfg)
	if c.QPS == 0 && c.Burst == 0 {
		// client-go's default, 5 requests a second, would pace the pages
		// of a large cluster for nothing: these are a few reads.
		c.QPS, c.Burst = 50, 100
	}
	dc, err := dynamic.NewForConfig(c)
	if err != nil {
		return nil, fmt.Errorf("state: cluster %s: %w", cfg.Host, err)
	}
	r := &reader{s: &State{Skipped: map[string]int{}, origin: map[ObjectKey]string{}, Cluster: cfg.Host}}
	for _, res := range liveResources {
		if err := r.list(ctx, dc, res); err != nil {
			return nil, err
		}
	}
	r.s.sort()
	return r.s, nil
}

// list reads every object of one kind, page by page.
func (r *reader) list(ctx context.Context, dc dynamic.Interface, res liveResource) error {
	where := "cluster: " + resourceName(res.gvr)
	cont := ""
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		l, err := dc.Resource(res.gvr).List(ctx, metav1.ListOptions{Limit: LivePageSize, Continue: cont})
		if err != nil {
			return liveError(ctx, res, r.s.Cluster, err)
		}
		for i := range l.Items {
			js, err := l.Items[i].MarshalJSON()
			if err != nil {
				return fmt.Errorf("state: %s: %s %s: %v", where, res.kind, l.Items[i].GetName(), err)
			}
			l.Items[i] = unstructured.Unstructured{} // let the page go as it is read
			if err := r.document(ctx, where, js); err != nil {
				return err
			}
		}
		if cont = l.GetContinue(); cont == "" {
			return nil
		}
	}
}

// resourceName is RESOURCE.GROUP, as kubectl and RBAC errors name it
// (RESOURCE alone for the core group).
func resourceName(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return gvr.Resource
	}
	return gvr.Resource + "." + gvr.Group
}

// liveError says why a list failed, in words that say what to do.
func liveError(ctx context.Context, res liveResource, host string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	name := resourceName(res.gvr)
	gv := res.gvr.GroupVersion().String()
	switch {
	case apierrors.IsNotFound(err):
		if res.gvr.Group == operatorsGroup {
			return fmt.Errorf("state: cluster %s does not serve %s (%s): OLM (v0) is not installed there, or not a version serving %s (404: %v)", host, name, gv, gv, err)
		}
		return fmt.Errorf("state: cluster %s does not serve %s (%s) (404: %v)", host, name, gv, err)
	case apierrors.IsForbidden(err):
		group := res.gvr.Group
		if group == "" {
			group = `"" (core)`
		}
		return fmt.Errorf("state: cluster %s: the user may not list %s across all namespaces: it needs the permission to list %s of API group %s at the cluster scope "+
			"(a ClusterRole with apiGroups [%q], resources [%q], verbs [list], bound to it by a ClusterRoleBinding) (403: %v)",
			host, name, res.gvr.Resource, group, res.gvr.Group, res.gvr.Resource, err)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("state: cluster %s refused the credentials of the kubeconfig while listing %s (401: %v)", host, name, err)
	case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
		return fmt.Errorf("state: cluster %s: the list of %s changed faster than it could be read (its continue token expired, 410): read it again (%v)", host, name, err)
	}
	return fmt.Errorf("state: cluster %s: listing %s: %w", host, name, err)
}
