package handler

import (
	"io"
	"net/http"

	"orderflow/internal/domain/order"

	"go.uber.org/zap"
)

type checkoutBody struct {
	Provider string `json:"provider"`
}

// checkout starts (or returns) the payment of a pending order at a provider.
func (h *Handler) checkout(w http.ResponseWriter, r *http.Request) {
	var b checkoutBody
	if h.failed(w, r, decode(r, &b)) {
		return
	}
	if b.Provider == "" {
		writeError(w, r, h.log, order.ErrUnknownProvider)
		return
	}
	v, err := h.uc.Orders.Checkout(r.Context(), r.PathValue("order_no"), b.Provider, viewerOf(r))
	h.reply(w, r, http.StatusOK, v, err)
}

// providerNotify is a provider's notification endpoint: the raw body goes to
// the provider to verify before anything reads it, and the answer is in the
// provider's own convention (Provider.Answer).
func (h *Handler) providerNotify(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, ok := h.uc.Pay.Get(name)
		if !ok {
			writeError(w, r, h.log, errProviderNotEnabled)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, 64<<10))
		if err != nil {
			p.Answer(w, false)
			return
		}
		// Verified here, where the request is: nothing of it is read before.
		ev, err := p.Parse(r, body)
		if err != nil {
			h.log.Warn("provider notification refused", zap.String("provider", name), zap.Error(err))
			p.Answer(w, false)
			return
		}
		p.Answer(w, h.uc.Payments.Notified(r.Context(), name, ev) == nil)
	}
}
