// Command proposalflood reproduces the community-write floods of issue 44
// against a running 3gs on loopback, the same way for any build, so a
// change can be judged before and after (rows 1 and 2):
//
//	3gs serve --http 127.0.0.1:8441 --registry R --key-file K --tokens T &
//	cd bench && go run ./proposalflood -url http://127.0.0.1:8441/mcp \
//	    -token ADMIN -file R.proposals.jsonl -pid PID [-bulk]
//
// Row 1: -n client addresses × -k proposals near the largest the tools
// take, then the curator rejects every pending one (one reject_proposal
// call with -bulk, one call per proposal without, as older builds need),
// -rounds times, each round from new addresses. It prints the file's size
// and the server's RSS (now and peak, from /proc) after each step. With
// -fill it stops after the first fill, leaving a full file to time a
// restart on.
//
// Row 2: -invalid N sends one invalid proposal from each of N addresses,
// then a valid one (-slug names a category) from a fresh address.
//
// Every client address is in 127.0.0.0/8: the clients bind one as their
// local address, so the server sees many clients without leaving
// loopback.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

var (
	mcpURL  = flag.String("url", "", "the server's /mcp URL, on loopback")
	token   = flag.String("token", "", "an admin token, to reject proposals")
	file    = flag.String("file", "", "the server's proposals file, to report its size")
	pid     = flag.Int("pid", 0, "the server's process id, to report its RSS")
	clients = flag.Int("n", 100, "client addresses per round")
	each    = flag.Int("k", 10, "proposals per client address")
	rounds  = flag.Int("rounds", 3, "fill and reject rounds")
	block   = flag.Int("block", 10, "second octet of the first round's addresses (127.B.x.y)")
	bulk    = flag.Bool("bulk", false, "reject with one reject_proposal all_pending call")
	fill    = flag.Bool("fill", false, "fill once and stop")
	invalid = flag.Int("invalid", 0, "row 2: invalid proposals from this many addresses, then a valid one")
	slug    = flag.String("slug", "", "row 2: a category of the registry, for the valid proposal")
)

func main() {
	flag.Parse()
	if *mcpURL == "" {
		fmt.Fprintln(os.Stderr, "proposalflood: give the server's /mcp URL with -url")
		os.Exit(2)
	}
	if *invalid > 0 {
		invalidFlood()
		return
	}
	for round := range *rounds {
		recorded, refused := flood(round)
		fmt.Printf("round %d fill: %d recorded, refused %v; %s\n", round+1, recorded, refused, status())
		if *fill {
			return
		}
		start := time.Now()
		n := rejectAll()
		fmt.Printf("round %d reject: %d rejected in %s; %s\n", round+1, n, time.Since(start).Round(time.Millisecond), status())
	}
}

// from is a client whose connections come from the loopback address ip.
func from(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}}}
}

// answer is what a tools/call returned: its text, whether it is an error,
// and its structured content.
type answer struct {
	text       string
	isError    bool
	structured map[string]any
}

