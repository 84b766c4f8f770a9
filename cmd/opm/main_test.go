package main

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// The test binary is opm itself when OPM_TEST_MAIN is set: the tests run
// the real main, signals and exit codes included, without building a
// second binary.
func TestMain(m *testing.M) {
	if os.Getenv("OPM_TEST_MAIN") != "" {
		os.Args = append([]string{"opm"}, os.Args[2:]...) // drop -test.run
		main()
		return
	}
	code := m.Run()
	if leanBuilt.dir != "" {
		os.RemoveAll(leanBuilt.dir)
	}
	os.Exit(code)
}

// TestSignalStopsBlockedCommand: a command blocked where no context is
// looked at (render-template reading a template from a pipe that never
// ends) still stops on SIGTERM and SIGINT, with the shell's exit code for
// the signal and one line saying why.
func TestSignalStopsBlockedCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
		name string
	}{{syscall.SIGTERM, 143, "SIGTERM"}, {syscall.SIGINT, 130, "SIGINT"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^$", "alpha", "render-template", "basic")
			cmd.Env = append(os.Environ(), "OPM_TEST_MAIN=1")
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			defer w.Close()
			cmd.Stdin = r
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Readiness: opm reads the template only after it has set up
			// its signal handling, so once the pipe holds no unread byte,
			// the signal reaches the handler.
			if _, err := w.Write([]byte("schema: olm.template.basic\n")); err != nil {
				t.Fatal(err)
			}
			waitDrained(t, r)
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() }) // hang guard
			defer timer.Stop()
			err = cmd.Wait()
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) {
				t.Fatal(err)
			}
			if code := cmd.ProcessState.ExitCode(); code != tc.code {
				t.Errorf("exit code %d, want %d; stderr: %s", code, tc.code, stderr.String())
			}
			if want := "Error: interrupted by " + tc.name + "\n"; stderr.String() != want {
				t.Errorf("stderr %q, want %q", stderr.String(), want)
			}
		})
	}
}

// waitDrained waits until nobody has bytes left to read in the pipe r.
func waitDrained(t *testing.T, r *os.File) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute) // hang guard
	for time.Now().Before(deadline) {
		var n int32
		if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, r.Fd(), syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))); errno != 0 {
			t.Fatalf("FIONREAD: %v", errno)
		}
		if n == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("opm never read its standard input")
}
