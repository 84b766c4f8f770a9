package clitree

import (
	"bytes"
	"slices"
	"testing"

	"github.com/spf13/cobra"
)

// TestWalk lists a small cobra program through its real help: commands,
// "Additional help topics", local and inherited flags, shorthands, types,
// a usage text of several lines, an example section; hidden commands and
// flags stay out.
func TestWalk(t *testing.T) {
	newRoot := func() *cobra.Command {
		root := &cobra.Command{Use: "prog", Run: func(*cobra.Command, []string) {}}
		root.PersistentFlags().Bool("use-http", false, "plain HTTP")
		root.Flags().Bool("debug", false, "debug")
		_ = root.Flags().MarkHidden("debug")
		run := &cobra.Command{
			Use:     "run FILE",
			Short:   "Run it",
			Long:    "Run it.\n\nExamples:\n  prog run --fake x\n\nFlags:\n  not a flag line",
			Example: "  prog run -o yaml f\n      --also-not-a-flag",
			Run:     func(*cobra.Command, []string) {},
		}
		run.Flags().StringP("output", "o", "json", "Output format\nsecond line of usage\n      --not-a-flag either")
		run.Flags().StringSlice("label", nil, "labels")
		run.Flags().Int("count", 0, "how many `N`")
		run.Flags().String("secret", "", "hidden")
		_ = run.Flags().MarkHidden("secret")
		group := &cobra.Command{Use: "group", Short: "A group"}
		group.AddCommand(&cobra.Command{Use: "leaf", Short: "A leaf", Run: func(*cobra.Command, []string) {}})
		topic := &cobra.Command{Use: "topic", Short: "A help topic"}
		hidden := &cobra.Command{Use: "hidden", Hidden: true, Run: func(*cobra.Command, []string) {}}
		root.AddCommand(run, group, topic, hidden)
		return root
	}
	got, err := Walk("prog", func(path []string) ([]byte, error) {
		root := newRoot()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(append(path, "--help"))
		err := root.Execute()
		return out.Bytes(), err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"prog",
		"prog --help",
		"prog --use-http",
		"prog -h --help",
		"prog completion",
	}
	// cobra's completion command: its shells and their flags.
	for _, l := range got {
		if len(l) > len("prog completion") && l[:len("prog completion")] == "prog completion" {
			want = append(want, l)
		}
	}
	want = append(want,
		"prog group",
		"prog group --help",
		"prog group --use-http",
		"prog group -h --help",
		"prog group leaf",
		"prog group leaf --help",
		"prog group leaf --use-http",
		"prog group leaf -h --help",
		"prog help",
		"prog help --help",
		"prog help --use-http",
		"prog help -h --help",
		"prog run",
		"prog run --count N",
		"prog run --help",
		"prog run --label strings",
		"prog run --output string",
		"prog run --use-http",
		"prog run -h --help",
		"prog run -o --output",
		// A help topic's help shows no flags.
		"prog topic",
	)
	slices.Sort(want)
	want = slices.Compact(want)
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	if !slices.Contains(got, "prog completion bash --no-descriptions") {
		t.Errorf("completion's flags missing: %q", got)
	}
}
