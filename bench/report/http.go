package main

import (
	"fmt"
	"log"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

func httpSection(c config) {
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		httpEra(c, era)
	}
}

func httpEra(c config, era string) {
	args := []string{"run", "./httpload", "-era", era, "-rounds", strconv.Itoa(c.rounds), "-duration", c.httpDuration.String(), "-warmup", c.httpWarm.String()}
	if c.mix == nil && c.registry != "" {
		args = append(args, "-registry", c.registry) // otherwise httpload asks the mix
	}
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		log.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	how := "2025-11-25 sessions"
	if era == "2026-07-28" {
		how = "2026-07-28 stateless requests (go-sdk with `Stateless`)"
	}
	what := "the benchmark mix"
	if c.mix == nil {
		what = registryName(c.registry)
	}
	fmt.Fprintf(w, "### HTTP: 64 keep-alive clients calling `get_sources` on %s, %s (`go run ./httpload -era %s`, access log on; medians of %d rounds of %s)\n\n", what, how, era, c.rounds, c.httpDuration)
	fmt.Fprintln(w, "| server | requests/s | p50 | p99 |")
	fmt.Fprintln(w, "| --- | --- | --- | --- |")
	median := regexp.MustCompile(`^median (\S+):\s+(\d+) req/s, p50 (\S+), p99 (\S+)`)
	for line := range strings.Lines(string(out)) {
		if m := median.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			v, _ := strconv.ParseFloat(m[2], 64)
			p50, _ := time.ParseDuration(m[3])
			p99, _ := time.ParseDuration(m[4])
			fmt.Fprintf(w, "| %s | %s | %s | %s |\n", m[1], thousands(v), dur(float64(p50)), dur(float64(p99)))
		}
	}
	for line := range strings.Lines(string(out)) {
		if rest, ok := strings.CutPrefix(line, "3gs / go-sdk: "); ok {
			fmt.Fprint(w, "\n3gs / go-sdk: "+strings.TrimSpace(rest))
		}
	}
	fmt.Fprint(w, "\n\n")
}
