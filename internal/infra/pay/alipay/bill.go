package alipay

import (
	"archive/zip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"orderflow/internal/infra/pay"

	"golang.org/x/text/encoding/simplifiedchinese"
)

// The detail file's columns this package reads, found by header name: the
// bill has 25 and Alipay has added some over the years.
const (
	colTradeNo   = "支付宝交易号"
	colOrderNo   = "商户订单号"
	colType      = "业务类型"
	colCreated   = "创建时间"
	colFinished  = "完成时间"
	colAmount    = "订单金额（元）"
	colRequestNo = "退款批次号/请求号"
	colFee       = "服务费（元）"
)

// Business types (业务类型) of the detail's rows.
const (
	typePayment = "交易"
	typeRefund  = "退款"
)

// footerCount reads the footer's "#交易合计：N笔，…" and "#退款合计：N笔，…".
var footerCount = regexp.MustCompile(`^#(交易|退款)合计：([0-9]+)笔`)

// startDate reads the header comment "#起始日期：[2006年01月02日 00:00:00] …".
var startDate = regexp.MustCompile(`起始日期：\[([0-9]{4})年([0-9]{2})月([0-9]{2})日`)

// readDetail reads the detail CSV of f (GBK) row by row and hands each
// line to emit, checking on the way what the file says of itself: the day
// it covers, its column header, its end marker and the footer's counts of
// payments and refunds; and, at its end, the zip's CRC-32 of the entry.
func readDetail(f *zip.File, day time.Time, emit func(pay.StatementLine) error) error {
	rc, err := f.Open()
	if err != nil {
		return fmt.Errorf("open the detail file: %w", err)
	}
	defer rc.Close()
	r := csv.NewReader(simplifiedchinese.GBK.NewDecoder().Reader(rc))
	r.FieldsPerRecord = -1 // comment lines are one field, rows 25
	r.LazyQuotes = true
	r.ReuseRecord = true
	var (
		cols          map[string]int
		ended         bool
		counted, said = map[string]int{}, map[string]int{}
	)
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read the detail file: %w", err)
		}
		if strings.HasPrefix(rec[0], "#") {
			line := strings.Join(rec, ",")
			if m := startDate.FindStringSubmatch(line); m != nil && m[1]+"-"+m[2]+"-"+m[3] != day.Format(time.DateOnly) {
				return fmt.Errorf("the bill is of %s-%s-%s, not the day asked", m[1], m[2], m[3])
			}
			if m := footerCount.FindStringSubmatch(line); m != nil {
				said[m[1]], _ = strconv.Atoi(m[2])
			}
			if strings.Contains(line, "业务明细列表结束") {
				ended = true
			}
			continue
		}
		switch {
		case ended:
			return errors.New("a row after the detail's end marker")
		case cols == nil:
			if cols, err = columns(rec); err != nil {
				return err
			}
			continue
		}
		l, err := lineOf(rec, cols)
		if err != nil {
			return fmt.Errorf("row %s: %w", field(rec, cols, colTradeNo), err)
		}
		counted[field(rec, cols, colType)]++
		if err := emit(l); err != nil {
			return err
		}
	}
	if cols == nil || !ended {
		return errors.New("the detail file is cut short (no column header or no end marker)")
	}
	for _, typ := range []string{typePayment, typeRefund} {
		if n, ok := said[typ]; ok && n != counted[typ] {
			return fmt.Errorf("the footer counts %d %s rows, the file holds %d", n, typ, counted[typ])
		}
	}
	return nil
}

// columns maps the header row's names (trimmed, half-width parentheses
// read as Alipay's full-width ones) to their positions.
func columns(header []string) (map[string]int, error) {
	norm := strings.NewReplacer("(", "（", ")", "）")
	cols := make(map[string]int, len(header))
	for i, h := range header {
		cols[norm.Replace(strings.TrimSpace(h))] = i
	}
	for _, need := range []string{colTradeNo, colOrderNo, colType, colFinished, colAmount, colRequestNo} {
		if _, ok := cols[need]; !ok {
			return nil, fmt.Errorf("the detail file's header has no column %s", need)
		}
	}
	return cols, nil
}

// field is a row's value in column name, trimmed ("" when the row is short
// or the column absent): Alipay pads values with tabs.
func field(rec []string, cols map[string]int, name string) string {
	i, ok := cols[name]
	if !ok || i >= len(rec) {
		return ""
	}
	return strings.TrimSpace(rec[i])
}

// lineOf reads one row. A payment's Ref is its trade number; a refund has
// no id of its own in the bill, only its request number, unique within its
// trade: its Ref is "<trade_no>/<request no>".
func lineOf(rec []string, cols map[string]int) (pay.StatementLine, error) {
	get := func(name string) string { return field(rec, cols, name) }
	l := pay.StatementLine{TradeNo: get(colTradeNo), OrderNo: get(colOrderNo)}
	if l.TradeNo == "" {
		return l, errors.New("no trade number")
	}
	var err error
	if l.AmountCents, err = signedCents(get(colAmount)); err != nil {
		return l, err
	}
	if l.FeeCents, err = signedCents(get(colFee)); err != nil {
		return l, err
	}
	l.AmountCents, l.FeeCents = abs(l.AmountCents), abs(l.FeeCents)
	at := get(colFinished)
	if at == "" {
		at = get(colCreated)
	}
	if l.At, err = time.ParseInLocation(timeLayout, at, beijing); err != nil {
		return l, fmt.Errorf("time %q is not %s", at, timeLayout)
	}
	switch typ := get(colType); typ {
	case typePayment:
		l.Kind, l.Ref = pay.LinePayment, l.TradeNo
	case typeRefund:
		req := get(colRequestNo)
		if req == "" {
			return l, errors.New("a refund with no request number")
		}
		// The request number as is: whether orderflow sent it is the
		// ledger's to say (a dashboard refund's is one Alipay made up).
		l.Kind, l.Ref, l.RefundNo = pay.LineRefund, l.TradeNo+"/"+req, req
	default:
		return l, fmt.Errorf("unknown business type %q", typ)
	}
	return l, nil
}

// signedCents reads a bill amount, which carries a sign ("-12.34" for a
// refund); an empty cell is 0.
func signedCents(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	neg := strings.HasPrefix(s, "-")
	c, err := Cents(strings.TrimPrefix(s, "-"))
	if neg {
		c = -c
	}
	return c, err
}

func abs(c int64) int64 {
	if c < 0 {
		return -c
	}
	return c
}
