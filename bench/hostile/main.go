// Command hostile measures a 3gs binary under the hostile loads of the
// "hold under hostile load" review, the same way for any build, so a
// change can be judged before and after:
//
//	go build -o /tmp/3gs-old ./cmd/3gs   (at the old commit)
//	cd bench && go run ./hostile -bin /tmp/3gs-old
//
// For each scenario it starts `3gs serve` on loopback, attacks it, probes
// it meanwhile with a well-behaved client on fresh connections, samples
// the server's RSS and open sockets every 100 ms from /proc (Linux), and
// prints one JSON line. Every scenario is bounded in time and count.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

var bin = flag.String("bin", "", "3gs binary")

type server struct {
	cmd  *exec.Cmd
	addr string
	log  string
	stop chan struct{}
	peak atomic.Int64
	sock atomic.Int64
}

func start(name string) *server {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	logPath := filepath.Join(os.TempDir(), "3gs-hostile-"+name+".log")
	lf, _ := os.Create(logPath)
	cmd := exec.Command(*bin, "serve", "--http", addr)
	cmd.Stderr = lf
	cmd.Stdout = lf
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	s := &server{cmd: cmd, addr: addr, log: logPath, stop: make(chan struct{})}
	for i := 0; i < 100; i++ {
		if r, err := http.Get("http://" + addr + "/health"); err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				if r := rss(cmd.Process.Pid); r > s.peak.Load() {
					s.peak.Store(r)
				}
				if n := sockets(cmd.Process.Pid); n > s.sock.Load() {
					s.sock.Store(n)
				}
			}
		}
	}()
	return s
}

func (s *server) kill() {
	close(s.stop)
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

func rss(pid int) int64 {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			f := strings.Fields(l)
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

func sockets(pid int) int64 {
	d := "/proc/" + strconv.Itoa(pid) + "/fd"
	es, _ := os.ReadDir(d)
	var n int64
	for _, e := range es {
		if l, _ := os.Readlink(filepath.Join(d, e.Name())); strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}

const callBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_categories","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`

func header(req *http.Request) {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "list_categories")
}

// probe is one well-behaved call on a fresh connection: its status, 0 when
// it got no answer within 3 s.
func probe(addr string) int {
	c := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	req, _ := http.NewRequest("POST", "http://"+addr+"/mcp", strings.NewReader(callBody))
	header(req)
	r, err := c.Do(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, r.Body)
	r.Body.Close()
	return r.StatusCode
}

type result map[string]any

func probes(addr string, n int, every time.Duration, res result) {
	ok, busy, failed := 0, 0, 0
	for i := 0; i < n; i++ {
		switch probe(addr) {
		case 200:
			ok++
		case 503:
			busy++
		case 0:
			failed++
		}
		time.Sleep(every)
	}
	res["probes"], res["probes_ok"], res["probes_503"], res["probes_no_answer"] = n, ok, busy, failed
}

func dial(addr string, n int, prefix string) []net.Conn {
	var cs []net.Conn
	for i := 0; i < n; i++ {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break
		}
		if prefix != "" {
			c.Write([]byte(prefix))
		}
		cs = append(cs, c)
	}
	return cs
}

func closeAll(cs []net.Conn) {
	for _, c := range cs {
		c.Close()
	}
}

func run(name string, f func(s *server, res result)) {
	s := start(name)
	res := result{"scenario": name, "rss_start_kb": rss(s.cmd.Process.Pid)}
	f(s, res)
	res["rss_peak_kb"], res["sockets_peak"] = s.peak.Load(), s.sock.Load()
	s.kill()
	b, _ := json.Marshal(res)
	fmt.Println(string(b))
}

func main() {
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "hostile: name the 3gs binary to measure: -bin PATH (build it with go build -o PATH ./cmd/3gs)")
		os.Exit(2)
	}
	var lim syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	lim.Cur = lim.Max
	syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)

	run("slowbody", scenarioSlowbody)
	run("connflood", scenarioConnflood)
	run("slowloris", scenarioSlowloris)
	run("sessions", scenarioSessions)
	run("bigid", scenarioBigid)
	run("biglog", scenarioBiglog)
	stdioBigID()
	run("casevariant", scenarioCasevariant)
}

// stdioBigID sends 256 pings with 4 MiB ids over stdio to a server whose
// answers are never read, and reports its peak RSS.
func stdioBigID() {
	cmd := exec.Command(*bin, "serve")
	in, _ := cmd.StdinPipe()
	cmd.StdoutPipe() // never read
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	var peak atomic.Int64
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				if r := rss(cmd.Process.Pid); r > peak.Load() {
					peak.Store(r)
				}
			}
		}
	}()
	go func() {
		io.WriteString(in, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`+"\n")
		line := []byte(`{"jsonrpc":"2.0","id":"` + strings.Repeat("A", 4<<20-1024) + `","method":"ping"}` + "\n")
		for i := 0; i < 256; i++ {
			if _, err := in.Write(line); err != nil {
				return
			}
		}
	}()
	time.Sleep(6 * time.Second)
	close(stop)
	cmd.Process.Kill()
	cmd.Wait()
	b, _ := json.Marshal(result{"scenario": "stdio-bigid-unread", "rss_peak_kb": peak.Load()})
	fmt.Println(string(b))
}
