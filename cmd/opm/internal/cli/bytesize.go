package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fastopm/fastopm/alpha/declcfg"
)

// byteSize is a size flag: a number of bytes with an optional unit, k, M,
// G or T (powers of 1000) or Ki, Mi, Gi or Ti (powers of 1024), with or
// without a trailing B: "1GiB", "500M", "1048576". 0 means no limit.
type byteSize int64

func (b *byteSize) String() string { return formatSize(int64(*b)) }

func (b *byteSize) Type() string { return "size" }

func (b *byteSize) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	*b = byteSize(n)
	return nil
}

// limit is the size as a declcfg.WithMaxFileSize argument: -1 when 0 (no
// limit).
func (b byteSize) limit() int64 {
	if b == 0 {
		return -1
	}
	return int64(b)
}

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40},
	{"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12},
}

func parseSize(s string) (int64, error) {
	t := strings.TrimSuffix(strings.TrimSpace(s), "B")
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSuffix(t, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || n < 0 || (n > 0 && mult > 1 && n > (1<<62)/mult) {
		return 0, fmt.Errorf("invalid size %q: want a number of bytes with an optional unit (k, M, G, Ki, Mi, Gi), such as 1GiB or 500M; 0 for no limit", s)
	}
	return n * mult, nil
}

func formatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.mult && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// defaultMaxFileSize is the flag's default: the loader's.
const defaultMaxFileSize = byteSize(declcfg.DefaultMaxFileSize)
