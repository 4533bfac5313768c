package wechat

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"orderflow/internal/infra/pay"
)

// The trade bill's columns the provider reads, found by their header name
// (WeChat Pay adds columns now and then; their order is not relied on).
const (
	colTime         = "交易时间"
	colMchID        = "商户号"
	colTradeNo      = "微信订单号" // transaction_id, Paid.TradeNo
	colOrderNo      = "商户订单号" // out_trade_no, the order number
	colState        = "交易状态"  // SUCCESS: a payment; REFUND: a refund
	colSettle       = "应结订单金额"
	colRefundID     = "微信退款单号" // refund_id
	colRefundNo     = "商户退款单号" // out_refund_no
	colRefund       = "退款金额"
	colCouponRefund = "充值券退款金额"
	colFee          = "手续费"
	colTotal        = "订单金额" // amount.total, Paid.AmountCents
	colAskedRefund  = "申请退款金额"
)

// billTimeLayout is 交易时间's layout, Beijing time. 交易时间 is a line's
// At for both kinds: a payment's success time, and for a refund line the
// refund's time (the ALL bill has no column of its own for it; the fake
// writes the refund's success time there).
const billTimeLayout = "2006-01-02 15:04:05"

// summaryCount heads the summary: its row counts the bill's lines.
const summaryCount = "总交易单数"

// summaryOf names, for each summary column, the line column it totals.
var summaryOf = map[string]string{
	"应结订单总金额":  colSettle,
	"退款总金额":    colRefund,
	"充值券退款总金额": colCouponRefund,
	"手续费总金额":   colFee,
	"订单总金额":    colTotal,
	"申请退款总金额":  colAskedRefund,
}

// readBill reads a trade bill file row by row, handing each line to emit
// (nil: only check), and checks the summary against the lines: a count or
// a total that differs is an error, as a bad hash is.
func (p *Provider) readBill(r io.Reader, emit func(pay.StatementLine) error) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // the summary rows are shorter than the lines
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return fmt.Errorf("bill header: %w", err)
	}
	cols := make(map[string]int, len(header))
	for i, h := range header {
		cols[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	for _, c := range []string{colTime, colTradeNo, colOrderNo, colState, colRefundID, colRefundNo, colRefund, colFee, colTotal} {
		if _, ok := cols[c]; !ok {
			return fmt.Errorf("bill header has no %s column", c)
		}
	}
	sums := map[string]int64{} // line column → total, in 1e-5 yuan
	var count int64
	for row := 2; ; row++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return errors.New("bill ends without its summary (" + summaryCount + ")")
		}
		if err != nil {
			return fmt.Errorf("bill row %d: %w", row, err)
		}
		if cell(rec, 0) == summaryCount {
			return p.checkSummary(cr, rec, count, sums)
		}
		count++
		line, err := p.billLine(rec, cols, sums)
		if err != nil {
			return fmt.Errorf("bill row %d: %w", row, err)
		}
		if emit != nil {
			if err := emit(line); err != nil {
				return err
			}
		}
	}
}

