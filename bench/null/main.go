// Command null is the ceiling of the stdio benchmarks: an "MCP server"
// that does nothing. It answers every line that carries an id with one
// fixed response and ignores the others (notifications), so what the
// drivers measure against it is the pipe, the client and the process,
// never a parser or a tool. No real server can be faster; bench/report
// gives each server's throughput as a share of this one's.
package main

import (
	"bufio"
	"bytes"
	"os"
)

const answer = `{"jsonrpc":"2.0","id":0,"result":{"content":[{"type":"text","text":"null"}],"isError":false}}` + "\n"

func main() {
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	id := []byte(`"id"`)
	for {
		line, err := in.ReadSlice('\n')
		for err == bufio.ErrBufferFull {
			_, err = in.ReadSlice('\n') // a long line: only its start matters
		}
		if bytes.Contains(line, id) {
			out.WriteString(answer)
		}
		if err != nil {
			out.Flush()
			return
		}
		if in.Buffered() == 0 {
			out.Flush() // nothing more to read now: let the client have the answers
		}
	}
}
