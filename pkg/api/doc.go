// Package api holds the Go types, client and server interfaces of the
// Registry gRPC API served by every OLM catalog image: services
// api.Registry and api.ExperimentalRegistry, wire-compatible with
// operator-framework/operator-registry's pkg/api.
//
// The contract lives in proto/registry.proto; registry.pb.go and
// registry_grpc.pb.go are generated from it by hack/generate.sh and must
// not be edited by hand. The package name, method paths
// (/api.Registry/<Method>), message names, field names and field numbers
// are part of the wire format that OLM, the package server and grpcurl
// scripts depend on; contract_test.go pins them independently of the
// .proto text.
package api
