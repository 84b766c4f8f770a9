package server

import (
	"fmt"

	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
)

// encoded is a message whose protobuf bytes are ready: the pieces of a
// pre-encoded answer, sent without being marshaled again.
type encoded struct {
	pieces mem.BufferSlice
	size   int
}

func newEncoded(pieces [][]byte, size int) *encoded {
	bs := make(mem.BufferSlice, len(pieces))
	for i, p := range pieces {
		bs[i] = mem.SliceBuffer(p)
	}
	return &encoded{pieces: bs, size: size}
}

// codec is gRPC's protobuf codec that also sends encoded messages as they
// are. It is forced on the whole server, so the health and reflection
// services go through it too, to the protobuf codec.
type codec struct {
	proto encoding.CodecV2
}

func newCodec() (codec, error) {
	c := encoding.GetCodecV2(grpcproto.Name)
	if c == nil {
		return codec{}, fmt.Errorf("grpc codec %q is not registered", grpcproto.Name)
	}
	return codec{proto: c}, nil
}

func (c codec) Marshal(v any) (mem.BufferSlice, error) {
	if e, ok := v.(*encoded); ok {
		return e.pieces, nil
	}
	return c.proto.Marshal(v)
}

func (c codec) Unmarshal(data mem.BufferSlice, v any) error {
	return c.proto.Unmarshal(data, v)
}

func (c codec) Name() string { return grpcproto.Name }
