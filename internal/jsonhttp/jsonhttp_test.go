package jsonhttp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// seen is what the test server was sent.
type seen struct {
	Method, Path, ContentType, Authorization, Signature, Body string
}

func TestCallAndSend(t *testing.T) {
	var got seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = seen{r.Method, r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("Authorization"), r.Header.Get("X-Signature"), string(b)}
		w.Header().Set("X-Answer", "yes")
		if r.URL.Path == "/refuse" {
			w.WriteHeader(http.StatusConflict)
			_, _ = io.WriteString(w, "  {\"error\":\"group_closed\"}\n")
			return
		}
		_, _ = io.WriteString(w, `{"id":7}`)
	}))
	defer srv.Close()
	c := Client{Base: srv.URL}
	ctx := context.Background()

	tests := []struct {
		name    string
		req     Request
		want    seen
		wantID  int
		wantErr *StatusError
	}{
		{
			name: "a value is encoded, the bearer set",
			req:  Request{Method: http.MethodPost, Path: "/things", Bearer: "tok", Body: map[string]int{"n": 1}},
			want: seen{"POST", "/things", "application/json", "Bearer tok", "", `{"n":1}`}, wantID: 7,
		},
		{
			name: "raw JSON is sent as it is, headers added",
			req:  Request{Method: http.MethodPost, Path: "/signed", Header: map[string]string{"X-Signature": "sig"}, Body: json.RawMessage(`{ "a" : 1 }`)},
			want: seen{"POST", "/signed", "application/json", "", "sig", `{ "a" : 1 }`}, wantID: 7,
		},
		{
			name: "no body",
			req:  Request{Method: http.MethodGet, Path: "/things/7"},
			want: seen{"GET", "/things/7", "application/json", "", "", ""}, wantID: 7,
		},
		{
			name:    "a non-2xx answer is a StatusError with the trimmed body",
			req:     Request{Method: http.MethodPost, Path: "/refuse", Body: json.RawMessage("{}")},
			want:    seen{"POST", "/refuse", "application/json", "", "", "{}"},
			wantErr: &StatusError{Method: "POST", Path: "/refuse", Status: http.StatusConflict, Body: `{"error":"group_closed"}`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out struct {
				ID int `json:"id"`
			}
			err := c.Call(ctx, tc.req, &out)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
			var se *StatusError
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("Call: %v", err)
			case tc.wantErr != nil && !errors.As(err, &se):
				t.Fatalf("Call: %v, want a *StatusError", err)
			case tc.wantErr != nil:
				if diff := cmp.Diff(tc.wantErr, se); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
			}
			if out.ID != tc.wantID {
				t.Errorf("decoded id %d, want %d", out.ID, tc.wantID)
			}
		})
	}

	// Send hands back any answer, with its headers.
	a, err := c.Send(ctx, Request{Method: http.MethodGet, Path: "/refuse"})
	if err != nil || a.Status != http.StatusConflict || a.Header.Get("X-Answer") != "yes" {
		t.Errorf("Send = %d %v, %v; want 409 with X-Answer, no error", a.Status, a.Header, err)
	}
}
