package paysim

import (
	"strings"
	"time"

	"go.uber.org/zap"
)

// DefaultTimeoutDelay is how long an injected timeout hangs when
// Config.TimeoutDelay is zero: longer than orderflow's provider-client
// timeout should be, so the client gives up first and sees "unknown outcome".
const DefaultTimeoutDelay = 3 * time.Second

// Config configures a Sim. Rates are shares in [0, 1]; values outside are clamped.
type Config struct {
	// Secret is the HMAC secret shared with orderflow (ORDERFLOW_PAY_SECRET).
	Secret string
	// NotifyBaseURL is orderflow's API base, e.g. http://127.0.0.1:8080;
	// payment notifications and refund callbacks are POSTed below it.
	NotifyBaseURL string
	// FailRate is the share of refund calls (create and query) answered 500
	// without touching the refund.
	FailRate float64
	// TimeoutRate is the share of refund calls that hang for TimeoutDelay and
	// then answer 504; a hanging create is applied or not at random first.
	TimeoutRate float64
	// TimeoutDelay is how long an injected timeout hangs (DefaultTimeoutDelay if zero).
	TimeoutDelay time.Duration
	// Delay is added to every refund call before it is answered.
	Delay time.Duration
	// CallbackDelay is how long a refund stays "processing" before it succeeds
	// and the callback is sent; zero means refunds succeed in the create answer.
	CallbackDelay time.Duration
	// Seed seeds the fault-injection dice so a run can be replayed; zero picks
	// a seed from the clock.
	Seed int64
	// Logger receives the simulator's logs; nil discards them.
	Logger *zap.Logger
}

// withDefaults fills the zero values that have a non-zero default.
func (c Config) withDefaults() Config {
	if c.TimeoutDelay <= 0 {
		c.TimeoutDelay = DefaultTimeoutDelay
	}
	if c.Seed == 0 {
		c.Seed = time.Now().UnixNano()
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	c.NotifyBaseURL = strings.TrimRight(c.NotifyBaseURL, "/")
	c.FailRate = clampRate(c.FailRate)
	c.TimeoutRate = clampRate(c.TimeoutRate)
	c.Delay = max(c.Delay, 0)
	c.CallbackDelay = max(c.CallbackDelay, 0)
	return c
}

func clampRate(r float64) float64 {
	switch {
	case r != r || r < 0: // NaN counts as "never"
		return 0
	case r > 1:
		return 1
	}
	return r
}
