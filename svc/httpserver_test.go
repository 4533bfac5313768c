package svc_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"orderflow/internal/testenv"
	"orderflow/svc"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// Serve answers until its context ends, then drains and returns nil; the
// "<name> listening" line (which scripts and tests wait for) names the
// bound address.
func TestServeUntilContextEnds(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.InfoLevel)
	srv := svc.Defaults().HTTPServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Serve(ctx, zap.New(core), "api", srv, ln, time.Second) }()

	resp, err := http.Get("http://" + ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot {
		t.Errorf("status = %d, want %d", resp.StatusCode, http.StatusTeapot)
	}
	cancel()
	if err := testenv.Receive(t, done, 5*time.Second, "Serve to return after its context ended"); err != nil {
		t.Errorf("Serve after the context ended = %v, want nil", err)
	}
	if got := logs.FilterMessage("api listening").All(); len(got) != 1 || got[0].ContextMap()["addr"] != ln.Addr().String() {
		t.Errorf("listening lines = %v, want one naming %s", got, ln.Addr())
	}
}

// A listener that fails is an error at once, naming the address: the
// process must not look alive without its port.
func TestServeFailsWithItsListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	err = svc.Serve(context.Background(), zap.NewNop(), "api", svc.Defaults().HTTPServer(http.NotFoundHandler()), ln, time.Second)
	if err == nil || !strings.Contains(err.Error(), addr) {
		t.Errorf("Serve on a closed listener = %v, want an error naming %s", err, addr)
	}
}
