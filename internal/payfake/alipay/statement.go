package alipay

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"time"

	"orderflow/internal/payfake"

	sdk "github.com/smartwalle/alipay/v3"
)

// billPath is where the fake serves a bill's zip, as Alipay's
// dwbillcenter does.
const billPath = "/downloadBillFile.resource"

// dashboardPrefix starts the out_request_no of a refund made in the
// dashboard: Alipay makes those numbers up, and orderflow's ("RF…") never
// start so.
const dashboardPrefix = "HZ"

// DashboardRefund refunds cents of orderNo's paid trade as an operator in
// Alipay's dashboard would: counted in the trade (later refunds see it),
// listed in the bill under an out_request_no Alipay made up, and never
// notified. It returns the refund's bill Ref, "<trade_no>/<out_request_no>".
func (f *Fake) DashboardRefund(orderNo string, cents int64) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.trades[orderNo]
	if !ok || t.PaidAt.IsZero() {
		return "", fmt.Errorf("alipay fake: no paid trade %s", orderNo)
	}
	if cents <= 0 || t.Refunded+cents > yuanCents(t.TotalAmount) {
		return "", fmt.Errorf("alipay fake: refund of %d cents past trade %s's %s yuan (%d refunded)", cents, orderNo, t.TotalAmount, t.Refunded)
	}
	f.seq++
	no := fmt.Sprintf("%s%016d", dashboardPrefix, f.seq)
	t.Refunded += cents
	f.refunds[no] = &refund{OutRequestNo: no, OutTradeNo: orderNo, Amount: payfake.Yuan(cents), At: f.now(), Dashboard: true}
	if t.Refunded == yuanCents(t.TotalAmount) {
		t.Status = sdk.TradeStatusClosed
	}
	return t.TradeNo + "/" + no, nil
}

// PayUnseen is a buyer's payment of cents for orderNo that orderflow never
// hears of: the trade (created if the fake never saw a checkout) is paid
// now, with no notification; a later alipay.trade.query sees it. It
// returns the trade number.
func (f *Fake) PayUnseen(orderNo string, cents int64) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.trades[orderNo]
	switch {
	case cents <= 0:
		return "", fmt.Errorf("alipay fake: a payment of %d cents", cents)
	case !ok:
		t = &trade{OutTradeNo: orderNo, TradeNo: f.nextTradeNo(), TotalAmount: payfake.Yuan(cents), Subject: orderNo}
		f.trades[orderNo] = t
	case !t.PaidAt.IsZero():
		return "", fmt.Errorf("alipay fake: trade %s is paid already", orderNo)
	case yuanCents(t.TotalAmount) != cents:
		return "", fmt.Errorf("alipay fake: trade %s is for %s yuan, not %d cents", orderNo, t.TotalAmount, cents)
	}
	t.Status, t.PaidAt = sdk.TradeStatusSuccess, f.now()
	return t.TradeNo, nil
}

// billURL answers alipay.data.dataservice.bill.downloadurl.query: the
// trade bill of a Beijing day that is over, at a URL on this server.
// tamper is the switch to spoil the answer's signature.
func (f *Fake) billURL(r *http.Request, billType, billDate string) (ans map[string]any, tamper bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	day, err := time.ParseInLocation(time.DateOnly, billDate, beijing)
	switch {
	case billType != "trade":
		return map[string]any{"code": "40004", "msg": "Business Failed", "sub_code": "isv.invalid-bill-type", "sub_msg": "账单类型不正确"}, false
	case err != nil:
		return map[string]any{"code": "40004", "msg": "Business Failed", "sub_code": "isv.invalid-bill-date", "sub_msg": "账单日期格式不正确"}, false
	case f.now().Before(day.AddDate(0, 0, 1)):
		return map[string]any{"code": "40004", "msg": "Business Failed", "sub_code": "isp.bill_not_exist", "sub_msg": "账单不存在"}, false
	}
	fileID := payfake.RandHex(16)
	f.bills[fileID] = billDate
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	ymd := day.Format("20060102")
	q := url.Values{"bizType": {"trade"}, "userId": {SellerID}, "fileType": {"csv.zip"}, "bizDates": {ymd},
		"downloadFileName": {SellerID + "_" + ymd + ".csv.zip"}, "fileId": {fileID}}
	u := url.URL{Scheme: scheme, Host: r.Host, Path: billPath, RawQuery: q.Encode()}
	return map[string]any{"code": "10000", "bill_download_url": u.String()}, f.switches.TamperBillAnswer
}

// serveBill serves the zip a bill URL names, built now from what the fake
// recorded for that day.
func (f *Fake) serveBill(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	day, ok := f.bills[r.URL.Query().Get("fileId")]
	var rows []billRow
	if ok {
		rows = f.billRows(day)
	}
	exported, corrupt := f.now(), f.switches.CorruptBill
	f.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	zipped, err := billZip(day, rows, exported, corrupt)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/oct-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="`+SellerID+"_"+day+`.csv.zip"`)
	_, _ = w.Write(zipped)
}

// billRow is one line of the detail file.
type billRow struct {
	tradeNo, orderNo, subject, requestNo string
	at                                   time.Time
	cents, fee                           int64 // signed: a refund's are negative
	ref                                  string
}

// billRows is the day's payments (by gmt_payment) and refunds (by their
// time), in time order, with the statement knobs applied. f.mu is held.
func (f *Fake) billRows(day string) []billRow {
	start, _ := time.ParseInLocation(time.DateOnly, day, beijing)
	end := start.AddDate(0, 0, 1)
	in := func(t time.Time) bool { return !t.IsZero() && !t.Before(start) && t.Before(end) }
	var rows []billRow
	for _, t := range f.trades {
		if !in(t.PaidAt) || f.StatementDrops(t.TradeNo) {
			continue
		}
		cents := f.StatementAmount(t.TradeNo, yuanCents(t.TotalAmount))
		rows = append(rows, billRow{tradeNo: t.TradeNo, orderNo: t.OutTradeNo, subject: t.Subject, at: t.PaidAt,
			cents: cents, fee: -serviceFee(cents), ref: t.TradeNo})
	}
	for _, rf := range f.refunds {
		t := f.trades[rf.OutTradeNo]
		ref := t.TradeNo + "/" + rf.OutRequestNo
		if !in(rf.At) || f.StatementDrops(ref) {
			continue
		}
		rows = append(rows, billRow{tradeNo: t.TradeNo, orderNo: t.OutTradeNo, subject: t.Subject, requestNo: rf.OutRequestNo,
			at: rf.At, cents: -yuanCents(rf.Amount), ref: ref})
	}
	sort.Slice(rows, func(i, j int) bool {
		if !rows[i].at.Equal(rows[j].at) {
			return rows[i].at.Before(rows[j].at)
		}
		return rows[i].ref < rows[j].ref
	})
	return rows
}

// serviceFee is the fake's rate on a payment: 0.6%, rounded half up.
func serviceFee(cents int64) int64 { return (cents*6 + 500) / 1000 }
