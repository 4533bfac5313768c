package wechat

import (
	"io"

	"orderflow/internal/infra/pay"
)

// What the tests (package wechat_test, which may import the refund package
// whose numbers the bill's 商户退款单号 is held to) read of the insides.
var OurRefundNo = ourRefundNo.MatchString

// ReadBill reads a bill file as Statement does, for merchant mchID.
func ReadBill(mchID string, r io.Reader, emit func(pay.StatementLine) error) error {
	p := &Provider{cfg: Config{MchID: mchID}}
	return p.readBill(r, emit)
}
