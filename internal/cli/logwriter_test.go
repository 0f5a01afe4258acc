package cli

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestLogWriterKeepsEveryLine writes lines from many goroutines, some
// larger than what may wait, and checks that Close leaves every line
// written whole, each goroutine's in its order.
func TestLogWriterKeepsEveryLine(t *testing.T) {
	var out bytes.Buffer
	lw := newLogWriter(&out)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				pad := ""
				if i%100 == 0 {
					pad = strings.Repeat("x", maxPendingLog/3)
				}
				fmt.Fprintf(lw, "g%d %d %s\n", g, i, pad)
			}
		}()
	}
	wg.Wait()
	lw.Close()
	fmt.Fprintf(lw, "after close\n")
	next := map[string]int{}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 8*500+1 || lines[len(lines)-1] != "after close" {
		t.Fatalf("%d lines, last %.40q; want %d ending with the write after Close", len(lines), lines[len(lines)-1], 8*500+1)
	}
	for _, l := range lines[:len(lines)-1] {
		var g string
		var i int
		if _, err := fmt.Sscanf(l, "%s %d", &g, &i); err != nil || i != next[g] {
			t.Fatalf("line %.40q out of order or torn (want %s %d)", l, g, next[g])
		}
		next[g]++
	}
}
