package inflight

import (
	"context"
	"errors"
	"testing"
)

func TestCancelByID(t *testing.T) {
	var rs Requests
	a := rs.Start(context.Background(), []byte(`"a"`))
	b := rs.Start(context.Background(), []byte(`1`))
	rs.Cancel([]byte(`"b"`)) // unknown: ignored
	if a.Context().Err() != nil || b.Context().Err() != nil {
		t.Fatal("an unknown id cancelled a request")
	}
	rs.Cancelled([]byte(`{"requestId":1,"reason":"user"}`))
	if !errors.Is(b.Context().Err(), context.Canceled) {
		t.Error("notifications/cancelled for 1 did not cancel request 1")
	}
	select {
	case <-b.Context().Done():
	default:
		t.Error("request 1's Done is open after its cancellation")
	}
	if a.Context().Err() != nil {
		t.Error("cancelling 1 cancelled \"a\"")
	}
	if rs.Len() != 2 {
		t.Errorf("Len = %d, want 2: a cancelled request runs until it finishes", rs.Len())
	}
	rs.Finish(b)
	rs.Finish(a)
	if rs.Len() != 0 {
		t.Errorf("Len = %d after both finished", rs.Len())
	}
	if a.Context().Err() == nil {
		t.Error("a finished request's context is still live")
	}
}

func TestCancelledIgnoresBadParams(t *testing.T) {
	var rs Requests
	r := rs.Start(context.Background(), []byte(`7`))
	for _, p := range []string{``, `{}`, `{"requestId":null}`, `[7]`, `{"requestId":8}`, `not json`} {
		rs.Cancelled([]byte(p))
	}
	rs.Cancelled(nil)
	if r.Context().Err() != nil {
		t.Error("params that name no running request cancelled one")
	}
}

func TestCancelAllAndParent(t *testing.T) {
	var rs Requests
	parent, stop := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	a := rs.Start(parent, []byte(`1`))
	b := rs.Start(context.Background(), []byte(`2`))
	if a.Context().Value(key{}) != "v" {
		t.Error("the request's context lost its parent's values")
	}
	stop()
	if a.Context().Err() == nil {
		t.Error("the parent's end did not end the request")
	}
	if b.Context().Err() != nil {
		t.Error("another parent's end ended b")
	}
	rs.CancelAll()
	if b.Context().Err() == nil {
		t.Error("CancelAll left b running")
	}
}

type key struct{}

// BenchmarkStart is the cancellation bookkeeping of one request, on a
// parent that can itself be cancelled (as an HTTP request's is), the
// handler asking for Done as a tool call's fetches do: Start, Done,
// Finish.
func BenchmarkStart(b *testing.B) {
	var rs Requests
	parent, stop := context.WithCancel(context.Background())
	defer stop()
	id := []byte(`12`)
	b.ReportAllocs()
	for b.Loop() {
		r := rs.Start(parent, id)
		_ = r.Context().Done()
		rs.Finish(r)
	}
}
