package alipay

import (
	"archive/zip"
	"bytes"
	"strings"
	"testing"
	"time"

	"orderflow/internal/infra/pay"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/encoding/simplifiedchinese"
)

// detailZip zips text, GBK-encoded, as the detail file of a bill.
func detailZip(t *testing.T, text string) *zip.File {
	t.Helper()
	gbk, err := simplifiedchinese.GBK.NewEncoder().String(strings.ReplaceAll(text, "\n", "\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	name, _ := simplifiedchinese.GBK.NewEncoder().String("2088_20260310_业务明细.csv")
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: name, NonUTF8: true, Method: zip.Deflate})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write([]byte(gbk))
	_ = zw.Close()
	f, err := detailFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// The detail reader finds columns by name wherever they stand, trims the
// tabs Alipay pads values with, and refuses a file that contradicts
// itself (its day, its footer's counts, rows past its end) or a row it
// cannot read, rather than hand over part of a day.
func TestReadDetail(t *testing.T) {
	const head = "#支付宝业务明细查询\n#账号：[2088]\n#起始日期：[2026年03月10日 00:00:00]   终止日期：[2026年03月11日 00:00:00]\n" +
		"#-----------------------------------------业务明细列表----------------------------------------\n"
	const end = "#-----------------------------------------业务明细列表结束------------------------------------\n"
	// Columns reordered, half-width parentheses, some absent: read by name.
	const cols = "业务类型,退款批次号/请求号,支付宝交易号,订单金额(元),商户订单号,完成时间,服务费(元),备注\n"
	const payRow = "交易\t,,T1\t,12.34,OF1\t,2026-03-10 09:00:00,-0.07,\n"
	const refundRow = "退款\t,HZ9\t,T1\t,-1.00,OF1\t,2026-03-10 10:00:00,,\n"
	const ourRefund = "退款,RF0123456789abcdef01234567,T1,-2.00,OF1,2026-03-10 11:00:00,0.01,\n"
	const footer = "#交易合计：1笔，商家实收共12.34元，商家优惠共0.00元\n#退款合计：2笔，商家实收退款共-3.00元，商家优惠退款共0.00元\n#导出时间：[2026年03月11日 06:00:00]\n"
	at := func(h int) time.Time { return time.Date(2026, 3, 10, h, 0, 0, 0, beijing) }
	good := []pay.StatementLine{
		{Kind: pay.LinePayment, TradeNo: "T1", OrderNo: "OF1", Ref: "T1", AmountCents: 1234, FeeCents: 7, At: at(9)},
		{Kind: pay.LineRefund, TradeNo: "T1", OrderNo: "OF1", RefundNo: "HZ9", Ref: "T1/HZ9", AmountCents: 100, At: at(10)},
		{Kind: pay.LineRefund, TradeNo: "T1", OrderNo: "OF1", RefundNo: "RF0123456789abcdef01234567",
			Ref: "T1/RF0123456789abcdef01234567", AmountCents: 200, FeeCents: 1, At: at(11)},
	}
	for _, c := range []struct {
		name, text string
		want       []pay.StatementLine // nil: an error
	}{
		{"good", head + cols + payRow + refundRow + ourRefund + end + footer, good},
		{"no footer counts", head + cols + payRow + refundRow + ourRefund + end, good},
		{"another day", strings.Replace(head, "03月10日 00", "03月09日 00", 1) + cols + payRow + refundRow + ourRefund + end + footer, nil},
		{"footer counts more", head + cols + payRow + refundRow + end + footer, nil},
		{"cut short", head + cols + payRow + refundRow + ourRefund, nil},
		{"no header", head + end, nil},
		{"a row after the end", head + cols + payRow + refundRow + end + ourRefund + footer, nil},
		{"a column missing", head + strings.Replace(cols, "完成时间", "时间", 1) + end, nil},
		{"unknown type", head + cols + strings.Replace(payRow, "交易", "其他", 1) + end, nil},
		{"bad amount", head + cols + strings.Replace(payRow, "12.34", "12.345", 1) + end, nil},
		{"bad time", head + cols + strings.Replace(payRow, "2026-03-10 09:00:00", "2026/03/10 09:00", 1) + end, nil},
		{"refund without request no", head + cols + strings.Replace(refundRow, "HZ9", "", 1) + end, nil},
		{"any request number, as is", head + cols + strings.Replace(ourRefund, "RF01", "RF0X", 1) + end, []pay.StatementLine{
			{Kind: pay.LineRefund, TradeNo: "T1", OrderNo: "OF1", RefundNo: "RF0X23456789abcdef01234567", Ref: "T1/RF0X23456789abcdef01234567", AmountCents: 200, FeeCents: 1, At: at(11)}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []pay.StatementLine
			err := readDetail(detailZip(t, c.text), at(0), func(l pay.StatementLine) error {
				got = append(got, l)
				return nil
			})
			if c.want == nil {
				if err == nil {
					t.Errorf("no error; read %d lines", len(got))
				}
				t.Logf("error: %v", err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}
