package schema

import (
	"testing"
)

func TestCheckCases(t *testing.T) {
	c := sharedChecker(t)
	for _, tc := range checkCases {
		t.Run(tc.name, func(t *testing.T) {
			blob, _, err := canonical([]byte(tc.blob))
			if err != nil {
				t.Fatalf("bad test blob: %v", err)
			}
			got := c.Check(tc.schema, blob)
			if d := diffViolations(got, tc.want); d != "" {
				t.Errorf("Check(%q):\n%s", tc.schema, d)
			}
			checkAgainstReference(t, c, tc.name, tc.schema, blob)
		})
	}
}
