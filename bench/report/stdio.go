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

func stdioSection(c config, bins map[string]string) {
	reg3gs, regMcpgo := []string{"serve", "--log-level", "warn"}, []string{}
	if c.registry != "" {
		reg3gs = append(reg3gs, "--registry", c.registry)
		regMcpgo = append(regMcpgo, "-registry", c.registry)
	}
	servers := []stdioServer{{"null server (answers without reading: the ceiling)", bins["null"], nil}, {"3gs", bins["3gs"], reg3gs}}
	if c.baseline != "" {
		servers = append(servers, stdioServer{"3gs -baseline (an older build)", c.baseline, reg3gs})
	}
	servers = append(servers, stdioServer{"mcp-go v1.2.1, same tools", bins["mcpgo"], regMcpgo})

	runs := map[string][]stdioRun{}
	spawnInit, spawnFirst := map[string][]time.Duration{}, map[string][]time.Duration{}
	for range c.rounds {
		for _, s := range servers {
			runs[s.name] = append(runs[s.name], pipelined(s, c.n, c.inflight))
		}
	}
	for range c.spawns {
		for _, s := range servers {
			i, f := spawn(s)
			spawnInit[s.name] = append(spawnInit[s.name], i)
			spawnFirst[s.name] = append(spawnFirst[s.name], f)
		}
	}
	fmt.Fprintf(w, "### stdio: `get_sources` pipelined %d deep\n\n", c.inflight)
	fmt.Fprintf(w, "Registry %s; %d requests per run, medians of %d rounds that alternate between the servers; process start times are medians of %d starts.\n\n",
		registryName(c.registry), c.n, c.rounds, c.spawns)
	fmt.Fprintln(w, "| server | requests/s | server CPU µs/request | peak RSS | spawn → initialize answered | spawn → first `get_sources` answered |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- |")
	med := map[string]stdioRun{}
	for _, s := range servers {
		r := medianRun(runs[s.name])
		med[s.name] = r
		fmt.Fprintf(w, "| %s | %s | %.1f | %s | %s | %s |\n", s.name, thousands(r.perSecond()), r.cpuPerReq()/1e3, mib(r.hwm),
			ms(median(spawnInit[s.name])), ms(median(spawnFirst[s.name])))
	}
	a, null, mg := med["3gs"], med[servers[0].name], med[servers[len(servers)-1].name]
	fmt.Fprintf(w, "\n3gs: %.2fx mcp-go's throughput at %.2fx its CPU per request; %.3f of the null server's throughput.", a.perSecond()/mg.perSecond(), a.cpuPerReq()/mg.cpuPerReq(), a.perSecond()/null.perSecond())
	if c.baseline != "" {
		b := med[servers[2].name]
		fmt.Fprintf(w, " Against the baseline: %.2fx the throughput, %.2fx the CPU per request.", a.perSecond()/b.perSecond(), a.cpuPerReq()/b.cpuPerReq())
	}
	fmt.Fprint(w, "\n\n")
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
// first get_sources answer asked right after it.
func spawn(s stdioServer) (initialized, first time.Duration) {
	started := time.Now()
	p := start(s.bin, s.args)
	p.send(initLine)
	p.In.Flush()
	p.answer("initialize")
	initialized = time.Since(started)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(callLine(1, queries[0]))
	p.In.Flush()
	p.answer("first get_sources")
	first = time.Since(started)
	p.stop()
	return initialized, first
}

// pipelined completes the handshake, then keeps inflight requests
// outstanding until n are answered; the CPU counted is what the server
// used after the handshake, and the peak RSS is read before it exits.
func pipelined(s stdioServer, n, inflight int) stdioRun {
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
		p.send(callLine(i, queries[i%len(queries)]))
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
