// Command httpload compares 3gs with the official Go SDK over Streamable
// HTTP: it builds the 3gs binary and the go-sdk server (../gosdk, same tools,
// decoders and matcher), starts each with the same registry on loopback,
// and drives each in turn with the same 64 keep-alive clients calling
// get_sources (internal/loadgen). Rounds alternate between the servers so
// both see the same machine; the medians are reported with their ratio.
// Run it from bench/; by default it asks the benchmark mix (mix-v1, the
// questions agents ask, a third and more not answered confidently) over
// its registry, and with -registry the 8 questions of benchtools.Queries
// of that registry:
//
//	go run ./httpload
//	go run ./httpload -registry ../../shared/fixtures/3gs-registry.json
//
// With -categories it runs once per size on generated registries
// (internal/registry/registrytest) and the questions generated for them,
// and ends with the ratios by size:
//
//	go run ./httpload -categories 1000,10000,100000
package main

import (
	"bufio"
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/bench/internal/benchtools"
	"github.com/three-good-sources/3gs/internal/loadgen"
)

type server struct {
	name  string
	start func() (url string, stop func())
}

func main() {
	registry := flag.String("registry", "", "registry file both servers load, asked the questions of benchtools.Queries; empty means the benchmark mix (mix-v1) over its registry")
	categories := flag.String("categories", "", "comma-separated sizes, such as 1000,10000,100000: run on a generated registry of each size instead of -registry")
	clients := flag.Int("clients", 64, "concurrent keep-alive clients")
	duration := flag.Duration("duration", 10*time.Second, "measured time per round")
	warmup := flag.Duration("warmup", 2*time.Second, "unmeasured time before each round")
	rounds := flag.Int("rounds", 3, "rounds per server; the median is reported")
	logLevel := flag.String("log-level", "info", "3gs's log level: info keeps its access log on, as deployed; warn turns it off")
	flag.StringVar(&era, "era", loadgen.Legacy, "protocol era the clients speak: "+loadgen.Legacy+" (a session per client) or "+loadgen.Modern+" (stateless; the go-sdk server then runs with Stateless set, which that era needs)")
	flag.Parse()
	if era != loadgen.Legacy && era != loadgen.Modern {
		log.Fatalf("-era: %q is neither %s nor %s", era, loadgen.Legacy, loadgen.Modern)
	}
	dir, threegs, gosdk := benchtools.Binaries("3gs-httpload-", "./gosdk")
	defer os.RemoveAll(dir)
	if *categories == "" && *registry == "" {
		mix := benchtools.MixV1("..", dir)
		compare(threegs, gosdk, mix.Registry, "of benchmark mix "+mix.Name+", asked its questions", mix.All, *clients, *duration, *warmup, *rounds, *logLevel)
		return
	}
	if *categories == "" {
		*registry = benchtools.Registry(*registry)
		compare(threegs, gosdk, *registry, orDefault(*registry, "embedded"), benchtools.Queries, *clients, *duration, *warmup, *rounds, *logLevel)
		return
	}
	var summary []string
	for _, size := range strings.Split(*categories, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(size))
		if err != nil || k < 1 {
			log.Fatalf("-categories: %q is not a number of categories", size)
		}
		path, qs := benchtools.Generated(dir, k)
		summary = append(summary, fmt.Sprintf("%-28s %s", benchtools.Describe(k), compare(threegs, gosdk, path, benchtools.Describe(k), qs, *clients, *duration, *warmup, *rounds, *logLevel)))
		os.Remove(path)
		fmt.Println()
	}
	fmt.Println("Summary:")
	for _, l := range summary {
		fmt.Println(l)
	}
}

// era is the protocol era of the run (-era).
var era string

// compare runs the rounds on one registry (the embedded one when path is
// empty) and returns the ratio line.
func compare(threegs, gosdk, path, label string, queries []string, clients int, duration, warmup time.Duration, rounds int, logLevel string) string {
	regArgs := func(flag string) []string {
		if path == "" {
			return nil
		}
		return []string{flag, path}
	}
	servers := []server{
		{"3gs", func() (string, func()) {
			addr := freeAddr()
			args := append([]string{"serve", "--http", addr, "--log-level", logLevel}, regArgs("--registry")...)
			return startReady(threegs, args, "http://"+addr)
		}},
		{"go-sdk", func() (string, func()) {
			args := []string{"-addr", "127.0.0.1:0"}
			if era == loadgen.Modern {
				args = append(args, "-stateless")
			}
			return startServer(gosdk, append(args, regArgs("-registry")...), regexp.MustCompile(`^(http://\S+/mcp)$`))
		}},
	}
	how := "2025-11-25 sessions"
	if era == loadgen.Modern {
		how = "2026-07-28, stateless"
	}
	fmt.Printf("get_sources over Streamable HTTP (%s, JSON responses), %d keep-alive clients, %s per round after %s warm-up, %d rounds; registry %s\n",
		how, clients, duration, warmup, rounds, label)
	results := map[string][]loadgen.Result{}
	for r := 0; r < rounds; r++ {
		for _, s := range servers {
			url, stop := s.start()
			res, err := loadgen.Run(context.Background(), loadgen.Config{URL: url, Clients: clients, Warmup: warmup, Duration: duration, Queries: queries, Era: era})
			stop()
			if err != nil {
				log.Fatalf("%s: %v", s.name, err)
			}
			if res.Errors > 0 {
				log.Fatalf("%s: %d errors; first: %s", s.name, res.Errors, res.FirstError)
			}
			fmt.Printf("  round %d %-7s %s\n", r+1, s.name, res)
			results[s.name] = append(results[s.name], res)
		}
	}
	med := func(name string) loadgen.Result {
		rs := slices.Clone(results[name])
		slices.SortFunc(rs, func(a, b loadgen.Result) int { return cmp.Compare(a.PerSecond(), b.PerSecond()) })
		return rs[len(rs)/2]
	}
	a, b := med("3gs"), med("go-sdk")
	fmt.Printf("median 3gs:    %.0f req/s, p50 %s, p99 %s\n", a.PerSecond(), a.P50, a.P99)
	fmt.Printf("median go-sdk: %.0f req/s, p50 %s, p99 %s\n", b.PerSecond(), b.P50, b.P99)
	ratio := fmt.Sprintf("3gs / go-sdk: throughput %.2fx, p50 %.2fx, p99 %.2fx", a.PerSecond()/b.PerSecond(), float64(a.P50)/float64(b.P50), float64(a.P99)/float64(b.P99))
	fmt.Println(ratio)
	return ratio
}

// startServer runs bin and waits for the line on its stdout that names
// its URL; stop kills it.
func startServer(bin string, args []string, urlLine *regexp.Regexp) (string, func()) {
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		if m := urlLine.FindStringSubmatch(strings.TrimSpace(sc.Text())); m != nil {
			go io.Copy(io.Discard, pipe) // keep the server's writes from blocking
			return m[1], func() { cmd.Process.Kill(); cmd.Wait() }
		}
	}
	log.Fatalf("%s exited before naming its URL", bin)
	return "", nil
}

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startReady runs a 3gs server and waits until its /health says ok, which
// works whatever its log level; stop kills it.
func startReady(bin string, args []string, base string) (string, func()) {
	cmd := exec.Command(bin, args...)
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	for {
		select {
		case <-exited:
			log.Fatalf("%s exited before it was ready", bin)
		default:
		}
		if resp, err := http.Get(base + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base + "/mcp", func() { cmd.Process.Kill(); <-exited }
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
