package alipay

import (
	"fmt"
	"regexp"
	"strconv"
)

// Yuan writes cents as Alipay's amount: yuan with exactly two decimals
// ("12.34"), computed in integers (no float ever holds money).
func Yuan(cents int64) string {
	return fmt.Sprintf("%d.%02d", cents/100, cents%100)
}

var yuanRE = regexp.MustCompile(`^(0|[1-9][0-9]{0,11})(?:\.([0-9]{1,2}))?$`)

// Cents reads Alipay's yuan amount ("12.34", "12.3", "12") exactly; anything
// else (a sign, more decimals, an exponent) is an error.
func Cents(yuan string) (int64, error) {
	m := yuanRE.FindStringSubmatch(yuan)
	if m == nil {
		return 0, fmt.Errorf("alipay: amount %q is not a yuan amount", yuan)
	}
	whole, _ := strconv.ParseInt(m[1], 10, 64)
	frac := int64(0)
	if m[2] != "" {
		f := m[2]
		if len(f) == 1 {
			f += "0"
		}
		frac, _ = strconv.ParseInt(f, 10, 64)
	}
	return whole*100 + frac, nil
}
