package alipay

import "testing"

// Cents and yuan convert exactly both ways, and anything that is not a
// plain yuan amount is refused rather than rounded.
func TestAmounts(t *testing.T) {
	for _, c := range []int64{0, 1, 9, 10, 99, 100, 101, 1234, 100000000000} {
		got, err := Cents(Yuan(c))
		if err != nil || got != c {
			t.Errorf("Cents(Yuan(%d)) = %d, %v (Yuan %q)", c, got, err, Yuan(c))
		}
	}
	for in, want := range map[string]int64{"12.34": 1234, "12.3": 1230, "12": 1200, "0.01": 1} {
		if got, err := Cents(in); err != nil || got != want {
			t.Errorf("Cents(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1.00", "1.001", "1e3", "01.00", " 1.00", "1.", ".5", "0x10"} {
		if got, err := Cents(bad); err == nil {
			t.Errorf("Cents(%q) = %d, want an error", bad, got)
		}
	}
}
