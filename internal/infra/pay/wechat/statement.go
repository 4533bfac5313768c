// WeChat Pay's daily trade bill (交易账单), orderflow's statement of the
// provider. Statement asks GET /v3/bill/tradebill?bill_date=YYYY-MM-DD&
// bill_type=ALL through the SDK's client (the request signed with the
// merchant key, the answer verified with WeChat Pay's public key); the
// answer is {hash_type: "SHA1", hash_value, download_url}. The file at
// download_url is fetched with a signed request too, but its answer is not
// signed: it is written to a temporary file while its SHA1 is computed, and
// nothing of it is read unless the SHA1 is hash_value. The file is a UTF-8
// CSV (bill.go reads it): a header row, one row per payment (交易状态
// SUCCESS) or refund (REFUND) with every value prefixed by a backtick and
// amounts in yuan, then a summary header (总交易单数, …) and its one row,
// which must agree with the lines. The file is read twice from disk: once to
// check it whole, once to hand its lines to the caller in pages, so a day is
// never held in memory and no line is handed over from a bill that does not
// add up.

package wechat

import (
	"context"
	"crypto/sha1" // WeChat Pay hashes its bill files with SHA1: checked here, not chosen
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"orderflow/internal/infra/pay"

	"github.com/wechatpay-apiv3/wechatpay-go/core"
)

var _ pay.Statements = (*Provider)(nil)

// shanghai is WeChat Pay's calendar (UTC+8, no daylight saving since 1991):
// a bill's day and its lines' times are Beijing time.
var shanghai = time.FixedZone("Asia/Shanghai", 8*3600)

// billDownloadTimeout bounds the download of one day's bill file, which
// may be tens of megabytes; the query before it keeps Config.Timeout.
const billDownloadTimeout = 10 * time.Minute

// StatementZone is Asia/Shanghai: a WeChat Pay bill day is a Beijing day.
func (p *Provider) StatementZone() *time.Location { return shanghai }

// tradeBill is the answer of GET /v3/bill/tradebill.
type tradeBill struct {
	HashType    string `json:"hash_type"`
	HashValue   string `json:"hash_value"`
	DownloadURL string `json:"download_url"`
}

// Statement reads the ALL trade bill of day (YYYY-MM-DD, Beijing time) and
// hands its lines to fn in pages of at most pay.StatementPage, after the
// file's SHA1 and its summary have been checked. A bill WeChat Pay has not
// built yet (NO_STATEMENT_EXIST, BILL_NOT_EXIST) is pay.ErrStatementNotReady.
func (p *Provider) Statement(ctx context.Context, day string, fn func([]pay.StatementLine) error) error {
	if _, err := time.ParseInLocation(time.DateOnly, day, shanghai); err != nil {
		return fmt.Errorf("wechat statement: day %q is not a YYYY-MM-DD date", day)
	}
	bill, err := p.tradeBill(ctx, day)
	if err != nil {
		return err
	}
	f, err := p.downloadBill(ctx, day, bill)
	if err != nil {
		return err
	}
	defer func() {
		_ = f.Close()
		_ = os.Remove(f.Name())
	}()
	if err := p.readBill(f, nil); err != nil {
		return fmt.Errorf("wechat statement %s: %w", day, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("wechat statement %s: rewind the bill file: %w", day, err)
	}
	pages := pay.NewPager(fn)
	err = p.readBill(f, pages.Add)
	if err == nil {
		err = pages.Flush()
	}
	if err != nil {
		return fmt.Errorf("wechat statement %s: %w", day, err)
	}
	return nil
}

// tradeBill asks where the day's bill is and what its hash is.
func (p *Provider) tradeBill(ctx context.Context, day string) (*tradeBill, error) {
	q := url.Values{"bill_date": {day}, "bill_type": {"ALL"}}
	res, err := p.client.Get(ctx, DefaultAPIURL+"/v3/bill/tradebill?"+q.Encode())
	if err != nil {
		var apiErr *core.APIError
		if errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusBadRequest &&
			(apiErr.Code == "NO_STATEMENT_EXIST" || apiErr.Code == "BILL_NOT_EXIST") {
			return nil, fmt.Errorf("wechat statement %s: %s: %w", day, apiErr.Code, pay.ErrStatementNotReady)
		}
		return nil, callErr("trade bill "+day, err)
	}
	var b tradeBill
	if err := core.UnMarshalResponse(res.Response, &b); err != nil {
		return nil, fmt.Errorf("wechat trade bill %s: decode the answer: %w", day, err)
	}
	if !strings.EqualFold(b.HashType, "SHA1") || len(b.HashValue) != 2*sha1.Size || b.DownloadURL == "" {
		return nil, fmt.Errorf("wechat trade bill %s: answer without a SHA1 hash_value and a download_url", day)
	}
	if u, err := url.Parse(b.DownloadURL); err != nil || u.Host == "" {
		return nil, fmt.Errorf("wechat trade bill %s: download_url is not an absolute URL", day)
	}
	return &b, nil
}

// downloadBill writes the bill file to a temporary file, hashing it on the
// way, and returns it open only when its SHA1 is the one WeChat Pay signed.
func (p *Provider) downloadBill(ctx context.Context, day string, b *tradeBill) (*os.File, error) {
	res, err := p.download.Get(ctx, b.DownloadURL)
	if err != nil {
		return nil, callErr("download trade bill "+day, err)
	}
	body := res.Response.Body
	defer func() { _ = body.Close() }()
	f, err := os.CreateTemp("", "wechat-tradebill-*.csv")
	if err != nil {
		return nil, fmt.Errorf("wechat trade bill %s: temporary file: %w", day, err)
	}
	h := sha1.New()
	_, err = io.Copy(io.MultiWriter(f, h), body)
	if err == nil && !strings.EqualFold(hex.EncodeToString(h.Sum(nil)), b.HashValue) {
		err = errors.New("the file's SHA1 is not the hash_value WeChat Pay gave: refusing it")
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return nil, fmt.Errorf("wechat trade bill %s: download: %w", day, err)
	}
	return f, nil
}
