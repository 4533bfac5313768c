// Alipay's daily statement is its trade bill: alipay.data.dataservice.bill.
// downloadurl.query (bill_type "trade", bill_date YYYY-MM-DD, a Beijing
// day) answers, signed RSA2 like every other answer, a bill_download_url;
// that URL serves a ZIP holding two GBK-encoded CSV files, the detail
// "<pid>_<yyyymmdd>_业务明细.csv" (one row per payment 交易 and refund 退款,
// between '#' comment lines; bill.go reads it) and the summary
// "…_业务明细(汇总).csv", which is not read. The zip goes to a temp file
// (archive/zip reads at offsets) and the detail is read twice, row by row:
// once whole to check it (the zip's CRC-32, every row, the footer's counts)
// before any line is handed over, then again to hand the lines in pages.

package alipay

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"orderflow/internal/infra/pay"

	sdk "github.com/smartwalle/alipay/v3"
	"golang.org/x/text/encoding/simplifiedchinese"
)

var _ pay.Statements = (*Provider)(nil)

// billDownloadTimeout bounds one bill download (a day's file can be large;
// the caller's context usually ends it sooner).
const billDownloadTimeout = 10 * time.Minute

// billNotExist is Alipay's sub_code for a bill not (yet) made.
const billNotExist = "isp.bill_not_exist"

// detailSuffix ends the detail file's name; the summary's ends in
// "_业务明细(汇总).csv".
const detailSuffix = "_业务明细.csv"

// StatementZone is Beijing time (Asia/Shanghai, UTC+8 all year): Alipay's
// bill days.
func (p *Provider) StatementZone() *time.Location { return beijing }

// Statement reads Alipay's trade bill of day (YYYY-MM-DD, Beijing) and hands
// its lines to fn in pages of at most pay.StatementPage. A bill Alipay has
// not made yet is pay.ErrStatementNotReady.
func (p *Provider) Statement(ctx context.Context, day string, fn func([]pay.StatementLine) error) error {
	d, err := time.ParseInLocation(time.DateOnly, day, beijing)
	if err != nil || d.Format(time.DateOnly) != day {
		return fmt.Errorf("alipay statement: day %q is not a date (YYYY-MM-DD)", day)
	}
	url, err := p.billURL(ctx, day)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp("", "orderflow-alipay-bill-*.zip")
	if err != nil {
		return fmt.Errorf("alipay statement %s: %w", day, err)
	}
	defer func() { _ = tmp.Close(); _ = os.Remove(tmp.Name()) }()
	size, err := p.download(ctx, url, tmp)
	if err != nil {
		return fmt.Errorf("alipay statement %s: download: %w", day, err)
	}
	detail, err := detailFile(tmp, size)
	if err != nil {
		return fmt.Errorf("alipay statement %s: %w", day, err)
	}
	// First pass: the whole file checks out before any line leaves.
	if err := readDetail(detail, d, func(pay.StatementLine) error { return ctx.Err() }); err != nil {
		return fmt.Errorf("alipay statement %s: %w", day, err)
	}
	pages := pay.NewPager(fn)
	err = readDetail(detail, d, pages.Add)
	if err == nil {
		err = pages.Flush()
	}
	if err != nil {
		return fmt.Errorf("alipay statement %s: %w", day, err)
	}
	return nil
}

// billURL asks alipay.data.dataservice.bill.downloadurl.query for the day's
// trade bill; the SDK verifies the answer's signature.
func (p *Provider) billURL(ctx context.Context, day string) (string, error) {
	rsp, err := p.c.BillDownloadURLQuery(ctx, sdk.BillDownloadURLQuery{BillType: "trade", BillDate: day})
	var apiErr *sdk.Error
	switch {
	case errors.As(err, &apiErr) && apiErr.SubCode == billNotExist:
		return "", pay.ErrStatementNotReady
	case err != nil:
		return "", fmt.Errorf("alipay bill.downloadurl.query %s: %w", day, err)
	case !rsp.IsSuccess() && rsp.SubCode == billNotExist:
		return "", pay.ErrStatementNotReady
	case !rsp.IsSuccess():
		return "", fmt.Errorf("alipay bill.downloadurl.query %s: %w", day, rsp.Error)
	case rsp.BillDownloadURL == "":
		return "", fmt.Errorf("alipay bill.downloadurl.query %s: no bill_download_url", day)
	}
	return rsp.BillDownloadURL, nil
}

// download GETs the bill into f and returns its size.
func (p *Provider) download(ctx context.Context, url string, f *os.File) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := p.dl.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("status %d", resp.StatusCode)
	}
	return io.Copy(f, resp.Body)
}

// detailFile finds the detail CSV in the bill's zip. Alipay writes the
// names in GBK without the zip's UTF-8 flag.
func detailFile(r io.ReaderAt, size int64) (*zip.File, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("bill is not a zip: %w", err)
	}
	for _, f := range zr.File {
		name := f.Name
		if f.NonUTF8 {
			if name, err = simplifiedchinese.GBK.NewDecoder().String(f.Name); err != nil {
				continue
			}
		}
		if strings.HasSuffix(name, detailSuffix) {
			return f, nil
		}
	}
	return nil, fmt.Errorf("bill zip holds no *%s", detailSuffix)
}
