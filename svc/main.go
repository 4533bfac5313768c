package svc

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Main is every long-running binary's main: run gets the command-line
// arguments and a context that ends at SIGTERM or SIGINT (the stop request
// of a supervisor or a terminal); its error becomes one line "<name>: <err>"
// on stderr and exit status 1.
func Main(name string, run func(ctx context.Context, args []string) error) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}