// call calls tool over the stateless transport (protocol 2026-07-28).
func call(c *http.Client, tool string, args any, auth string) (answer, error) {
	meta := map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{}, "io.modelcontextprotocol/clientInfo": map[string]any{"name": "proposalflood", "version": "1"}}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args, "_meta": meta}})
	req, err := http.NewRequest(http.MethodPost, *mcpURL, bytes.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool} {
		req.Header.Set(k, v)
	}
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	resp, err := c.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var msg struct {
		Result *struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			Structured map[string]any `json:"structuredContent"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &msg); err != nil {
		return answer{}, fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, data)
	}
	if msg.Result == nil {
		if msg.Error != nil {
			return answer{text: msg.Error.Message, isError: true}, nil
		}
		return answer{}, fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, data)
	}
	a := answer{isError: msg.Result.IsError, structured: msg.Result.Structured}
	if len(msg.Result.Content) > 0 {
		a.text = msg.Result.Content[0].Text
	}
	return a, nil
}

// large is an add_category near the largest the tools take: every string
// at its length bound, in three-byte characters, about 110 KB a line.
func large(n int) map[string]any {
	var patterns []string
	for j := range 64 {
		s := fmt.Sprintf("sqlite %d %d ", n, j)
		patterns = append(patterns, s+strings.Repeat("数据库教程", (500-len(s))/5))
	}
	source := func(rank int, url, kind string) map[string]any {
		return map[string]any{"rank": rank, "name": strings.Repeat("数", 200), "url": url, "type": kind, "why": strings.Repeat("据", 500)}
	}
	return map[string]any{"action": "add_category", "slug": "sqlite-learning", "reason": strings.Repeat("库", 1000), "contact": strings.Repeat("教", 200),
		"category": map[string]any{"name": strings.Repeat("数", 200), "description": strings.Repeat("数据库", 666), "query_patterns": patterns,
			"sources": []map[string]any{source(1, "https://sqlite.org/docs.html", "documentation"), source(2, "https://www.sqlitetutorial.net/", "tutorial"), source(3, "https://sqlite.org/forum/", "forum")}}}
}

// flood sends -k large proposals from each of -n addresses, 8 at a time,
// and counts what was recorded and, by the start of their text, what
// was refused.
func flood(round int) (int, map[string]int) {
	var mu sync.Mutex
	recorded, refused := 0, map[string]int{}
	var wg sync.WaitGroup
	slots := make(chan struct{}, 8)
	for a := range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := from(fmt.Sprintf("127.%d.%d.%d", *block+round, a/250, a%250+1))
			for i := range *each {
				slots <- struct{}{}
				ans, err := call(c, "propose_change", large(a*100+i), "")
				<-slots
				mu.Lock()
				switch {
				case err != nil:
					refused[short(err.Error())]++
				case ans.isError:
					refused[short(ans.text)]++
				default:
					recorded++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return recorded, refused
}

// rejectAll rejects every pending proposal as the curator, and returns
// how many.
func rejectAll() int {
	admin := &http.Client{Timeout: 10 * time.Minute}
	if *bulk {
		ans, err := call(admin, "reject_proposal", map[string]any{"all_pending": true, "reason": "a flood"}, *token)
		if err != nil || ans.isError {
			fmt.Println("reject_proposal:", err, ans.text)
			return 0
		}
		n, _ := ans.structured["count"].(float64)
		return int(n)
	}
	n := 0
	for {
		ans, err := call(admin, "list_proposals", map[string]any{"status": "pending", "limit": 50}, *token)
		if err != nil || ans.isError {
			fmt.Println("list_proposals:", err, ans.text)
			return n
		}
		page, _ := ans.structured["proposals"].([]any)
		if len(page) == 0 {
			return n
		}
		for _, p := range page {
			id, _ := p.(map[string]any)["id"].(string)
			if ans, err := call(admin, "reject_proposal", map[string]any{"id": id, "reason": "a flood"}, *token); err == nil && !ans.isError {
				n++
			}
		}
	}
}

// invalidFlood is row 2.
func invalidFlood() {
	var mu sync.Mutex
	answers := map[string]int{}
	var wg sync.WaitGroup
	slots := make(chan struct{}, 16)
	for a := range *invalid {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			c := from(fmt.Sprintf("127.%d.%d.%d", 100+a/62500, a/250%250, a%250+1))
			defer c.CloseIdleConnections()
			ans, err := call(c, "propose_change", map[string]any{"action": "report_dead_source", "slug": "no-such-category", "rank": 1, "reason": "It answers 404."}, "")
			text := ans.text
			if err != nil {
				text = err.Error()
			}
			mu.Lock()
			answers[short(text)]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	fmt.Printf("%d invalid proposals: %v; %s\n", *invalid, answers, status())
	ans, err := call(from("127.200.0.1"), "propose_change", map[string]any{"action": "report_dead_source", "slug": *slug, "rank": 1, "reason": "It answers 404."}, "")
	fmt.Printf("a fresh client's valid proposal: %v %s\n", err, ans.text)
}

func short(s string) string { return s[:min(70, len(s))] }

// status is the proposals file's size and the server's RSS, now and at
// its peak.
func status() string {
	var size int64
	if st, err := os.Stat(*file); err == nil {
		size = st.Size()
	}
	proc, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", *pid))
	var rss, peak string
	for _, l := range strings.Split(string(proc), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			rss = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			peak = strings.TrimSpace(v)
		}
	}
	return fmt.Sprintf("file %.1f MB, RSS %s, peak %s", float64(size)/1e6, rss, peak)
}
