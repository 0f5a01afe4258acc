package cli

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// openPty opens a pseudo-terminal: its controlling side and the terminal
// a program reads, as a person's shell gives it.
func openPty(t *testing.T) (ctl, term *os.File) {
	t.Helper()
	ctl, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	var n, unlock uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ctl.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		ctl.Close()
		t.Skipf("unlocking the pseudo-terminal: %v", e)
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ctl.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		ctl.Close()
		t.Skipf("naming the pseudo-terminal: %v", e)
	}
	term, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		ctl.Close()
		t.Skipf("opening the pseudo-terminal: %v", err)
	}
	return ctl, term
}

// `3gs` typed at a terminal waited without a word: serve on stdio now
// says once, on stderr, that it speaks MCP on stdin and how to try it by
// hand; stdout, the protocol's, stays empty. A pipe (an MCP host) or
// /dev/null gets no hint.
func TestServeOnATerminalSaysHowToTryIt(t *testing.T) {
	ctl, term := openPty(t)
	defer ctl.Close()
	defer term.Close()
	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Run(context.Background(), nil, &Env{Stdin: term, Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }})
	}()
	// Ctrl-D at the start of a line: the end of input.
	ctl.Write([]byte{4})
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		ctl.Close() // a read blocked on the terminal ends with an error
		<-done
	}
	if got := errOut.String(); !strings.Contains(got, "speaks MCP") || !strings.Contains(got, `3gs query "`) || !strings.Contains(got, "3gs help") || strings.Count(got, "speaks MCP") != 1 {
		t.Errorf("stderr lacks the one hint:\n%s", got)
	}
	if out.Len() != 0 {
		t.Errorf("stdout is the protocol's, but has %q", out.String())
	}

	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	var errNull bytes.Buffer
	Run(context.Background(), nil, &Env{Stdin: null, Stdout: &bytes.Buffer{}, Stderr: &errNull, Getenv: func(string) string { return "" }})
	if strings.Contains(errNull.String(), "speaks MCP") {
		t.Errorf("a hint with stdin at /dev/null:\n%s", errNull.String())
	}
}
