package words

import "testing"

// TestTable checks that a table has the length asked for, starts zeroed
// and keeps what is written to it, for each element size the package uses.
func TestTable(t *testing.T) {
	if got := table[uint32](0); len(got) != 0 {
		t.Errorf("table(0) has %d values", len(got))
	}
	u := table[uint32](5000)
	f := table[float32](3)
	b := table[uint8](70000)
	if len(u) != 5000 || len(f) != 3 || len(b) != 70000 {
		t.Fatalf("lengths %d, %d, %d; want 5000, 3, 70000", len(u), len(f), len(b))
	}
	for i := range u {
		if u[i] != 0 {
			t.Fatalf("u[%d] = %d before any write", i, u[i])
		}
		u[i] = uint32(i) * 7
	}
	for i := range b {
		b[i] = uint8(i)
	}
	f[2] = 1.5
	for i := range u {
		if u[i] != uint32(i)*7 {
			t.Fatalf("u[%d] = %d, want %d", i, u[i], i*7)
		}
	}
	if b[69999] != uint8(69999%256) || f[2] != 1.5 || f[0] != 0 {
		t.Errorf("b[69999] = %d, f = %v", b[69999], f)
	}
}
