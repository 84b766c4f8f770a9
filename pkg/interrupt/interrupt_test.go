package interrupt

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The process under test is this test binary, run again with
// INTERRUPT_TEST_CHILD naming what it does (see TestMain): it prints
// "ready" once Notify is set up, and the test then signals it.

func TestMain(m *testing.M) {
	if what := os.Getenv("INTERRUPT_TEST_CHILD"); what != "" {
		child(what)
		return
	}
	os.Exit(m.Run())
}

// child is the signalled process.
func child(what string) {
	if what == "cooperative" {
		grace = time.Hour
	}
	ctx, stop := Notify(context.Background(), os.Stderr)
	defer stop()
	dir := os.Getenv("INTERRUPT_TEST_DIR")
	switch what {
	case "stuck":
		// Work that never looks at its context, with a temporary
		// directory that only the clean-up removes.
		tmp := filepath.Join(dir, "tmp")
		_ = os.Mkdir(tmp, 0o755)
		OnExit(func() { _ = os.RemoveAll(tmp) })
		kept := filepath.Join(dir, "kept")
		_ = os.Mkdir(kept, 0o755)
		OnExit(func() { _ = os.RemoveAll(kept) })() // unregistered at once
		os.Stdout.WriteString("ready\n")
		select {}
	case "critical":
		// A critical section in progress when the grace ends: the exit
		// waits for it.
		done := Critical()
		os.Stdout.WriteString("ready\n")
		<-ctx.Done()
		time.Sleep(2 * Grace) // past the grace: the exit is waiting
		_ = os.WriteFile(filepath.Join(dir, "committed"), nil, 0o644)
		done()
		select {}
	case "cooperative":
		// However slow the machine, the command returns before the exit
		// (grace set above).
		os.Stdout.WriteString("ready\n")
		<-ctx.Done()
		sig := Cause(ctx)
		if sig == nil {
			os.Exit(3)
		}
		stop()
		os.Stderr.WriteString("returned: " + sig.Error() + "\n")
		os.Exit(sig.ExitCode())
	}
}

// run starts the child, waits for "ready", sends sig (twice when twice)
// and returns its exit code and stderr.
func run(t *testing.T, what string, dir string, sig syscall.Signal, twice bool) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "INTERRUPT_TEST_CHILD="+what, "INTERRUPT_TEST_DIR="+dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		cmd.Process.Kill()
		t.Fatalf("child: %q, %v; stderr: %s", line, err, stderr.String())
	}
	for range map[bool]int{false: 1, true: 2}[twice] {
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
	}
	// A hang guard only: the child exits within its grace.
	timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()
	err = cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

func TestStuckCommandExits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sig   syscall.Signal
		twice bool
		code  int
		name  string
	}{
		{syscall.SIGTERM, false, 143, "SIGTERM"},
		{syscall.SIGINT, false, 130, "SIGINT"},
		{syscall.SIGINT, true, 130, "SIGINT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			code, stderr := run(t, "stuck", dir, tc.sig, tc.twice)
			if code != tc.code {
				t.Errorf("exit code %d, want %d; stderr: %s", code, tc.code, stderr)
			}
			if want := "Error: interrupted by " + tc.name + "\n"; stderr != want {
				t.Errorf("stderr %q, want %q", stderr, want)
			}
			if _, err := os.Stat(filepath.Join(dir, "tmp")); !os.IsNotExist(err) {
				t.Errorf("the registered temporary directory is still there (%v)", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "kept")); err != nil {
				t.Errorf("an unregistered clean-up ran: %v", err)
			}
		})
	}
}

func TestExitWaitsForCriticalSection(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, stderr := run(t, "critical", dir, syscall.SIGTERM, false)
	if code != 143 {
		t.Errorf("exit code %d, want 143; stderr: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "committed")); err != nil {
		t.Errorf("the process exited inside a critical section: %v", err)
	}
}

func TestCooperativeCommandSeesCause(t *testing.T) {
	t.Parallel()
	code, stderr := run(t, "cooperative", t.TempDir(), syscall.SIGTERM, false)
	if code != 143 || stderr != "returned: interrupted by SIGTERM\n" {
		t.Errorf("exit code %d, stderr %q; want 143 and the command's own return", code, stderr)
	}
}

func TestCauseWithoutSignal(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if Cause(ctx) != nil {
		t.Error("a context cancelled without a signal has a signal cause")
	}
}
