//go:build !unix

package cli

// execFull runs the program p with args as a child with s's streams
// (execChild): there is no exec here.
func execFull(s Streams, p string, args []string, env []string) (int, error) {
	return execChild(s, p, args, env)
}
