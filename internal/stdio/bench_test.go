package stdio

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/three-good-sources/3gs/internal/evalset"

	"github.com/three-good-sources/3gs/internal/testserver"

	"github.com/three-good-sources/3gs/internal/testkit"
)

// BenchmarkServePipelined drives Serve through OS pipes with 64 requests in
// flight, like the stdio load benchmark in bench/ but in one process, so a
// CPU profile shows the transport's own cost. mix-v1 cycles through the
// benchmark mix (evalset.MixV1) on its registry: the per-request figures
// the transport's devices are judged on.
func BenchmarkServePipelined(b *testing.B) {
	data, err := os.ReadFile(testkit.SharedRegistry(b))
	if err != nil {
		b.Fatal(err)
	}
	mix := evalset.MixV1("../..")
	questions, err := mix.Questions()
	if err != nil {
		b.Fatal(err)
	}
	var mixArgs []string // the questions as JSON strings, made before timing
	for _, q := range questions {
		j, _ := json.Marshal(q)
		mixArgs = append(mixArgs, string(j))
	}
	mixData, err := os.ReadFile(mix.Registry)
	if err != nil {
		b.Fatal(err)
	}
	for _, method := range []string{"tools/list", "get_sources", "mix-v1"} {
		srv := testserver.New(b, testserver.Options{Registry: data})
		if method == "mix-v1" {
			srv = testserver.New(b, testserver.Options{Registry: mixData})
		}
		b.Run(method, func(b *testing.B) {
			inR, inW, _ := os.Pipe()
			outR, outW, _ := os.Pipe()
			done := make(chan struct{})
			go func() {
				Serve(context.Background(), srv.NewSession(), inR, outW, Options{})
				outW.Close()
				close(done)
			}()
			w := bufio.NewWriter(inW)
			r := bufio.NewReaderSize(outR, 1<<20)
			fmt.Fprintln(w, initLine)
			w.Flush()
			r.ReadSlice('\n')
			tokens := make(chan struct{}, 64)
			readDone := make(chan struct{})
			n := b.N
			go func() {
				for range n {
					if _, err := r.ReadSlice('\n'); err != nil && err != bufio.ErrBufferFull {
						panic(err)
					}
					<-tokens
				}
				close(readDone)
			}()
			b.ResetTimer()
			for i := range n {
				tokens <- struct{}{}
				switch method {
				case "tools/list":
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`+"\n", i)
				case "mix-v1":
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_sources","arguments":{"query":%s}}}`+"\n", i, mixArgs[i%len(mixArgs)])
				default:
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_sources","arguments":{"query":"how do I run a bitcoin full node"}}}`+"\n", i)
				}
				if len(tokens) == cap(tokens) || i == n-1 {
					w.Flush()
				}
			}
			<-readDone
			b.StopTimer()
			inW.Close()
			<-done
			inR.Close()
			outR.Close()
		})
	}
}
