package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/bench/internal/benchtools"
)

type stdioServer struct {
	name string
	bin  string
	args []string
}

type stdioRun struct {
	reqs    int
	elapsed time.Duration
	cpu     time.Duration
	hwm     int64
}

func (r stdioRun) perSecond() float64 { return float64(r.reqs) / r.elapsed.Seconds() }
func (r stdioRun) cpuPerReq() float64 { return float64(r.cpu) / float64(r.reqs) }

// workload is a set of questions a stdio run asks in turn.
type workload struct {
	name string
	qs   []string
}

func stdioSection(c config, bins map[string]string) {
	reg3gs, regMcpgo := []string{"serve", "--log-level", "warn"}, []string{}
	if c.registry != "" {
		reg3gs = append(reg3gs, "--registry", c.registry)
		regMcpgo = append(regMcpgo, "-registry", c.registry)
	}
	nullName := "null server (answers without reading: the ceiling)"
	servers := []stdioServer{{nullName, bins["null"], nil}, {"3gs", bins["3gs"], reg3gs}}
	if c.baseline != "" {
		servers = append(servers, stdioServer{"3gs -baseline (an older build)", c.baseline, reg3gs})
	}
	mcpgoName := "mcp-go v1.2.1, same tools"
	servers = append(servers, stdioServer{mcpgoName, bins["mcpgo"], regMcpgo})
	// The mix whole is the headline; its sure and unsure questions alone
	// follow, each in processes of its own, so that the peak RSS of a
	// sure-only load and of the mix compare. The null server reads
	// nothing, so it runs the mix alone.
	loads := []workload{{"", queries}}
	if m := c.mix; m != nil {
		loads = []workload{{"mix", m.All}, {"sure", m.Sure}, {"unsure", m.Unsure}}
	}
	type key struct{ server, load string }
	runs := map[key][]stdioRun{}
	spawnInit, spawnFirst := map[key][]time.Duration{}, map[key][]time.Duration{}
	each := func(f func(s stdioServer, l workload)) {
		for _, s := range servers {
			for _, l := range loads {
				if s.name == nullName && l.name != loads[0].name {
					continue
				}
				f(s, l)
			}
		}
	}
	for range c.rounds {
		each(func(s stdioServer, l workload) {
			runs[key{s.name, l.name}] = append(runs[key{s.name, l.name}], pipelined(s, l.qs, c.n, c.inflight))
		})
	}
	for range c.spawns {
		each(func(s stdioServer, l workload) {
			i, f := spawn(s, l.qs[0])
			spawnInit[key{s.name, l.name}] = append(spawnInit[key{s.name, l.name}], i)
			spawnFirst[key{s.name, l.name}] = append(spawnFirst[key{s.name, l.name}], f)
		})
	}
	fmt.Fprintf(w, "### stdio: `get_sources` pipelined %d deep\n\n", c.inflight)
	if m := c.mix; m != nil {
		fmt.Fprintf(w, "Benchmark mix `%s` (`internal/matcher/testdata/mix-v1/queries.tsv`, frozen): %d questions over its registry of %d categories, %d of them answered confidently (sure) and %d not (unsure: not confident or no match, the listing); typos, long questions, off-topic ones and nonsense included. ",
			m.Name, len(m.All), categoryCount(m.Registry), len(m.Sure), len(m.Unsure))
		fmt.Fprintf(w, "The mix is the headline; its sure and unsure questions alone run in processes of their own. ")
	} else {
		fmt.Fprintf(w, "Registry %s, the %d questions of `benchtools.Queries`. ", registryName(c.registry), len(queries))
	}
	fmt.Fprintf(w, "%d requests per run, medians of %d rounds that alternate between the servers; process start times are medians of %d starts.\n\n",
		c.n, c.rounds, c.spawns)
	fmt.Fprintln(w, "| server | questions | requests/s | server CPU µs/request | peak RSS | spawn → initialize answered | spawn → first `get_sources` answered |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- |")
	med := map[key]stdioRun{}
	each(func(s stdioServer, l workload) {
		k := key{s.name, l.name}
		r := medianRun(runs[k])
		med[k] = r
		fmt.Fprintf(w, "| %s | %s | %s | %.1f | %s | %s | %s |\n", s.name, orDash(l.name), thousands(r.perSecond()), r.cpuPerReq()/1e3, mib(r.hwm),
			ms(median(spawnInit[k])), ms(median(spawnFirst[k])))
	})
	head := loads[0].name
	a, null, mg := med[key{"3gs", head}], med[key{nullName, head}], med[key{mcpgoName, head}]
	fmt.Fprintf(w, "\n3gs%s: %.2fx mcp-go's throughput at %.2fx its CPU per request; %.3f of the null server's throughput.", onLoad(head), a.perSecond()/mg.perSecond(), a.cpuPerReq()/mg.cpuPerReq(), a.perSecond()/null.perSecond())
	if c.mix != nil {
		sure, unsure := med[key{"3gs", "sure"}], med[key{"3gs", "unsure"}]
		fmt.Fprintf(w, " An unsure request costs %.2fx a sure one's CPU; the mix peaks %s above the sure-only load (%s against %s).",
			unsure.cpuPerReq()/sure.cpuPerReq(), mibDelta(a.hwm-sure.hwm), mib(a.hwm), mib(sure.hwm))
	}
	if c.baseline != "" {
		b := med[key{servers[2].name, head}]
		fmt.Fprintf(w, " Against the baseline%s: %.2fx the throughput, %.2fx the CPU per request.", onLoad(head), a.perSecond()/b.perSecond(), a.cpuPerReq()/b.cpuPerReq())
	}
	fmt.Fprint(w, "\n\n")
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func onLoad(name string) string {
	if name == "" {
		return ""
	}
	return " (" + name + ")"
}

// mibDelta is a signed size in MiB.
func mibDelta(b int64) string {
	if b < 0 {
		return "-" + mib(-b)
	}
	return mib(b)
}

// categoryCount is how many categories the registry file at path holds.
func categoryCount(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	var doc struct {
		Categories map[string]json.RawMessage `json:"categories"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		log.Fatal(err)
	}
	return len(doc.Categories)
}

func registryName(path string) string {
	if path == "" {
		return "embedded in 3gs"
	}
	return "`" + filepath.Base(path) + "`"
}

func medianRun(rs []stdioRun) stdioRun {
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b stdioRun) int { return int(a.elapsed - b.elapsed) })
	return rs[len(rs)/2]
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2]
}

const initLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"report","version":"1"}}}`

func callLine(id int, q string) string {
	b, _ := json.Marshal(q)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_sources","arguments":{"query":%s}}}`, id, b)
}

// proc is a server on stdio.
type proc struct{ *benchtools.Proc }

func start(bin string, args []string) *proc { return &proc{benchtools.StartStdio(bin, args...)} }

func (p *proc) send(line string) {
	p.In.WriteString(line)
	p.In.WriteByte('\n')
}

// answer reads one line, failing on an error answer.
func (p *proc) answer(what string) {
	line, err := p.Out.ReadSlice('\n')
	for err == bufio.ErrBufferFull {
		_, err = p.Out.ReadSlice('\n')
	}
	if err != nil {
		log.Fatalf("%s: %s: %v", p.Cmd.Path, what, err)
	}
	if bytes.Contains(line[:min(len(line), 64)], []byte(`"error"`)) {
		log.Fatalf("%s: %s: error answer %.200s", p.Cmd.Path, what, line)
	}
}

// answerLine reads one answer line, failing on a JSON-RPC error, and
// returns its size, newline included, and whether it is a tool's error
// result (isError: a get_sources answer that is not confident).
func (p *proc) answerLine(what string) (size int, isError bool) {
	line, err := p.Out.ReadSlice('\n')
	size = len(line)
	for err == bufio.ErrBufferFull {
		line, err = p.Out.ReadSlice('\n')
		size += len(line)
	}
	if err != nil {
		log.Fatalf("%s: %s: %v", p.Cmd.Path, what, err)
	}
	if size == len(line) && bytes.Contains(line[:min(len(line), 64)], []byte(`"error"`)) {
		log.Fatalf("%s: %s: error answer %.200s", p.Cmd.Path, what, line)
	}
	// A line longer than the reader's buffer (1 MiB) is read in parts;
	// isError, near its end, is in the last.
	return size, bytes.Contains(line, []byte(`"isError":true`))
}

func (p *proc) stop() stdioRun {
	hwm := peakRSS(p.Cmd.Process.Pid)
	p.Stdin.Close()
	io.Copy(io.Discard, p.Out)
	if err := p.Cmd.Wait(); err != nil {
		log.Fatalf("%s exited: %v", p.Cmd.Path, err)
	}
	return stdioRun{hwm: hwm, cpu: p.Cmd.ProcessState.UserTime() + p.Cmd.ProcessState.SystemTime()}
}

// spawn times one process start: to the initialize answer, and to the
// first get_sources answer, to question, asked right after it.
func spawn(s stdioServer, question string) (initialized, first time.Duration) {
	started := time.Now()
	p := start(s.bin, s.args)
	p.send(initLine)
	p.In.Flush()
	p.answer("initialize")
	initialized = time.Since(started)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(callLine(1, question))
	p.In.Flush()
	p.answer("first get_sources")
	first = time.Since(started)
	p.stop()
	return initialized, first
}

// pipelined completes the handshake, then keeps inflight requests
// outstanding, asking qs in turn, until n are answered; the CPU counted is what the server
// used after the handshake, and the peak RSS is read before it exits.
func pipelined(s stdioServer, qs []string, n, inflight int) stdioRun {
	p := start(s.bin, s.args)
	p.send(initLine)
	p.In.Flush()
	p.answer("initialize")
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	loaded := benchtools.ProcessCPU(p.Cmd.Process.Pid)
	tokens := make(chan struct{}, inflight)
	done := make(chan struct{})
	go func() {
		for range n {
			p.answer("get_sources")
			<-tokens
		}
		close(done)
	}()
	started := time.Now()
	for i := 1; i <= n; i++ {
		tokens <- struct{}{}
		p.send(callLine(i, qs[i%len(qs)]))
		if len(tokens) == cap(tokens) || i == n {
			p.In.Flush()
		}
	}
	<-done
	elapsed := time.Since(started)
	r := p.stop()
	r.reqs, r.elapsed, r.cpu = n, elapsed, r.cpu-loaded
	return r
}

// peakRSS is VmHWM of a running process, in bytes.
func peakRSS(pid int) int64 {
	hwm, _ := procMemory(pid)
	return hwm
}

// procMemory reads VmHWM and VmRSS from /proc/PID/status, in bytes.
func procMemory(pid int) (hwm, rss int64) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0
	}
	for line := range strings.Lines(string(data)) {
		k, v, _ := strings.Cut(line, ":")
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		kb, _ := strconv.ParseInt(f[0], 10, 64)
		switch k {
		case "VmHWM":
			hwm = kb << 10
		case "VmRSS":
			rss = kb << 10
		}
	}
	return hwm, rss
}
