package stdio

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/three-good-sources/3gs/internal/testserver"

	"github.com/three-good-sources/3gs/internal/testkit"
)

// BenchmarkServePipelined drives Serve through OS pipes with 64 requests in
// flight, like the stdio load benchmark in bench/ but in one process, so a
// CPU profile shows the transport's own cost.
func BenchmarkServePipelined(b *testing.B) {
	data, err := os.ReadFile(testkit.SharedRegistry(b))
	if err != nil {
		b.Fatal(err)
	}
	srv := testserver.New(b, testserver.Options{Registry: data})
	for _, method := range []string{"tools/list", "get_sources"} {
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
				if method == "tools/list" {
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`+"\n", i)
				} else {
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
