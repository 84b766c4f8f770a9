package csv

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Release returns spec.release as upstream's bundle parser reads it: a
// string as it is, a number as an integer when it is whole ("%d") or
// else in "%g" form; "" when absent or null.
func (c *View) Release() (string, error) {
	raw := c.specField("release")
	if raw == nil {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err == nil {
		if f == float64(int64(f)) {
			return fmt.Sprintf("%d", int64(f)), nil
		}
		return fmt.Sprintf("%g", f), nil
	}
	return "", errors.New("release field must be a string or number")
}
