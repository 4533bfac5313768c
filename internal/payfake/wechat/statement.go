package wechat

import (
	"bytes"
	"crypto/sha1" // WeChat Pay hashes its bill files with SHA1
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"net/http"
	"sort"
	"time"

	"orderflow/internal/payfake"
)

// beijing is WeChat Pay's clock: bill days and the times it writes.
var beijing = time.FixedZone("Asia/Shanghai", 8*3600)

// billHeader is the ALL trade bill's header row, as WeChat Pay writes it.
var billHeader = []string{"交易时间", "公众账号ID", "商户号", "特约商户号", "设备号", "微信订单号", "商户订单号", "用户标识",
	"交易类型", "交易状态", "付款银行", "货币种类", "应结订单金额", "代金券金额", "微信退款单号", "商户退款单号", "退款金额",
	"充值券退款金额", "退款类型", "退款状态", "商品名称", "商户数据包", "手续费", "费率", "订单金额", "申请退款金额", "费率备注"}

// billSummaryHeader heads the summary row that closes a bill.
var billSummaryHeader = []string{"总交易单数", "应结订单总金额", "退款总金额", "充值券退款总金额", "手续费总金额", "订单总金额", "申请退款总金额"}

// feeRate is the fake's 0.6%, WeChat Pay's usual rate, in thousandths.
const feeRate = 6

// tradeBill answers GET /v3/bill/tradebill: the day's bill (Beijing time)
// is built from what the fake recorded, kept under a download token and
// answered with its SHA1, signed as every answer is. A day the fake's clock
// has not seen end is NO_STATEMENT_EXIST, as WeChat Pay answers a bill not
// built yet.
func (f *Fake) tradeBill(w http.ResponseWriter, r *http.Request, _ []byte) {
	q := r.URL.Query()
	day, err := time.ParseInLocation(time.DateOnly, q.Get("bill_date"), beijing)
	if err != nil {
		f.fail(w, http.StatusBadRequest, "PARAM_ERROR", "bill_date must be YYYY-MM-DD")
		return
	}
	kind := q.Get("bill_type")
	if kind == "" {
		kind = "ALL"
	}
	if (kind != "ALL" && kind != "SUCCESS" && kind != "REFUND") || q.Get("tar_type") != "" {
		f.fail(w, http.StatusBadRequest, "PARAM_ERROR", "bill_type must be ALL, SUCCESS or REFUND; the fake serves no GZIP")
		return
	}
	f.mu.Lock()
	if f.now().Before(day.AddDate(0, 0, 1)) {
		f.mu.Unlock()
		f.fail(w, http.StatusBadRequest, "NO_STATEMENT_EXIST", "账单尚未生成")
		return
	}
	file := f.bill(day, kind)
	token := randHex(16)
	f.bills[token] = file
	f.mu.Unlock()
	sum := sha1.Sum(file)
	key := f.platformPriv
	if f.MisSignBill.Load() {
		key = f.otherPriv
	}
	f.replySigned(w, http.StatusOK, map[string]string{
		"hash_type": "SHA1", "hash_value": hex.EncodeToString(sum[:]),
		"download_url": f.URL + "/v3/billdownload/file?token=" + token,
	}, key)
}

