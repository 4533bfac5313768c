package handler

import "orderflow/internal/domain/apperr"

// The API's own refusals, before any use case runs. The use cases' errors
// (internal/domain) carry their own codes; writeError maps both.
var (
	// Not the caller's to make, or not signed.
	errUnauthorized = apperr.New(apperr.Unauthorized, "unauthorized", "missing or unknown bearer token")
	errForbidden    = apperr.New(apperr.Forbidden, "forbidden", "user_id must be the caller")
	errBadSignature = apperr.New(apperr.Unauthorized, "bad_signature", "X-Signature is missing or does not match the body")
	// A change to /monitoring/ that another site's page may have sent.
	errCrossSite = apperr.New(apperr.Forbidden, "cross_site", "cross-site request refused: send it from the dashboard's own pages")

	// A body that cannot be read, or is not the JSON the endpoint takes.
	errBodyTooLarge = apperr.New(apperr.Invalid, "body_too_large", "request body is too large or unreadable")
	errBadJSON      = apperr.New(apperr.Invalid, "invalid_json", "request body is not valid JSON for this endpoint")

	// A path or query parameter out of its bounds.
	errBadID     = apperr.New(apperr.Invalid, "invalid_id", "id must be a positive integer")
	errBadStatus = apperr.New(apperr.Invalid, "invalid_status", "unknown status")

	// A buyer's body field the handler checks itself (the use cases check the rest).
	errBadProduct  = apperr.New(apperr.Invalid, "invalid_product", "product_id must be a positive integer")
	errBadDeadline = apperr.New(apperr.Invalid, "invalid_deadline", "deadline must be an RFC 3339 time")

	// A provider notification's field missing or out of its bounds.
	errBadOrderNo      = apperr.New(apperr.Invalid, "invalid_order_no", "order_no is required")
	errBadTradeNo      = apperr.New(apperr.Invalid, "invalid_trade_no", "trade_no must be 1..64 characters")
	errBadRefundNotify = apperr.New(apperr.Invalid, "invalid_refund_notify", "out_request_no and status are required")
	// A notification for a provider this deployment does not enable.
	errProviderNotEnabled = apperr.New(apperr.NotFound, "not_found", "this payment provider is not enabled")
)
