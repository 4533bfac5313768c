package rediscmd

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCountNamesEachCommandByShape(t *testing.T) {
	wire := strings.Join([]string{
		"*2\r\n$3\r\nGET\r\n$18\r\ncache:order:no:123\r\n",
		"*4\r\n$7\r\nevalsha\r\n$3\r\nabc\r\n$1\r\n1\r\n$24\r\nasynq:{critical}:pending\r\n",
		"*3\r\n$4\r\nEVAL\r\n$6\r\nreturn\r\n$1\r\n0\r\n",
		"PING\r\n",
		"\r\n", // an empty inline line is no command
		"*1\r\n$5\r\nMULTI\r\n",
		"*x\r\n", // unparseable: read on and dropped
		"*1\r\n$4\r\nEXEC\r\n",
	}, "")
	var got []string
	Count(strings.NewReader(wire), func(shape string) { got = append(got, shape) })
	want := []string{"GET cache:order:no:*", "EVALSHA asynq:{critical}:pending", "EVAL (no keys)", "PING", "MULTI"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("shapes (-want +got):\n%s", diff)
	}
}
