package devmode

import (
	"context"

	"orderflow/internal/jsonhttp"
)

// client calls the running system's HTTP API the way a user would.
type client struct {
	api jsonhttp.Client
}

// call sends body as JSON with the bearer token and decodes a 2xx answer
// into out (when not nil); anything else is an error naming the call.
func (c *client) call(ctx context.Context, method, path, token string, body, out any) error {
	return c.api.Call(ctx, jsonhttp.Request{Method: method, Path: path, Bearer: token, Body: body}, out)
}
