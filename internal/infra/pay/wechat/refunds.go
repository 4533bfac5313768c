package wechat

import (
	"context"

	"orderflow/internal/infra/pay"

	"github.com/wechatpay-apiv3/wechatpay-go/core"
	"github.com/wechatpay-apiv3/wechatpay-go/services/refunddomestic"
)

// Refund asks WeChat Pay to return the money with out_refund_no = refund_no:
// WeChat Pay answers a second request with the same out_refund_no with the
// refund it already has, so a re-send never refunds twice.
func (p *Provider) Refund(ctx context.Context, req pay.RefundRequest) (string, error) {
	r, _, err := p.refunds.Create(ctx, refunddomestic.CreateRequest{
		TransactionId: core.String(req.TradeNo),
		OutRefundNo:   core.String(req.RefundNo),
		NotifyUrl:     core.String(p.cfg.NotifyURL),
		Amount: &refunddomestic.AmountReq{
			Refund:   core.Int64(req.AmountCents),
			Total:    core.Int64(req.TotalCents),
			Currency: core.String(currency),
		},
	})
	if err != nil {
		return "", callErr("refund "+req.RefundNo, err)
	}
	return refundStatus(r.Status), nil
}

// QueryRefund asks for the refund by out_refund_no.
func (p *Provider) QueryRefund(ctx context.Context, req pay.RefundRequest) (string, error) {
	r, _, err := p.refunds.QueryByOutRefundNo(ctx, refunddomestic.QueryByOutRefundNoRequest{
		OutRefundNo: core.String(req.RefundNo),
	})
	if notFound(err) {
		return "", pay.ErrNotFound
	}
	if err != nil {
		return "", callErr("query refund "+req.RefundNo, err)
	}
	return refundStatus(r.Status), nil
}

// refundStatus maps WeChat Pay's refund status: SUCCESS is final, CLOSED
// and ABNORMAL (the buyer's account cannot take it) need a person.
func refundStatus(s *refunddomestic.Status) string {
	if s == nil {
		return pay.RefundProcessing
	}
	return statusWord(string(*s))
}

func statusWord(s string) string {
	switch s {
	case "SUCCESS":
		return pay.RefundSucceeded
	case "CLOSED", "ABNORMAL":
		return pay.RefundFailed
	default:
		return pay.RefundProcessing
	}
}
