package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// cdp drives Chromium over the DevTools protocol on a pipe
// (--remote-debugging-pipe: it reads commands on fd 3 and writes on fd 4,
// each message a JSON text ended by a NUL byte), so no port is opened.
type cdp struct {
	t      *testing.T
	cmd    *exec.Cmd
	w      io.WriteCloser
	mu     sync.Mutex
	nextID int
	wait   map[int]chan cdpMessage
	events chan cdpMessage
}

type cdpMessage struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// startCDP starts Chromium (b's flags, loopback only) under the protocol.
func (b *browser) startCDP(ctx context.Context) *cdp {
	b.t.Helper()
	toBrowser, ourEnd, err := os.Pipe()
	if err != nil {
		b.t.Fatal(err)
	}
	fromBrowser, theirEnd, err := os.Pipe()
	if err != nil {
		b.t.Fatal(err)
	}
	args := append(b.flags(), "--remote-debugging-pipe", "about:blank")
	cmd := exec.CommandContext(ctx, b.bin, args...)
	cmd.ExtraFiles = []*os.File{toBrowser, theirEnd} // fd 3, fd 4
	if err := cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	toBrowser.Close()
	theirEnd.Close()
	c := &cdp{t: b.t, cmd: cmd, w: ourEnd, wait: map[int]chan cdpMessage{}, events: make(chan cdpMessage, 1024)}
	b.t.Cleanup(func() { ourEnd.Close(); cmd.Process.Kill(); cmd.Wait() })
	go func() {
		r := bufio.NewReader(fromBrowser)
		for {
			line, err := r.ReadBytes(0)
			if err != nil {
				close(c.events)
				return
			}
			var m cdpMessage
			if json.Unmarshal(line[:len(line)-1], &m) != nil {
				continue
			}
			if m.ID != 0 {
				c.mu.Lock()
				ch := c.wait[m.ID]
				delete(c.wait, m.ID)
				c.mu.Unlock()
				if ch != nil {
					ch <- m
				}
				continue
			}
			select {
			case c.events <- m:
			default: // nobody reads that many events; drop
			}
		}
	}()
	return c
}

// call sends method with params (in session, when not "") and decodes
// its result into out.
func (c *cdp) call(session, method string, params, out any) {
	c.t.Helper()
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan cdpMessage, 1)
	c.wait[id] = ch
	c.mu.Unlock()
	p, _ := json.Marshal(params)
	msg, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": json.RawMessage(p), "sessionId": session})
	if session == "" {
		msg, _ = json.Marshal(map[string]any{"id": id, "method": method, "params": json.RawMessage(p)})
	}
	if _, err := c.w.Write(append(msg, 0)); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			c.t.Fatalf("%s: %s", method, m.Error.Message)
		}
		if out != nil {
			if err := json.Unmarshal(m.Result, out); err != nil {
				c.t.Fatalf("%s: %v in %s", method, err, m.Result)
			}
		}
	case <-time.After(60 * time.Second):
		c.t.Fatalf("%s: no answer within a minute", method)
	}
}

// evaluate runs expression in the page (awaiting a promise) and decodes
// its value into out.
func (c *cdp) evaluate(session, expression string, out any) {
	c.t.Helper()
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception *struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	c.call(session, "Runtime.evaluate", map[string]any{"expression": expression, "awaitPromise": true, "returnByValue": true}, &r)
	if e := r.ExceptionDetails; e != nil {
		desc := e.Text
		if e.Exception != nil {
			desc += " " + e.Exception.Description
		}
		c.t.Fatalf("evaluating %.60q: %s", expression, desc)
	}
	if err := json.Unmarshal(r.Result.Value, out); err != nil {
		c.t.Fatalf("evaluating %.60q: %v in %s", expression, err, r.Result.Value)
	}
}

// page opens a tab of width × height (a phone's when mobile) and returns
// its session.
func (c *cdp) page(width, height int, mobile bool) string {
	c.t.Helper()
	var target struct {
		TargetID string `json:"targetId"`
	}
	c.call("", "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	c.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached)
	s := attached.SessionID
	c.call(s, "Page.enable", nil, nil)
	c.call(s, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}, nil)
	return s
}

// navigate loads url in session s and waits for its load event.
func (c *cdp) navigate(s, url string) {
	c.t.Helper()
	c.call(s, "Page.navigate", map[string]any{"url": url}, nil)
	deadline := time.After(60 * time.Second)
	for {
		select {
		case m, ok := <-c.events:
			if !ok {
				c.t.Fatalf("the browser exited while loading %s", url)
			}
			if m.SessionID == s && m.Method == "Page.loadEventFired" {
				return
			}
		case <-deadline:
			c.t.Fatalf("%s did not load within a minute", url)
		}
	}
}

func (c *cdp) String() string { return fmt.Sprintf("chromium pid %d", c.cmd.Process.Pid) }
