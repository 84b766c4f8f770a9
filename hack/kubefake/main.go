// Command kubefake runs a command against an in-process Kubernetes API
// server for ConfigMaps (internal/kubetest) and prints what the server
// stored. It records upstream opm's `alpha bundle extract` goldens:
//
//	go run ./hack/kubefake [-seed cm.json]... [-env K=V]... [-tls] [-token T] -- \
//	    /tmp/upstream/opm alpha bundle extract -k {kubeconfig} -m DIR/ -n ns -c name
//
// {kubeconfig} in the command and in -env values is replaced by the path of a kubeconfig for
// the server. KUBECONFIG is removed from the command's environment (opm
// prefers it to -k). The command's stdout and stderr pass through to
// kubefake's stderr, followed by a line "exit N" and, with -requests, one
// line per request received; stdout holds every stored ConfigMap, sorted
// by namespace/name, normalised (without uid, resourceVersion,
// creationTimestamp).
package main

import (
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/fastopm/fastopm/internal/kubetest"
)

type seeds []string

func (s *seeds) String() string     { return strings.Join(*s, ",") }
func (s *seeds) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	var (
		seed     seeds
		useTLS   = flag.Bool("tls", false, "serve HTTPS (the kubeconfig trusts the server's certificate)")
		token    = flag.String("token", "", "require this bearer token (and put it in the kubeconfig)")
		requests = flag.Bool("requests", false, "print each request's method, path and content types to stderr")
	)
	var env seeds
	flag.Var(&seed, "seed", "a ConfigMap (JSON file) stored before the command runs; repeatable")
	flag.Var(&env, "env", "K=V: an environment variable of the command ({kubeconfig} replaced); repeatable")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: kubefake [-seed FILE]... [-tls] [-token T] [-requests] -- COMMAND [ARG]...")
		os.Exit(2)
	}
	if err := run(seed, env, *useTLS, *token, *requests, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "kubefake:", err)
		os.Exit(1)
	}
}

func run(seed, env []string, useTLS bool, token string, showRequests bool, args []string) error {
	s := kubetest.New()
	s.Token = token
	for _, f := range seed {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if err := s.PutJSON(b); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	var srv *httptest.Server
	var ca []byte
	if useTLS {
		srv = httptest.NewTLSServer(s)
		ca = kubetest.CertPEM(srv)
	} else {
		srv = httptest.NewServer(s)
	}
	defer srv.Close()
	dir, err := os.MkdirTemp("", "kubefake")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, kubetest.Kubeconfig(srv.URL, ca, token), 0o600); err != nil {
		return err
	}
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "{kubeconfig}", kc)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "KUBECONFIG=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	for _, e := range env {
		cmd.Env = append(cmd.Env, strings.ReplaceAll(e, "{kubeconfig}", kc))
	}
	code := 0
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			return err
		}
		code = ee.ExitCode()
	}
	fmt.Fprintf(os.Stderr, "exit %d\n", code)
	if showRequests {
		for _, r := range s.Requests() {
			fmt.Fprintf(os.Stderr, "%s %s content-type=%q accept=%q user-agent=%q\n", r.Method, r.Path, r.ContentType, r.Accept, r.UserAgent)
		}
	}
	for _, k := range s.Keys() {
		ns, name, _ := strings.Cut(k, "/")
		os.Stdout.Write(s.Normalized(ns, name))
	}
	return nil
}