// billLine maps one row and adds its amounts to sums.
func (p *Provider) billLine(rec []string, cols map[string]int, sums map[string]int64) (pay.StatementLine, error) {
	get := func(col string) string {
		if i, ok := cols[col]; ok {
			return cell(rec, i)
		}
		return ""
	}
	units := map[string]int64{}
	for _, col := range summaryOf {
		if _, ok := cols[col]; !ok {
			continue
		}
		u, err := yuanUnits(get(col))
		if err != nil {
			return pay.StatementLine{}, fmt.Errorf("%s: %w", col, err)
		}
		units[col] = u
		sums[col] += u
	}
	if m := get(colMchID); m != "" && m != p.cfg.MchID {
		return pay.StatementLine{}, fmt.Errorf("a line of merchant %s, not %s", m, p.cfg.MchID)
	}
	at, err := time.ParseInLocation(billTimeLayout, get(colTime), shanghai)
	if err != nil {
		return pay.StatementLine{}, fmt.Errorf("%s %q is not %s", colTime, get(colTime), billTimeLayout)
	}
	l := pay.StatementLine{TradeNo: get(colTradeNo), OrderNo: get(colOrderNo), FeeCents: fenOf(units[colFee]), At: at}
	var amount int64
	switch state := get(colState); state {
	case "SUCCESS":
		l.Kind, l.Ref, amount = pay.LinePayment, l.TradeNo, units[colTotal]
	case "REFUND":
		// 商户退款单号 as is: whether orderflow sent it is the ledger's to
		// say (a merchant-platform refund's is one WeChat Pay made up).
		l.Kind, l.Ref, l.RefundNo, amount = pay.LineRefund, get(colRefundID), get(colRefundNo), units[colRefund]
	default:
		return pay.StatementLine{}, fmt.Errorf("%s %q is neither SUCCESS nor REFUND", colState, state)
	}
	if l.TradeNo == "" {
		return pay.StatementLine{}, fmt.Errorf("a %s line without %s", l.Kind, colTradeNo)
	}
	if l.Ref == "" {
		return pay.StatementLine{}, fmt.Errorf("a refund line without %s", colRefundID)
	}
	if amount <= 0 || amount%1000 != 0 {
		return pay.StatementLine{}, fmt.Errorf("%s %s: amount is not a positive number of fen", l.Kind, l.Ref)
	}
	l.AmountCents = amount / 1000
	return l, nil
}

// checkSummary reads the summary row under head and compares it with what
// the lines added up to; nothing but blank lines may follow it.
func (p *Provider) checkSummary(cr *csv.Reader, head []string, count int64, sums map[string]int64) error {
	names := make([]string, len(head))
	for i := range head {
		names[i] = cell(head, i)
	}
	vals, err := cr.Read()
	if err != nil {
		return fmt.Errorf("bill summary row: %w", err)
	}
	for i, name := range names {
		v := cell(vals, i)
		if name == summaryCount {
			if v != fmt.Sprint(count) {
				return fmt.Errorf("bill summary says %s lines, the bill has %d", v, count)
			}
			continue
		}
		col, ok := summaryOf[name]
		if !ok {
			continue
		}
		total, err := yuanUnits(v)
		if err != nil {
			return fmt.Errorf("bill summary %s: %w", name, err)
		}
		// The fee of a line has five decimals and its total may be rounded
		// to the fen; every other total is exact.
		if diff := total - sums[col]; diff != 0 && (col != colFee || diff >= 1000 || diff <= -1000) {
			return fmt.Errorf("bill summary %s is %s, its lines add up to %s", name, v, yuanText(sums[col]))
		}
	}
	if _, err := cr.Read(); !errors.Is(err, io.EOF) {
		return errors.New("rows after the bill summary")
	}
	return nil
}

// cell is rec[i] without the backtick WeChat Pay puts before every value
// (so spreadsheets keep long numbers as text); "" past the row's end.
func cell(rec []string, i int) string {
	if i >= len(rec) {
		return ""
	}
	return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rec[i]), "`"))
}

// yuanUnits reads a yuan amount ("0.01", "-0.00060", "12") exactly, in
// units of 1e-5 yuan (a fee has five decimals); "" is zero.
func yuanUnits(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	neg := strings.HasPrefix(s, "-")
	whole, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	frac = strings.TrimRight(frac, "0")
	if whole == "" || len(whole) > 12 || len(frac) > 5 || !digits(whole) || !digits(frac) {
		return 0, fmt.Errorf("%q is not an amount in yuan", s)
	}
	var u int64
	for _, c := range whole + frac + strings.Repeat("0", 5-len(frac)) {
		u = u*10 + int64(c-'0')
	}
	if neg {
		u = -u
	}
	return u, nil
}

// yuanText writes 1e-5 yuan units as yuan, for a message.
func yuanText(u int64) string {
	sign := ""
	if u < 0 {
		sign, u = "-", -u
	}
	return fmt.Sprintf("%s%d.%05d", sign, u/100000, u%100000)
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// fenOf rounds 1e-5 yuan units to fen, halves away from zero.
func fenOf(u int64) int64 {
	if u < 0 {
		return -fenOf(-u)
	}
	return (u + 500) / 1000
}
