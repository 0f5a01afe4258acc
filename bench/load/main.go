// Command load measures MCP-over-stdio throughput and server CPU per
// request: it builds the 3gs binary and the mcp-go comparison server, starts
// each with the same registry, keeps -inflight requests outstanding through
// the stdin/stdout pipe, and reads the server's CPU time from the operating
// system: what it used after the handshake, so loading the registry is not
// counted. Run it from bench/:
//
//	go run ./load -registry ../../shared/fixtures/3gs-registry.json
//
// With -categories it runs once per size on generated registries
// (internal/registry/registrytest) and the questions generated for them,
// and ends with the ratios by size:
//
//	go run ./load -categories 1000,10000,100000 -methods get_sources
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/bench/internal/benchtools"
)

// queries are the get_sources questions every driver asks.
var queries = benchtools.Queries

type server struct {
	name string
	bin  string
	args []string
}

type result struct {
	reqs    int
	elapsed time.Duration
	cpu     time.Duration
}

func (r result) perSecond() float64 { return float64(r.reqs) / r.elapsed.Seconds() }
func (r result) cpuPerReq() float64 { return float64(r.cpu) / float64(r.reqs) }

func main() {
	registry := flag.String("registry", "", "registry file both servers load; empty means 3gs's embedded registry")
	categories := flag.String("categories", "", "comma-separated sizes, such as 1000,10000,100000: run on a generated registry of each size instead of -registry")
	methodList := flag.String("methods", "tools/list,get_sources", "comma-separated methods to measure: tools/list, get_sources")
	n := flag.Int("n", 100000, "requests per run")
	inflight := flag.Int("inflight", 64, "requests kept outstanding")
	rounds := flag.Int("rounds", 3, "runs per server and method; the median is reported")
	flag.Parse()
	dir, threegs, mcpgo := benchtools.Binaries("3gs-load-", "./mcpgo")
	defer os.RemoveAll(dir)
	methods := strings.Split(*methodList, ",")

	// A setting is a registry and the questions asked of it; a generated
	// one is written only when its turn comes, and removed after.
	type setting struct {
		label, path string
		queries     []string
		size        int
	}
	var settings []setting
	if *categories == "" {
		*registry = benchtools.Registry(*registry)
		settings = append(settings, setting{label: fmt.Sprintf("registry %q", *registry), path: *registry, queries: queries})
	}
	for _, size := range strings.Split(*categories, ",") {
		if size = strings.TrimSpace(size); size == "" {
			continue
		}
		k, err := strconv.Atoi(size)
		if err != nil || k < 1 {
			log.Fatalf("-categories: %q is not a number of categories", size)
		}
		settings = append(settings, setting{label: benchtools.Describe(k), size: k})
	}

	var summary []string
	for _, set := range settings {
		if set.size > 0 {
			set.path, set.queries = benchtools.Generated(dir, set.size)
		}
		regArgs3gs, regArgsMcpgo := []string{"serve", "--log-level", "warn"}, []string{}
		if set.path != "" {
			abs, _ := filepath.Abs(set.path)
			regArgs3gs = append(regArgs3gs, "--registry", abs)
			regArgsMcpgo = append(regArgsMcpgo, "-registry", abs)
		}
		servers := []server{{"3gs", threegs, regArgs3gs}, {"mcp-go v1.2.1", mcpgo, regArgsMcpgo}}
		fmt.Printf("%d requests per run, %d in flight, median of %d rounds, %s\n\n", *n, *inflight, *rounds, set.label)
		fmt.Printf("%-14s %-12s %12s %16s\n", "server", "method", "req/s", "server CPU/req")
		table := map[string]result{}
		for _, m := range methods {
			// Rounds alternate between the servers, so both see the
			// same machine when it is busy with something else.
			runs := map[string][]result{}
			for range *rounds {
				for _, s := range servers {
					runs[s.name] = append(runs[s.name], run(s, m, *n, *inflight, set.queries))
				}
			}
			for _, s := range servers {
				r := median(runs[s.name])
				table[s.name+m] = r
				fmt.Printf("%-14s %-12s %12.0f %14.1fµs\n", s.name, m, r.perSecond(), r.cpuPerReq()/1e3)
			}
		}
		fmt.Println()
		for _, m := range methods {
			a, b := table["3gs"+m], table["mcp-go v1.2.1"+m]
			line := fmt.Sprintf("%-12s 3gs/mcp-go throughput %.2fx, CPU per request %.2fx", m, a.perSecond()/b.perSecond(), a.cpuPerReq()/b.cpuPerReq())
			fmt.Println(line)
			summary = append(summary, fmt.Sprintf("%-28s %s", set.label, line))
		}
		fmt.Println()
		if set.size > 0 {
			os.Remove(set.path)
		}
	}
	if len(settings) > 1 {
		fmt.Println("Summary:")
		for _, l := range summary {
			fmt.Println(l)
		}
	}
}

func median(rs []result) result {
	for i := range rs {
		for j := i + 1; j < len(rs); j++ {
			if rs[j].elapsed < rs[i].elapsed {
				rs[i], rs[j] = rs[j], rs[i]
			}
		}
	}
	return rs[len(rs)/2]
}

// run starts the server, completes the handshake, then pipelines n
// requests with inflight outstanding and returns wall time and the
// server's total CPU time.
func run(s server, method string, n, inflight int, queries []string) result {
	p := benchtools.StartStdio(s.bin, s.args...)
	cmd, stdin, in, out := p.Cmd, p.Stdin, p.In, p.Out
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"load","version":"1"}}}`)
	in.Flush()
	if _, err := out.ReadSlice('\n'); err != nil {
		log.Fatalf("%s: no initialize answer: %v", s.name, err)
	}
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// What the server spent loading its registry is not the requests'.
	loaded := benchtools.ProcessCPU(cmd.Process.Pid)

	tokens := make(chan struct{}, inflight)
	done := make(chan error, 1)
	go func() {
		for i := 0; i < n; i++ {
			line, err := out.ReadSlice('\n')
			for err == bufio.ErrBufferFull {
				_, err = out.ReadSlice('\n')
			}
			if err != nil {
				done <- fmt.Errorf("after %d answers: %w", i, err)
				return
			}
			if strings.Contains(string(line[:min(len(line), 64)]), `"error"`) {
				done <- fmt.Errorf("error answer: %.200s", line)
				return
			}
			<-tokens
		}
		done <- nil
	}()
	start := time.Now()
	for i := 1; i <= n; i++ {
		tokens <- struct{}{}
		if method == "tools/list" {
			fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`+"\n", i)
		} else {
			fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_sources","arguments":{"query":%q}}}`+"\n", i, queries[i%len(queries)])
		}
		if len(tokens) == cap(tokens) || i == n {
			in.Flush()
		}
	}
	in.Flush()
	if err := <-done; err != nil {
		log.Fatalf("%s %s: %v", s.name, method, err)
	}
	elapsed := time.Since(start)
	stdin.Close()
	io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		log.Fatalf("%s exited: %v", s.name, err)
	}
	return result{reqs: n, elapsed: elapsed, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime() - loaded}
}
