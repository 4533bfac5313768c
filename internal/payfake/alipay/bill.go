package alipay

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"fmt"
	"time"

	"orderflow/internal/payfake"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/transform"
)

// detailHeader is the detail file's column header, as Alipay writes it.
var detailHeader = []string{"支付宝交易号", "商户订单号", "业务类型", "商品名称", "创建时间", "完成时间",
	"门店编号", "门店名称", "操作员", "终端号", "对方账户", "订单金额（元）", "商家实收（元）", "支付宝红包（元）",
	"集分宝（元）", "支付宝优惠（元）", "商家优惠（元）", "券核销金额（元）", "券名称", "商家红包消费金额（元）",
	"卡消费金额（元）", "退款批次号/请求号", "服务费（元）", "分润（元）", "备注"}

// summaryHeader is the summary file's column header.
var summaryHeader = []string{"门店编号", "门店名称", "交易订单总笔数", "退款订单总笔数", "订单金额（元）",
	"商家实收（元）", "支付宝优惠（元）", "商家优惠（元）", "卡消费金额（元）", "服务费（元）", "分润（元）", "实收净额（元）"}

// billZip is the day's trade bill as Alipay serves it: a zip of the detail
// and the summary CSV, names and contents in GBK, lines ending CRLF. When
// corrupt, a byte inside the detail's compressed data is flipped.
func billZip(day string, rows []billRow, exported time.Time, corrupt bool) ([]byte, error) {
	start, err := time.ParseInLocation(time.DateOnly, day, beijing)
	if err != nil {
		return nil, err
	}
	ymd := start.Format("20060102")
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, file := range []struct {
		name  string
		write func(*csv.Writer)
	}{
		{SellerID + "_" + ymd + "_业务明细.csv", func(w *csv.Writer) { writeDetail(w, start, rows, exported) }},
		{SellerID + "_" + ymd + "_业务明细(汇总).csv", func(w *csv.Writer) { writeSummary(w, start, rows, exported) }},
	} {
		name, err := simplifiedchinese.GBK.NewEncoder().String(file.name)
		if err != nil {
			return nil, err
		}
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: name, NonUTF8: true, Method: zip.Deflate, Modified: exported})
		if err != nil {
			return nil, err
		}
		gbk := transform.NewWriter(fw, encoding.ReplaceUnsupported(simplifiedchinese.GBK.NewEncoder()))
		w := csv.NewWriter(gbk)
		w.UseCRLF = true
		file.write(w)
		if w.Flush(); w.Error() != nil {
			return nil, w.Error()
		}
		if err := gbk.Close(); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	out := buf.Bytes()
	if corrupt {
		zr, err := zip.NewReader(bytes.NewReader(out), int64(len(out)))
		if err != nil {
			return nil, err
		}
		off, err := zr.File[0].DataOffset()
		if err != nil {
			return nil, err
		}
		out[off+int64(zr.File[0].CompressedSize64)/2] ^= 0xff
	}
	return out, nil
}

// writeOpening writes a bill file's opening comments (its title, the
// account, the day it covers, the rule above its list) and returns the
// writer of its closing ones.
func writeOpening(w *csv.Writer, title, rule string, start time.Time) (comment func(string)) {
	comment = func(s string) { _ = w.Write([]string{s}) }
	comment(title)
	comment("#账号：[" + SellerID + "]")
	comment(period(start))
	comment(rule)
	return comment
}

// period is the comment line naming the day a file covers.
func period(start time.Time) string {
	const layout = "2006年01月02日 15:04:05"
	return "#起始日期：[" + start.Format(layout) + "]   终止日期：[" + start.AddDate(0, 0, 1).Format(layout) + "]"
}

// writeDetail writes the detail file: comments, the header, one row per
// payment or refund (identifiers padded with a tab, as Alipay does so a
// spreadsheet keeps them text), the end marker and the footer.
func writeDetail(w *csv.Writer, start time.Time, rows []billRow, exported time.Time) {
	comment := writeOpening(w, "#支付宝业务明细查询", "#-----------------------------------------业务明细列表----------------------------------------", start)
	_ = w.Write(detailHeader)
	for _, r := range rows {
		typ, req := "交易", ""
		if r.requestNo != "" {
			typ, req = "退款", r.requestNo+"\t"
		}
		at := r.at.In(beijing).Format(timeLayout)
		_ = w.Write([]string{r.tradeNo + "\t", r.orderNo + "\t", typ, r.subject, at, at,
			"", "", "", "", "2088000000000002", payfake.Yuan(r.cents), payfake.Yuan(r.cents), "0.00",
			"0.00", "0.00", "0.00", "", "", "0.00",
			"0.00", req, payfake.Yuan(r.fee), "0.00", ""})
	}
	comment("#-----------------------------------------业务明细列表结束------------------------------------")
	t := totalsOf(rows)
	comment(fmt.Sprintf("#交易合计：%d笔，商家实收共%s元，商家优惠共0.00元", t.payments, payfake.Yuan(t.paid)))
	comment(fmt.Sprintf("#退款合计：%d笔，商家实收退款共%s元，商家优惠退款共0.00元", t.refunds, payfake.Yuan(t.refunded)))
	comment(exportedLine(exported))
}

// writeSummary writes the summary file: one total row (the fake has no
// stores).
func writeSummary(w *csv.Writer, start time.Time, rows []billRow, exported time.Time) {
	comment := writeOpening(w, "#支付宝业务汇总查询", "#-----------------------------------------业务汇总列表----------------------------------------", start)
	_ = w.Write(summaryHeader)
	t := totalsOf(rows)
	gross := t.paid + t.refunded
	_ = w.Write([]string{"", "合计", fmt.Sprint(t.payments), fmt.Sprint(t.refunds), payfake.Yuan(gross), payfake.Yuan(gross),
		"0.00", "0.00", "0.00", payfake.Yuan(t.fee), "0.00", payfake.Yuan(gross + t.fee)})
	comment("#----------------------------------------业务汇总列表结束-------------------------------------")
	comment(exportedLine(exported))
}

// billTotals are what a day's rows add up to: refunds' cents are negative.
type billTotals struct {
	payments, refunds   int
	paid, refunded, fee int64
}

func totalsOf(rows []billRow) billTotals {
	var t billTotals
	for _, r := range rows {
		if r.requestNo != "" {
			t.refunds++
			t.refunded += r.cents
		} else {
			t.payments++
			t.paid += r.cents
		}
		t.fee += r.fee
	}
	return t
}

// exportedLine is the closing comment naming when a file was exported.
func exportedLine(exported time.Time) string {
	return "#导出时间：[" + exported.In(beijing).Format("2006年01月02日 15:04:05") + "]"
}
