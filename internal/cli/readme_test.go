package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/testkit"
)

// codeBlock is one fenced block of the README or of a page under docs/.
type codeBlock struct {
	lang, text string
	file       string // relative to the repository's root
	line       int
}

// docFiles are the pages whose snippets are checked: the README and the
// pages under docs/ that material moved to from it.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(testkit.Root(), "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md"}
	for _, p := range pages {
		files = append(files, filepath.Join("docs", filepath.Base(p)))
	}
	return files
}

func readmeBlocks(t *testing.T) []codeBlock {
	t.Helper()
	var blocks []codeBlock
	for _, file := range docFiles(t) {
		data, err := os.ReadFile(filepath.Join(testkit.Root(), file))
		if err != nil {
			t.Fatal(err)
		}
		var cur *codeBlock
		for i, l := range strings.Split(string(data), "\n") {
			switch {
			case cur == nil && strings.HasPrefix(l, "```"):
				cur = &codeBlock{lang: strings.TrimPrefix(l, "```"), file: file, line: i + 1}
			case cur != nil && l == "```":
				blocks = append(blocks, *cur)
				cur = nil
			case cur != nil:
				cur.text += l + "\n"
			}
		}
	}
	return blocks
}

// checkArgs fails unless args (after "3gs") name a command, or a verb of a
// command, whose flags include every flag given. It asks the real command
// tree, so cobra's own commands (completion) count too.
func checkArgs(t *testing.T, where string, args []string) {
	t.Helper()
	if len(args) == 0 {
		return
	}
	root := newRoot(context.Background(), &Env{Getenv: func(string) string { return "" }}, new(int))
	c, rest, err := root.Find(args)
	if err == nil && c == root {
		err = fmt.Errorf("no command %q", args[0])
	}
	if err == nil {
		err = c.ParseFlags(rest)
	}
	if err == nil && c.HasSubCommands() && c.Flags().NArg() > 0 {
		err = fmt.Errorf("%s has no verb %q", c.CommandPath(), c.Flags().Arg(0))
	}
	if err != nil {
		t.Errorf("%s: 3gs %s: %v", where, strings.Join(args, " "), err)
	}
}

// Every command line in the README and the docs runs a real 3gs command
// with real flags, and every JSON configuration parses and starts 3gs with
// a real command, flags and environment variables. A line ending in a
// backslash goes on on the next.
func TestReadmeSnippets(t *testing.T) {
	blocks := readmeBlocks(t)
	serve := serveEnv()
	checked := map[string]int{}
	for _, b := range blocks {
		where := b.file + ":" + strconv.Itoa(b.line)
		switch b.lang {
		case "sh":
			for _, line := range strings.Split(strings.ReplaceAll(b.text, "\\\n", " "), "\n") {
				w := testkit.ShellWords(line)
				switch {
				case len(w) > 0 && w[0] == "3gs":
					checkArgs(t, where, w[1:])
					checked["3gs command"]++
				case len(w) > 2 && w[0] == "go" && w[1] == "run" && w[2] == "./cmd/3gs":
					checkArgs(t, where, w[3:])
					checked["go run command"]++
				case len(w) > 0 && w[0] == "claude":
					for i, x := range w {
						if x == "--" && i+1 < len(w) && w[i+1] == "3gs" {
							checkArgs(t, where, w[i+2:])
						}
						if strings.HasPrefix(x, "http://") && !strings.HasSuffix(x, "/mcp") {
							t.Errorf("%s: %s is not the /mcp endpoint", where, x)
						}
					}
					checked["claude command"]++
				}
			}
		case "json":
			var cfg struct {
				MCPServers map[string]hostServer `json:"mcpServers"`
				Servers    map[string]hostServer `json:"servers"`
			}
			if err := json.Unmarshal([]byte(b.text), &cfg); err != nil {
				t.Errorf("%s: the JSON does not parse: %v", where, err)
				continue
			}
			for _, m := range []map[string]hostServer{cfg.MCPServers, cfg.Servers} {
				for name, s := range m {
					checked["json server"]++
					switch {
					case s.Command != "":
						if s.Command != "3gs" {
							t.Errorf("%s: %s runs %q", where, name, s.Command)
						}
						checkArgs(t, where, s.Args)
					case !strings.HasSuffix(s.URL, "/mcp"):
						t.Errorf("%s: %s has neither a command nor the /mcp URL", where, name)
					}
					if s.Type != "" && s.Type != "stdio" && s.Type != "http" {
						t.Errorf("%s: type %q", where, s.Type)
					}
					for k := range s.Env {
						if _, ok := serve[k]; !ok {
							t.Errorf("%s: %s is not an environment variable 3gs reads", where, k)
						}
					}
					if h := s.Headers["Authorization"]; h != "" && !strings.HasPrefix(h, "Bearer ") {
						t.Errorf("%s: Authorization %q is not a bearer token", where, h)
					}
				}
			}
		}
	}
	for _, kind := range []string{"3gs command", "go run command", "claude command", "json server"} {
		if checked[kind] == 0 {
			t.Errorf("no %s found in the README and docs", kind)
		}
	}
	t.Logf("checked %v", checked)
}

// hostServer is one server entry of an MCP host's configuration.
type hostServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}
