package configmap

import (
	"fmt"
	"net"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
)

// ServiceAccountDir is where Kubernetes mounts a pod's service-account
// token and cluster CA (files "token" and "ca.crt").
const ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// ConfigOptions say where a client's configuration comes from.
type ConfigOptions struct {
	// Kubeconfig is the -k path; the KUBECONFIG environment variable,
	// when set, takes its place (as upstream does).
	Kubeconfig string
	// Getenv reads the environment (os.Getenv when nil).
	Getenv func(string) string
	// ServiceAccountDir holds the in-cluster token and CA
	// (ServiceAccountDir when empty).
	ServiceAccountDir string
	Log               Logger
}

// RESTConfig returns the configuration of the client, as upstream's
// NewKubeClient does: the kubeconfig file (KUBECONFIG, else Kubeconfig)
// through client-go's clientcmd when there is one, else the in-cluster
// configuration (InCluster). Errors read "Cannot load config for REST
// client: ...", upstream's wording.
func RESTConfig(o ConfigOptions) (*rest.Config, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	log := o.Log
	if log == nil {
		log = func(string, string, ...string) {}
	}
	kubeconfig := o.Kubeconfig
	if v := getenv(clientcmd.RecommendedConfigPathEnvVar); v != "" {
		kubeconfig = v
	}
	var cfg *rest.Config
	var err error
	if kubeconfig != "" {
		log("info", fmt.Sprintf("Loading kube client config from path %q", kubeconfig))
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	} else {
		log("info", "Using in-cluster kube client config")
		cfg, err = InCluster(getenv, o.ServiceAccountDir, log)
	}
	if err != nil {
		//lint:ignore ST1005 upstream's wording, which scripts may match
		return nil, fmt.Errorf("Cannot load config for REST client: %v", err)
	}
	return cfg, nil
}

// InCluster is client-go's rest.InClusterConfig with the service-account
// directory as a parameter (rest.InClusterConfig reads a fixed path, which
// tests cannot provide): the API server at https://$KUBERNETES_SERVICE_HOST:
// $KUBERNETES_SERVICE_PORT, the bearer token of dir/token (read again by
// client-go as it rotates), and dir/ca.crt as the only trusted CA when it
// holds certificates (otherwise an error is logged and the system's CAs are
// used, as rest.InClusterConfig does).
func InCluster(getenv func(string) string, dir string, log Logger) (*rest.Config, error) {
	if dir == "" {
		dir = ServiceAccountDir
	}
	host, port := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, rest.ErrNotInCluster
	}
	tokenFile, caFile := filepath.Join(dir, "token"), filepath.Join(dir, "ca.crt")
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		return nil, err
	}
	var tls rest.TLSClientConfig
	if _, err := certutil.NewPool(caFile); err != nil {
		log("error", fmt.Sprintf("Expected to load root CA config from %s, but got err: %v", caFile, err))
	} else {
		tls.CAFile = caFile
	}
	return &rest.Config{
		Host:            "https://" + net.JoinHostPort(host, port),
		TLSClientConfig: tls,
		BearerToken:     string(token),
		BearerTokenFile: tokenFile,
	}, nil
}
