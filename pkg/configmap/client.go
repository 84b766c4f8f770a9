package configmap

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// ConfigMaps is the part of client-go's typed CoreV1 ConfigMapInterface
// that Write uses; client-go's typed client satisfies it, and so does
// Client.
type ConfigMaps interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.ConfigMap, error)
	Create(ctx context.Context, cm *corev1.ConfigMap, opts metav1.CreateOptions) (*corev1.ConfigMap, error)
	Update(ctx context.Context, cm *corev1.ConfigMap, opts metav1.UpdateOptions) (*corev1.ConfigMap, error)
}

// Client returns the ConfigMaps of namespace through client-go's REST
// client, with a scheme of the core/v1 types only.
//
// Why not client-go's generated typed client (kubernetes/typed/core/v1):
// it registers every built-in API group in its scheme
// (k8s.io/client-go/kubernetes/scheme), which doubles opm's binary (34 MB
// → 68 MB, see docs/bundle-extract.md). This client makes the same
// requests as the typed one (same paths and query parameters, protobuf
// bodies, Accept "application/vnd.kubernetes.protobuf,application/json",
// the same errors), for about a third of that cost.
func Client(cfg *rest.Config, namespace string) (ConfigMaps, error) {
	cfg = rest.CopyConfig(cfg)
	gv := corev1.SchemeGroupVersion
	cfg.GroupVersion = &gv
	cfg.APIPath = "/api"
	cfg.NegotiatedSerializer = codecs.WithoutConversion()
	if cfg.ContentType == "" {
		// What the typed client asks for built-in types.
		cfg.ContentType = runtime.ContentTypeProtobuf
		cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &configMaps{rc: rc, ns: namespace}, nil
}

var (
	scheme         = runtime.NewScheme()
	codecs         = serializer.NewCodecFactory(scheme)
	parameterCodec = runtime.NewParameterCodec(scheme)
)

func init() {
	if err := corev1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	metav1.AddToGroupVersion(scheme, corev1.SchemeGroupVersion)
}

type configMaps struct {
	rc *rest.RESTClient
	ns string
}

func (c *configMaps) Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.ConfigMap, error) {
	out := &corev1.ConfigMap{}
	err := c.rc.Get().Namespace(c.ns).Resource("configmaps").Name(name).
		VersionedParams(&opts, parameterCodec).Do(ctx).Into(out)
	return out, err
}

func (c *configMaps) Create(ctx context.Context, cm *corev1.ConfigMap, opts metav1.CreateOptions) (*corev1.ConfigMap, error) {
	out := &corev1.ConfigMap{}
	err := c.rc.Post().Namespace(c.ns).Resource("configmaps").
		VersionedParams(&opts, parameterCodec).Body(cm).Do(ctx).Into(out)
	return out, err
}

func (c *configMaps) Update(ctx context.Context, cm *corev1.ConfigMap, opts metav1.UpdateOptions) (*corev1.ConfigMap, error) {
	out := &corev1.ConfigMap{}
	err := c.rc.Put().Namespace(c.ns).Resource("configmaps").Name(cm.Name).
		VersionedParams(&opts, parameterCodec).Body(cm).Do(ctx).Into(out)
	return out, err
}
