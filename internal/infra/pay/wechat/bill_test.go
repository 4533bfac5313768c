package wechat_test

import (
	"strings"
	"testing"

	"orderflow/internal/infra/pay"
	"orderflow/internal/infra/pay/wechat"
)

const billHead = "交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,付款银行,货币种类,应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,充值券退款金额,退款类型,退款状态,商品名称,商户数据包,手续费,费率,订单金额,申请退款金额,费率备注\n"

const (
	payRow    = "`2026-11-20 10:00:00,`wx1,`1900000109,`0,`,`4200001,`O1,`openid,`NATIVE,`SUCCESS,`OTHERS,`CNY,`50.00,`0.00,`0,`0,`0.00,`0.00,`,`,`steam,`,`0.30000,`0.60%,`50.00,`0.00,`\n"
	refundRow = "`2026-11-20 11:00:00,`wx1,`1900000109,`0,`,`4200001,`O1,`openid,`NATIVE,`REFUND,`OTHERS,`CNY,`0.00,`0.00,`5030001,`RFdeadbeefdeadbeefdeadbeef,`20.00,`0.00,`ORIGINAL,`SUCCESS,`steam,`,`-0.12000,`0.60%,`0.00,`20.00,`\n"
	sumHead   = "总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额\n"
	sumRow    = "`2,`50.00,`20.00,`0.00,`0.18,`50.00,`20.00\n"
)

// The bill reader finds columns by name (a BOM or another order changes
// nothing), reads five-decimal fees, and refuses a bill whose summary does
// not add up, that ends early, or that carries a line it cannot read.
func TestReadBill(t *testing.T) {
	var got []pay.StatementLine
	emit := func(l pay.StatementLine) error { got = append(got, l); return nil }
	if err := wechat.ReadBill("1900000109", strings.NewReader("\ufeff"+billHead+payRow+refundRow+sumHead+sumRow+"\n"), emit); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].AmountCents != 5000 || got[0].FeeCents != 30 || got[0].Ref != "4200001" ||
		got[1].Kind != pay.LineRefund || got[1].AmountCents != 2000 || got[1].FeeCents != -12 ||
		got[1].RefundNo != "RFdeadbeefdeadbeefdeadbeef" || got[1].Ref != "5030001" || got[1].TradeNo != "4200001" {
		t.Fatalf("lines = %+v", got)
	}
	// The same bill with its first two columns swapped reads the same.
	swap := func(s string) string {
		a, rest, _ := strings.Cut(s, ",")
		b, rest, _ := strings.Cut(rest, ",")
		return b + "," + a + "," + rest
	}
	var again []pay.StatementLine
	if err := wechat.ReadBill("1900000109", strings.NewReader(swap(billHead)+swap(payRow)+swap(refundRow)+sumHead+sumRow),
		func(l pay.StatementLine) error { again = append(again, l); return nil }); err != nil || len(again) != 2 || !again[1].At.Equal(got[1].At) {
		t.Fatalf("swapped columns: %+v, %v", again, err)
	}

	for name, file := range map[string]string{
		"count":          billHead + payRow + refundRow + sumHead + "`3,`50.00,`20.00,`0.00,`0.18,`50.00,`20.00\n",
		"order total":    billHead + payRow + refundRow + sumHead + "`2,`50.00,`20.00,`0.00,`0.18,`50.01,`20.00\n",
		"refund total":   billHead + payRow + refundRow + sumHead + "`2,`50.00,`19.00,`0.00,`0.18,`50.00,`20.00\n",
		"fee total":      billHead + payRow + refundRow + sumHead + "`2,`50.00,`20.00,`0.00,`0.20,`50.00,`20.00\n",
		"no summary":     billHead + payRow + refundRow,
		"no summary row": billHead + payRow + refundRow + sumHead,
		"after summary":  billHead + payRow + refundRow + sumHead + sumRow + payRow,
		"other merchant": billHead + strings.Replace(payRow, "`1900000109", "`1900000999", 1) + refundRow + sumHead + sumRow,
		"unknown state":  billHead + strings.Replace(payRow, "`SUCCESS", "`REVOKED", 1) + refundRow + sumHead + sumRow,
		"bad time":       billHead + strings.Replace(payRow, "2026-11-20 10:00:00", "2026/11/20 10:00", 1) + refundRow + sumHead + sumRow,
		"part of a fen":  billHead + strings.Replace(payRow, "`0.60%,`50.00", "`0.60%,`50.005", 1) + refundRow + sumHead + sumRow,
		"not an amount":  billHead + strings.Replace(payRow, "`50.00", "`5O.00", 1) + refundRow + sumHead + sumRow,
		"no refund id":   billHead + payRow + strings.Replace(refundRow, "`5030001", "`", 1) + sumHead + sumRow,
		"missing column": strings.Replace(billHead, "微信订单号", "微信单号", 1) + payRow + refundRow + sumHead + sumRow,
		"empty":          "",
	} {
		if err := wechat.ReadBill("1900000109", strings.NewReader(file), nil); err == nil {
			t.Errorf("%s: read without an error", name)
		}
	}
}
