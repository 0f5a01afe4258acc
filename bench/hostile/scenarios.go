package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// scenarioSlowbody holds 300 requests whose bodies never finish and probes the server meanwhile.
func scenarioSlowbody(s *server, res result) {
	cs := dial(s.addr, 300, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: 100000\r\n\r\n{\"jsonrpc\"")
	res["stalled_bodies"] = len(cs)
	time.Sleep(300 * time.Millisecond)
	probes(s.addr, 20, 200*time.Millisecond, res)
	closeAll(cs)
}

// scenarioConnflood opens 9,000 idle connections and probes the server meanwhile.
func scenarioConnflood(s *server, res result) {
	cs := dial(s.addr, 9000, "")
	res["idle_connections_opened"] = len(cs)
	time.Sleep(500 * time.Millisecond)
	probes(s.addr, 20, 100*time.Millisecond, res)
	closeAll(cs)
}

// scenarioSlowloris holds 2,000 connections whose headers never end and probes the server meanwhile.
func scenarioSlowloris(s *server, res result) {
	cs := dial(s.addr, 2000, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
	res["slow_header_connections"] = len(cs)
	probes(s.addr, 20, 200*time.Millisecond, res)
	closeAll(cs)
}

// scenarioSessions floods initialize from 16 workers, then counts how many of 10 newcomers still get a session.
func scenarioSessions(s *server, res result) {
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`
	open := func() (int, string) {
		req, _ := http.NewRequest("POST", "http://"+s.addr+"/mcp", strings.NewReader(init))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, ""
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
		return r.StatusCode, r.Header.Get("Retry-After")
	}
	var ok, busy atomic.Int64
	var wg sync.WaitGroup
	jobs := make(chan int)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range jobs {
				if st, _ := open(); st == 200 {
					ok.Add(1)
				} else if st == 503 {
					busy.Add(1)
				}
			}
		}()
	}
	for i := 0; i < 1100; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	res["flood_initialize_ok"], res["flood_initialize_503"] = ok.Load(), busy.Load()
	after, retry := 0, ""
	for i := 0; i < 10; i++ {
		st, ra := open()
		if st == 200 {
			after++
		}
		if ra != "" {
			retry = ra
		}
	}
	res["newcomer_initialize_ok_of_10"], res["retry_after"] = after, retry
}

// scenarioBigid sends 256 requests with 4 MiB ids whose answers are not read for 3 s, and reports the first answer.
func scenarioBigid(s *server, res result) {
	id := strings.Repeat("A", 4<<20-1024)
	body := `{"jsonrpc":"2.0","id":"` + id + `","method":"nosuch","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	var wg sync.WaitGroup
	var sizes sync.Map
	for i := 0; i < 256; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c, err := net.Dial("tcp", s.addr)
			if err != nil {
				return
			}
			defer c.Close()
			fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: nosuch\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
			time.Sleep(3 * time.Second) // read nothing meanwhile
			if i == 0 {
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				r, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err == nil {
					n, _ := io.Copy(io.Discard, r.Body)
					sizes.Store("status", r.StatusCode)
					sizes.Store("bytes", n)
				}
			}
		}(i)
	}
	wg.Wait()
	st, _ := sizes.Load("status")
	n, _ := sizes.Load("bytes")
	res["answer_status"], res["answer_bytes"] = st, n
}

// scenarioBiglog sends 200 requests with a 1 MiB method name and reports how much the log grew.
func scenarioBiglog(s *server, res result) {
	method := strings.Repeat("a", 1<<20)
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"` + method + `"}`)
	c := &http.Client{}
	for i := 0; i < 200; i++ {
		req, _ := http.NewRequest("POST", "http://"+s.addr+"/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		if r, err := c.Do(req); err == nil {
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
	}
	time.Sleep(200 * time.Millisecond)
	fi, _ := os.Stat(s.log)
	res["requests"], res["log_bytes"] = 200, fi.Size()
}

// scenarioCasevariant sends a request with both "method" and "Method" and reports the answer.
func scenarioCasevariant(s *server, res result) {
	body := `{"jsonrpc":"2.0","id":1,"method":"ping","Method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest("POST", "http://"+s.addr+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "ping")
	r, err := http.DefaultClient.Do(req)
	if err == nil {
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		res["status"], res["answer"] = r.StatusCode, string(b)
	}
}
