// Command load measures MCP-over-stdio throughput and server CPU per
// request: it builds the 3gs binary and the mcp-go comparison server, starts
// each with the same registry, keeps -inflight requests outstanding through
// the stdin/stdout pipe, and reads the server's CPU time from the operating
// system when it exits. Run it from bench/:
//
//	go run ./load -registry ../../shared/fixtures/3gs-registry.json
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/bench/internal/benchtools"
)

var queries = []string{
	"how do I run a bitcoin full node", "self host my email server", "learn rust ownership",
	"best password manager", "harden ssh on linux", "threat modeling with stride",
	"home assistant without cloud", "build an mcp server in go",
}

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

func main() {
	registry := flag.String("registry", "", "registry file both servers load; empty means 3gs's embedded registry")
	n := flag.Int("n", 100000, "requests per run")
	inflight := flag.Int("inflight", 64, "requests kept outstanding")
	rounds := flag.Int("rounds", 3, "runs per server and method; the median is reported")
	flag.Parse()
	*registry = benchtools.Registry(*registry)
	dir, err := os.MkdirTemp("", "3gs-load-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	threegs, mcpgo := filepath.Join(dir, "3gs"), filepath.Join(dir, "mcpgo")
	benchtools.Build(exec.Command("go", "build", "-C", "..", "-o", threegs, "./cmd/3gs"))
	benchtools.Build(exec.Command("go", "build", "-o", mcpgo, "./mcpgo"))

	regArgs3gs, regArgsMcpgo := []string{"serve", "--log-level", "warn"}, []string{}
	if *registry != "" {
		abs, _ := filepath.Abs(*registry)
		regArgs3gs = append(regArgs3gs, "--registry", abs)
		regArgsMcpgo = append(regArgsMcpgo, "-registry", abs)
	}
	servers := []server{{"3gs", threegs, regArgs3gs}, {"mcp-go v1.2.1", mcpgo, regArgsMcpgo}}
	methods := []string{"tools/list", "get_sources"}

	fmt.Printf("%d requests per run, %d in flight, median of %d rounds, registry %q\n\n", *n, *inflight, *rounds, *registry)
	fmt.Printf("%-14s %-12s %12s %16s\n", "server", "method", "req/s", "server CPU/req")
	table := map[string]result{}
	for _, m := range methods {
		for _, s := range servers {
			var runs []result
			for range *rounds {
				runs = append(runs, run(s, m, *n, *inflight))
			}
			r := median(runs)
			table[s.name+m] = r
			fmt.Printf("%-14s %-12s %12.0f %14.1fµs\n", s.name, m, float64(r.reqs)/r.elapsed.Seconds(), float64(r.cpu.Microseconds())/float64(r.reqs))
		}
	}
	fmt.Println()
	for _, m := range methods {
		a, b := table["3gs"+m], table["mcp-go v1.2.1"+m]
		fmt.Printf("%-12s 3gs/mcp-go throughput %.1fx, CPU per request %.2fx\n", m,
			(float64(a.reqs)/a.elapsed.Seconds())/(float64(b.reqs)/b.elapsed.Seconds()),
			(float64(a.cpu)/float64(a.reqs))/(float64(b.cpu)/float64(b.reqs)))
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
func run(s server, method string, n, inflight int) result {
	cmd := exec.Command(s.bin, s.args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		log.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	in := bufio.NewWriterSize(stdin, 64<<10)
	out := bufio.NewReaderSize(stdout, 1<<20)
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"load","version":"1"}}}`)
	in.Flush()
	if _, err := out.ReadSlice('\n'); err != nil {
		log.Fatalf("%s: no initialize answer: %v", s.name, err)
	}
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

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
	return result{reqs: n, elapsed: elapsed, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
}
