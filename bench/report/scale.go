package main

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/bench/internal/benchtools"
)

func scaleSection(c config, bins map[string]string, dir string) {
	type row struct {
		validate, first       time.Duration
		validateHWM, firstHWM int64
		afterHWM, afterRSS    int64
		bytes                 int64
		p50, p99              time.Duration
		// The same calls split by their answer: sure (confident) and
		// unsure (not confident or no match: an error result, the
		// listing), with the unsure answer lines' median and largest size.
		sure, unsure                [2]time.Duration
		nSure, nUnsure              int
		unsureLine, unsureLineLarge int
	}
	rows := map[int]row{}
	for _, n := range c.scale {
		path, qs := benchtools.Generated(dir, n)
		// The question the issue of slow unsure answers measured (no
		// generated category is about Rust) comes first among them.
		qs = append([]string{"learn rust ownership"}, qs...)
		fi, _ := os.Stat(path)
		var r row
		r.bytes = fi.Size()
		var vs, fs []time.Duration
		for range c.rounds {
			took, peak := timed(bins["3gs"], "validate", "--max-registry-bytes", "1073741824", path)
			vs = append(vs, took)
			r.validateHWM = max(r.validateHWM, peak)
		}
		for round := range c.rounds {
			started := time.Now()
			p := start(bins["3gs"], []string{"serve", "--registry", path, "--log-level", "warn", "--max-registry-bytes", "1073741824"})
			p.send(initLine)
			p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			p.send(callLine(1, qs[0]))
			p.In.Flush()
			p.answer("initialize")
			p.answer("first get_sources")
			fs = append(fs, time.Since(started))
			hwm, _ := procMemory(p.Cmd.Process.Pid)
			r.firstHWM = max(r.firstHWM, hwm)
			if round == 0 {
				var took, sure, unsure []time.Duration
				var lines []int
				for i := range c.calls {
					t := time.Now()
					p.send(callLine(i+2, qs[i%len(qs)]))
					p.In.Flush()
					size, isError := p.answerLine("get_sources")
					d := time.Since(t)
					took = append(took, d)
					if isError {
						unsure = append(unsure, d)
						lines = append(lines, size)
					} else {
						sure = append(sure, d)
					}
				}
				r.p50, r.p99 = percentiles(took)
				r.nSure, r.nUnsure = len(sure), len(unsure)
				r.sure[0], r.sure[1] = percentiles(sure)
				r.unsure[0], r.unsure[1] = percentiles(unsure)
				if len(lines) > 0 {
					slices.Sort(lines)
					r.unsureLine, r.unsureLineLarge = lines[len(lines)/2], lines[len(lines)-1]
				}
				r.afterHWM, r.afterRSS = procMemory(p.Cmd.Process.Pid)
			}
			p.stop()
		}
		r.validate, r.first = median(vs), median(fs)
		rows[n] = r
		os.Remove(path)
	}
	fmt.Fprintf(w, "### Generated registries (`internal/registry/registrytest`; medians of %d runs, peaks the highest seen)\n\n", c.rounds)
	head := "| |"
	sep := "| --- |"
	for _, n := range c.scale {
		head += " " + thousands(float64(n)) + " categories |"
		sep += " --- |"
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, sep)
	line := func(label string, f func(r row) string) {
		s := "| " + label + " |"
		for _, n := range c.scale {
			s += " " + f(rows[n]) + " |"
		}
		fmt.Fprintln(w, s)
	}
	line("registry file", func(r row) string { return mib(r.bytes) })
	line("`3gs validate`: time, peak RSS", func(r row) string { return secs(r.validate) + ", " + mib(r.validateHWM) })
	line("`serve` on stdio: start to the first `get_sources` answer", func(r row) string { return secs(r.first) })
	line("`serve` peak RSS at the first answer", func(r row) string { return mib(r.firstHWM) })
	line(fmt.Sprintf("`get_sources` one at a time, %d calls: p50, p99", c.calls), func(r row) string { return dur(float64(r.p50)) + ", " + dur(float64(r.p99)) })
	line("of which sure (confident): count, p50, p99", func(r row) string {
		return fmt.Sprintf("%d, %s, %s", r.nSure, dur(float64(r.sure[0])), dur(float64(r.sure[1])))
	})
	line("of which unsure (not confident or no match): count, p50, p99", func(r row) string {
		return fmt.Sprintf("%d, %s, %s", r.nUnsure, dur(float64(r.unsure[0])), dur(float64(r.unsure[1])))
	})
	line("unsure answer line: median, largest", func(r row) string {
		return fmt.Sprintf("%s, %s", kb(r.unsureLine), kb(r.unsureLineLarge))
	})
	line("`serve` after those calls: peak RSS, RSS now", func(r row) string { return mib(r.afterHWM) + ", " + mib(r.afterRSS) })
	fmt.Fprintln(w)
}

// percentiles are the p50 and p99 of ds (zero when empty); ds is sorted.
func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2], ds[len(ds)*99/100]
}

// kb is a size in bytes as KB (1,000 bytes), as the targets give it.
func kb(n int) string { return fmt.Sprintf("%.1f KB", float64(n)/1000) }

// timed runs bin to completion and returns its wall time and its peak
// RSS, polled from /proc while it runs (the rusage of a child counts the
// parent's peak from before the exec).
func timed(bin string, args ...string) (time.Duration, int64) {
	cmd := exec.Command(bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	started := time.Now()
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	peak := make(chan int64)
	go func() {
		var p int64
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			if hwm, _ := procMemory(cmd.Process.Pid); hwm > p {
				p = hwm
			}
			select {
			case <-ctx.Done():
				peak <- p
				return
			case <-t.C:
			}
		}
	}()
	err := cmd.Wait()
	took := time.Since(started)
	stop()
	if err != nil {
		log.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, out.Bytes())
	}
	return took, <-peak
}
