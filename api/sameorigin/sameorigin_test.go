package sameorigin

import (
	"crypto/tls"
	"net/http/httptest"
	"testing"
)

func TestOf(t *testing.T) {
	tests := []struct {
		name            string
		origin, referer string
		tls             bool
		proxied         bool // behind a proxy that ended TLS
		want            Source
	}{
		{"neither header", "", "", false, false, Unstated},
		{"same origin", "http://console.example:8080", "", false, false, Same},
		{"same origin over TLS", "https://console.example:8080", "", true, false, Same},
		{"same origin over TLS ended at a proxy", "https://console.example:8080", "", false, true, Same},
		{"other host", "http://evil.example", "", false, false, Cross},
		{"other port", "http://console.example:9090", "", false, false, Cross},
		{"https page posting to http", "https://console.example:8080", "", false, false, Cross},
		{"null origin (sandboxed frame)", "null", "", false, false, Cross},
		{"same-site referer", "", "http://console.example:8080/console/", false, false, Same},
		{"cross-site referer", "", "http://evil.example/console/", false, false, Cross},
		{"origin wins over referer", "http://evil.example", "http://console.example:8080/console/", false, false, Cross},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "http://console.example:8080/console/orders/O1/retry", nil)
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			if tc.referer != "" {
				r.Header.Set("Referer", tc.referer)
			}
			if tc.tls {
				r.TLS = &tls.ConnectionState{}
			}
			if tc.proxied {
				r.Header.Set("X-Forwarded-Proto", "https")
			}
			if got := Of(r); got != tc.want {
				t.Errorf("Of = %v, want %v", got, tc.want)
			}
		})
	}
}
