package handler

import "orderflow/internal/domain/apperr"

// The API's own refusals, before any use case runs: a request that is not
// well formed, not signed, or not the caller's to make. The use cases'
// errors (internal/domain) carry their own codes; writeError maps both.
var (
	errUnauthorized = apperr.New(apperr.Unauthorized, "unauthorized", "missing or unknown bearer token")
	errForbidden    = apperr.New(apperr.Forbidden, "forbidden", "user_id must be the caller")
	errBadSignature = apperr.New(apperr.Unauthorized, "bad_signature", "X-Signature is missing or does not match the body")

	errBodyTooLarge = apperr.New(apperr.Invalid, "body_too_large", "request body is too large or unreadable")
	// errBadJSON is a body that is not the JSON the endpoint takes.
	errBadJSON         = apperr.New(apperr.Invalid, "invalid_json", "request body is not valid JSON for this endpoint")
	errBadID           = apperr.New(apperr.Invalid, "invalid_id", "id must be a positive integer")
	errBadStatus       = apperr.New(apperr.Invalid, "invalid_status", "unknown status")
	errBadProduct      = apperr.New(apperr.Invalid, "invalid_product", "product_id must be a positive integer")
	errBadDeadline     = apperr.New(apperr.Invalid, "invalid_deadline", "deadline must be an RFC 3339 time")
	errBadOrderNo      = apperr.New(apperr.Invalid, "invalid_order_no", "order_no is required")
	errBadTradeNo      = apperr.New(apperr.Invalid, "invalid_trade_no", "trade_no must be 1..64 characters")
	errBadRefundNotify = apperr.New(apperr.Invalid, "invalid_refund_notify", "out_request_no and status are required")
)
