package main

import (
	"fmt"
	"log"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

var benchLine = regexp.MustCompile(`^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

func matcherSection(c config) {
	benchtime := "3000x"
	if c.quick {
		benchtime = "300x"
	}
	// Building an index of 100,000 categories takes seconds: Build runs
	// a fixed two times, Match benchtime times.
	var out []byte
	for _, b := range [][2]string{{"Match", benchtime}, {"Build", "2x"}} {
		args := []string{"test", "-C", "..", "./internal/matcher", "-run", "^$", "-timeout", "60m", "-bench", "^Benchmark" + b[0] + "$", "-benchtime", b[1], "-count", strconv.Itoa(c.rounds)}
		o, err := exec.Command("go", args...).CombinedOutput()
		if err != nil {
			log.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, o)
		}
		out = append(out, o...)
	}
	type metrics map[string][]float64
	byName := map[string]metrics{}
	var order []string
	for line := range strings.Lines(string(out)) {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		if byName[m[1]] == nil {
			byName[m[1]] = metrics{}
			order = append(order, m[1])
		}
		f := strings.Fields(m[2])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err == nil {
				byName[m[1]][f[i+1]] = append(byName[m[1]][f[i+1]], v)
			}
		}
	}
	med := func(vs []float64) float64 {
		if len(vs) == 0 {
			return 0
		}
		vs = slices.Clone(vs)
		slices.Sort(vs)
		return vs[len(vs)/2]
	}
	fmt.Fprintf(w, "### Matching (`go test ./internal/matcher -run '^$' -bench '^BenchmarkMatch$' -benchtime %s -count %d`; Build with -benchtime 2x; medians)\n\n", benchtime, c.rounds)
	fmt.Fprintln(w, "| registry | mean | p50 | p99 | allocs/match |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- |")
	for _, name := range order {
		if rest, ok := strings.CutPrefix(name, "Match/"); ok {
			m := byName[name]
			fmt.Fprintf(w, "| %s | %s | %s | %s | %.0f |\n", rest, dur(med(m["ns/op"])), dur(med(m["p50-ns"])), dur(med(m["p99-ns"])), med(m["allocs/op"]))
		}
	}
	fmt.Fprintln(w, "\n| index build | time | heap kept per category | terms |")
	fmt.Fprintln(w, "| --- | --- | --- | --- |")
	for _, name := range order {
		if rest, ok := strings.CutPrefix(name, "Build/"); ok {
			m := byName[name]
			fmt.Fprintf(w, "| %s categories | %s | %.0f B | %s |\n", rest, dur(med(m["ns/op"])), med(m["B/category"]), thousands(med(m["terms"])))
		}
	}
	fmt.Fprintln(w)
}
