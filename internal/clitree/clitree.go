// Package clitree lists the commands and flags of a cobra program as its
// help shows them, so that two programs (upstream opm, recorded once, and
// ours) can be compared without linking either: it asks the help of the
// root command, follows every command listed under "Available Commands"
// and "Additional help topics", and reads each command's "Flags" and
// "Global Flags" sections. Hidden commands and flags are not listed, as
// help does not show them.
//
// Each item is one line, the command's path first:
//
//	opm alpha convert-template substitutes                 a command
//	opm alpha convert-template substitutes --output string a flag it accepts, with the type help shows
//	opm alpha convert-template substitutes -o --output     a shorthand and the flag it stands for
//
// A flag inherited from a parent is listed under every command that
// accepts it. The same program gives the same lines, sorted.
package clitree

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Help returns the help a program prints for the command at path (the
// root when path is empty), as `PROGRAM PATH... --help` does.
type Help func(path []string) ([]byte, error)

// Walk lists the commands and flags of the program named root (the first
// word of every line) through help, sorted. It fails when a help cannot
// be had or shows a command twice.
func Walk(root string, help Help) ([]string, error) {
	var lines []string
	seen := map[string]bool{}
	var walk func(path []string) error
	walk = func(path []string) error {
		name := strings.Join(append([]string{root}, path...), " ")
		if seen[name] {
			return fmt.Errorf("%s: listed twice", name)
		}
		seen[name] = true
		out, err := help(path)
		if err != nil {
			return fmt.Errorf("%s --help: %w", name, err)
		}
		subs, flags := Parse(name, out)
		lines = append(lines, name)
		for _, f := range flags {
			lines = append(lines, name+" "+f)
		}
		for _, s := range subs {
			if err := walk(append(slices.Clone(path), s)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(nil); err != nil {
		return nil, err
	}
	slices.Sort(lines)
	return lines, nil
}

var (
	// A section's title: "Flags:", "Global Flags:", "Available Commands:".
	sectionRE = regexp.MustCompile(`^[A-Z][A-Za-z ]*:$`)
	// A command of a command list: two spaces, its name, spaces.
	commandRE = regexp.MustCompile(`^  ([^\s-]\S*)(?:\s|$)`)
	// A flag line as pflag prints it: "  -o, --output string   usage" or
	// "      --use-http   usage" (usage text that runs over several lines
	// goes on indented further, and does not match).
	flagRE = regexp.MustCompile(`^(?:  -(\S), |      )--([^\s\[=]+)(?: (\S+))?(?:  |$)`)
)

// Parse reads the help text of the command called name (its path, "opm
// alpha"): the subcommands it lists and its flags as lines (without the
// command's path; see the package documentation).
func Parse(name string, help []byte) (subcommands, flags []string) {
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(help))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " ")
		if sectionRE.MatchString(line) {
			section = strings.TrimSuffix(line, ":")
			continue
		}
		switch section {
		case "Available Commands":
			if m := commandRE.FindStringSubmatch(line); m != nil {
				subcommands = append(subcommands, m[1])
			}
		case "Additional help topics":
			// These lines show the whole path: "  opm alpha topic   Short".
			if rest, ok := strings.CutPrefix(line, "  "+name+" "); ok {
				if m := commandRE.FindStringSubmatch("  " + rest); m != nil {
					subcommands = append(subcommands, m[1])
				}
			}
		case "Flags", "Global Flags":
			m := flagRE.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			long := "--" + m[2]
			if m[3] != "" {
				long += " " + m[3]
			}
			flags = append(flags, long)
			if m[1] != "" {
				flags = append(flags, "-"+m[1]+" --"+m[2])
			}
		}
	}
	return subcommands, flags
}