// billFile serves a bill file once, unsigned (as WeChat Pay serves it: the
// hash in the signed answer covers it).
func (f *Fake) billFile(w http.ResponseWriter, r *http.Request, _ []byte) {
	token := r.URL.Query().Get("token")
	f.mu.Lock()
	file, ok := f.bills[token]
	delete(f.bills, token)
	f.mu.Unlock()
	if !ok {
		f.fail(w, http.StatusBadRequest, "PARAM_ERROR", "token is unknown or expired")
		return
	}
	if f.TamperBill.Load() {
		file = tamper(file)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write(file)
}

// tamper changes one digit past the header row of a copy of file.
func tamper(file []byte) []byte {
	c := bytes.Clone(file)
	for i := bytes.IndexByte(c, '\n') + 1; i > 0 && i < len(c); i++ {
		if c[i] >= '1' && c[i] <= '8' {
			c[i]++
			break
		}
	}
	return c
}

// billRow is one line of a bill with its time, for ordering.
type billRow struct {
	at    time.Time
	id    string
	cells []string
}

// bill writes the day's bill of kind (ALL, SUCCESS, REFUND): a payment
// line per order paid that day (success_time), a refund line per refund
// settled that day, in time order, less the dropped ones, with the altered
// amounts; then the summary of what it lists; f.mu held.
func (f *Fake) bill(day time.Time, kind string) []byte {
	from, to := day, day.AddDate(0, 0, 1)
	in := func(t time.Time) bool { return !t.Before(from) && t.Before(to) }
	var rows []billRow
	var count, settled, refunded, fees, totals, asked int64
	if kind != "REFUND" {
		for _, o := range f.orders {
			if o.State != "SUCCESS" || !in(o.SuccessTime) || f.StatementDrops(o.TransactionID) {
				continue
			}
			cents := f.StatementAmount(o.TransactionID, o.Total)
			fee := feeOf(cents)
			rows = append(rows, billRow{at: o.SuccessTime, id: o.TransactionID, cells: f.billCells(o, o.SuccessTime,
				"SUCCESS", payfake.Yuan(cents), "0", "0", payfake.Yuan(0), "", "", payfake.Yuan(fee), payfake.Yuan(cents), payfake.Yuan(0))})
			count, settled, fees, totals = count+1, settled+cents, fees+fee, totals+cents
		}
	}
	if kind != "SUCCESS" {
		for _, rf := range f.refunds {
			if rf.Status != "SUCCESS" || !in(rf.Created) || f.StatementDrops(rf.RefundID) {
				continue
			}
			fee := -feeOf(rf.Amount)
			rows = append(rows, billRow{at: rf.Created, id: rf.RefundID, cells: f.billCells(rf.Order, rf.Created,
				"REFUND", payfake.Yuan(0), rf.RefundID, rf.OutRefundNo, payfake.Yuan(rf.Amount), "ORIGINAL", "SUCCESS", payfake.Yuan(fee), payfake.Yuan(0), payfake.Yuan(rf.Amount))})
			count, refunded, fees, asked = count+1, refunded+rf.Amount, fees+fee, asked+rf.Amount
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if !rows[i].at.Equal(rows[j].at) {
			return rows[i].at.Before(rows[j].at)
		}
		return rows[i].id < rows[j].id
	})
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	_ = cw.Write(billHeader)
	for _, r := range rows {
		_ = cw.Write(r.cells)
	}
	_ = cw.Write(billSummaryHeader)
	_ = cw.Write(backticked([]string{fmt.Sprint(count), payfake.Yuan(settled), payfake.Yuan(refunded), payfake.Yuan(0), payfake.Yuan(fees), payfake.Yuan(totals), payfake.Yuan(asked)}))
	cw.Flush()
	return buf.Bytes()
}

// billCells is one line of the bill, in billHeader's order, backticked.
func (f *Fake) billCells(o *order, at time.Time, state, settle, refundID, outRefundNo, refund, refundKind, refundState, fee, total, asked string) []string {
	return backticked([]string{
		at.In(beijing).Format("2006-01-02 15:04:05"), f.Keys.AppID, f.Keys.MchID, "0", "", o.TransactionID, o.OutTradeNo,
		"oUpF8uMuAJO_M2pxb1Q9zNjWeS6o", "NATIVE", state, "OTHERS", "CNY", settle, payfake.Yuan(0), refundID, outRefundNo, refund,
		payfake.Yuan(0), refundKind, refundState, o.Description, "", fee, "0.60%", total, asked, "",
	})
}

// backticked prefixes every value with "`", as WeChat Pay does so that a
// spreadsheet keeps long numbers as text.
func backticked(vals []string) []string {
	for i, v := range vals {
		vals[i] = "`" + v
	}
	return vals
}

// feeOf is the fee on cents at feeRate, rounded half up to the fen.
func feeOf(cents int64) int64 { return (cents*feeRate + 500) / 1000 }
