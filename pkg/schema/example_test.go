package schema_test

import (
	"fmt"

	"github.com/fastopm/fastopm/pkg/schema"
)

func Example() {
	c, err := schema.New()
	if err != nil {
		panic(err)
	}
	// Blobs are canonical JSON: compact, keys sorted.
	blob := []byte(`{"defaultChannel":"stable","icon":{"base64data":"","type":"image/png"},"name":"etcd","schema":"olm.package"}`)
	for _, v := range c.Check("olm.package", blob) {
		fmt.Println(v)
	}
	blob = []byte(`{"image":"quay.io/etcd/bundle:v1","name":"etcd.v1","package":"etcd","properties":[{"type":"olm.package","value":{"packageName":"etcd","version":""}}],"schema":"olm.bundle"}`)
	for _, v := range c.Check("olm.bundle", blob) {
		fmt.Println(v)
	}
	// Output:
	// icon.mediatype: incomplete value string
	// icon.type: field not allowed
	// properties[0].value.version: invalid value "" (out of bound !="")
}
