package linkcheck

import (
	"fmt"
	"testing"

	"github.com/three-good-sources/3gs/internal/fetch"
)

// Fifty hosts that could not be resolved and one that answered (a source
// on the local network while DNS is down) is a network that is down, not
// fifty sources gone; hosts the address policy refused are not counted
// either way.
func TestNetworkDownDespiteOneAnswer(t *testing.T) {
	var res []Result
	for i := range 50 {
		res = append(res, Result{Target: Target{URL: fmt.Sprintf("https://h%d.example/", i)}, Status: Error, NoNetwork: true})
	}
	res = append(res, Result{Target: Target{URL: "http://192.168.1.5/"}, Status: OK, HTTPStatus: 200})
	if o, down := NetworkDown(res); !down || o.Hosts != 51 || o.Failed != 50 || o.Answered != 1 {
		t.Errorf("50 of 51 hosts unresolved: %+v, down %v; want down", o, down)
	}
	// Three failing hosts and ten refused by the policy: the refused ones
	// say nothing of the network.
	var few []Result
	for i := range 3 {
		few = append(few, Result{Target: Target{URL: fmt.Sprintf("https://f%d.example/", i)}, Status: Error, NoNetwork: true})
	}
	for i := range 10 {
		few = append(few, Result{Target: Target{URL: fmt.Sprintf("http://10.0.0.%d/", i)}, Status: Error, Reason: fetch.RefusedAddress})
	}
	if o, down := NetworkDown(few); !down || o.Hosts != 3 {
		t.Errorf("3 unresolved and 10 refused: %+v, down %v; want down over 3 hosts", o, down)
	}
}
