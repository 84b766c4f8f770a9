//go:build unix

package cli

import (
	"os"
	"syscall"
)

// execFull runs the program p with args: when s are the process's own
// streams, the process becomes p (execve), and execFull returns only on
// failure; else p runs as a child with s (execChild).
func execFull(s Streams, p string, args []string, env []string) (int, error) {
	if s.In != os.Stdin || s.Out != os.Stdout || s.Err != os.Stderr {
		return execChild(s, p, args, env)
	}
	return 0, syscall.Exec(p, append([]string{p}, args...), env)
}
