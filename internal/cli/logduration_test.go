package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The JSON log wrote durations in nanoseconds ("refresh":300000000000);
// both formats now write them as the flags take them, "5m0s", in a group
// too.
func TestLogDurationsAsText(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		var b bytes.Buffer
		log, err := newLogger(&b, format, "info")
		if err != nil {
			t.Fatal(err)
		}
		log.Info("following endorsed curators", "refresh", 5*time.Minute, "took", 1500*time.Millisecond)
		log.WithGroup("peer").Info("retry", "retry_in", 90*time.Second)
		got := b.String()
		if format == "json" {
			for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
				var m map[string]any
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatalf("%s: %v", line, err)
				}
			}
			for _, want := range []string{`"refresh":"5m0s"`, `"took":"1.5s"`, `"retry_in":"1m30s"`} {
				if !strings.Contains(got, want) {
					t.Errorf("json log lacks %s:\n%s", want, got)
				}
			}
			continue
		}
		for _, want := range []string{"refresh=5m0s", "took=1.5s", "peer.retry_in=1m30s"} {
			if !strings.Contains(got, want) {
				t.Errorf("text log lacks %s:\n%s", want, got)
			}
		}
	}
}
