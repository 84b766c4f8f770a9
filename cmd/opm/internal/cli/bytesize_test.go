package cli

import "testing"

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "1048576": 1 << 20, "1GiB": 1 << 30, "1Gi": 1 << 30, "512MiB": 512 << 20,
		"500M": 500e6, "2G": 2e9, "10k": 10e3, "10K": 10e3, "3KiB": 3 << 10, " 7 B": 7, "1TiB": 1 << 40,
	} {
		got, err := parseSize(in)
		if err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "x", "-1", "1.5G", "1Q", "GiB", "99999999999Ti"} {
		if n, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, n)
		}
	}
	for n, want := range map[int64]string{1 << 30: "1GiB", 500e6: "500000000", 3 << 10: "3KiB", 7: "7"} {
		if got := formatSize(n); got != want {
			t.Errorf("formatSize(%d) = %q, want %q", n, got, want)
		}
	}
	if byteSize(0).limit() != -1 || byteSize(5).limit() != 5 {
		t.Error("0 must mean no limit")
	}
}
