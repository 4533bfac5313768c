package payments

import (
	"context"
	"sync/atomic"
)

// notifyingFake is what the WeChat Pay and Stripe fakes have in common: a
// payment whose notification they send (or drop), and a forged one.
type notifyingFake[N interface{ Tampered() N }] interface {
	Pay(ctx context.Context, orderNo string) (N, int, error)
	ForgedNotification(orderNo string, misSign bool) (N, error)
	RefundSends(refundNo string) int
}

// fakeSwitches are the fake's switches the suite flips.
type fakeSwitches struct {
	dropPayNotify, dropRefundNotify, refundTimeout *atomic.Bool
}

// notifyingProvider is fakeProvider's pay, forged, refundSends and refunds
// for such a fake, whose notifications onWire reads as sent; the caller
// sets the rest.
func notifyingProvider[N interface{ Tampered() N }](f notifyingFake[N], sw fakeSwitches, onWire func(N) wire) fakeProvider {
	return fakeProvider{
		pay: func(ctx context.Context, orderNo string, drop bool) (wire, error) {
			sw.dropPayNotify.Store(drop)
			n, _, err := f.Pay(ctx, orderNo)
			if err != nil {
				return wire{}, err
			}
			return onWire(n), nil
		},
		forged: func(orderNo string, misSign bool) (wire, error) {
			n, err := f.ForgedNotification(orderNo, misSign)
			if err != nil {
				return wire{}, err
			}
			if !misSign {
				n = n.Tampered()
			}
			return onWire(n), nil
		},
		refundSends: f.RefundSends,
		refunds: func(drop, timeout bool) {
			sw.dropRefundNotify.Store(drop)
			sw.refundTimeout.Store(timeout)
		},
	}
}
