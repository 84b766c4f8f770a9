// Command grpc_health_probe checks the health of a gRPC server through the
// standard gRPC Health Checking Protocol (grpc.health.v1.Health/Check).
// Catalog images ship it as /bin/grpc_health_probe for exec probes such as
//
//	grpc_health_probe -addr=:50051 -rpc-timeout=5s
//
// It is a drop-in replacement for grpc-ecosystem/grpc-health-probe: same
// flags, same messages on stderr and same exit codes:
//
//	0   the service is SERVING
//	1   invalid arguments (including unreadable TLS files)
//	2   connection failed or timed out (-connect-timeout)
//	3   the health RPC failed or timed out (-rpc-timeout)
//	4   the RPC succeeded but the status is not SERVING
//	20  -spiffe was given; SPIFFE is not supported by this build
//
// Run it with -h for the flags.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
