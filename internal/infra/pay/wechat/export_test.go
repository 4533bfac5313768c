package wechat

import (
	"io"

	"orderflow/internal/infra/pay"
)

// ReadBill reads a bill file as Statement does, for merchant mchID.
func ReadBill(mchID string, r io.Reader, emit func(pay.StatementLine) error) error {
	p := &Provider{cfg: Config{MchID: mchID}}
	return p.readBill(r, emit)
}
