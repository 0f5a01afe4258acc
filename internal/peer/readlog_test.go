package peer

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// ReadLog reads a registry document's log whole, from beside it; what it
// reads is bounded by the fetcher's MaxBytes.
func TestReadLogBesideADocument(t *testing.T) {
	const log = "{\"seq\":1}\n{\"seq\":2}\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/reg.json.audit.jsonl" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, log)
	}))
	defer srv.Close()
	f := NewFetcher(1<<20, 10*time.Second).AsOperator(true)
	r, err := f.ReadLog(context.Background(), srv.URL+"/reg.json", 2)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || string(got) != log {
		t.Fatalf("read %q, %v; want the whole log", got, err)
	}
	small := NewFetcher(8, 10*time.Second).AsOperator(true)
	r, err = small.ReadLog(context.Background(), srv.URL+"/reg.json", 2)
	if err == nil {
		_, err = io.ReadAll(r)
		r.Close()
	}
	if err == nil {
		t.Error("a log over MaxBytes was read")
	}
}
