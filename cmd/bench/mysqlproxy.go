package main

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"regexp"
	"strings"
	"sync"
)

// MySQL client/server protocol command bytes.
const (
	comQuit        = 0x01
	comQuery       = 0x03
	comStmtPrepare = 0x16
	comStmtExecute = 0x17
	comStmtClose   = 0x19
)

// mysqlConn remembers what each prepared statement ID stands for.
type mysqlConn struct {
	mu      sync.Mutex
	pending string // text of a COM_STMT_PREPARE awaiting its OK
	stmts   map[uint32]string
}

// serveMySQL sits between one client and MariaDB and counts the commands it
// sends, by statement when counts names them (the census of round trips per
// order), else round trips only.
func serveMySQL(counts *counter, client, server net.Conn) {
	if !counts.shapes {
		go func() {
			defer client.Close()
			_, _ = io.Copy(client, server)
		}()
		_ = pumpPackets(client, server, func(seq byte, payload []byte) {
			if seq == 0 && len(payload) > 0 && payload[0] != comStmtClose && payload[0] != comQuit {
				counts.addRoundTrip()
			}
		})
		return
	}
	st := &mysqlConn{stmts: map[uint32]string{}}
	// Each direction parses a packet, records it, then forwards it: the
	// statement ID of a prepare is known before the client can use it, and
	// a prepare is pending before the server can answer it.
	go func() {
		defer client.Close()
		_ = pumpPackets(server, client, func(seq byte, payload []byte) {
			st.mu.Lock()
			if st.pending != "" && seq == 1 {
				if len(payload) >= 5 && payload[0] == 0x00 {
					st.stmts[binary.LittleEndian.Uint32(payload[1:5])] = st.pending
				}
				st.pending = ""
			}
			st.mu.Unlock()
		})
	}()
	_ = pumpPackets(client, server, func(seq byte, payload []byte) {
		// Every command starts a new sequence (seq 0); the handshake never does.
		if seq != 0 || len(payload) == 0 {
			return
		}
		switch payload[0] {
		case comQuery:
			counts.add("query   "+digestSQL(string(payload[1:])), true)
		case comStmtPrepare:
			text := digestSQL(string(payload[1:]))
			st.mu.Lock()
			st.pending = text
			st.mu.Unlock()
			counts.add("prepare "+text, true)
		case comStmtExecute:
			var text string
			if len(payload) >= 5 {
				st.mu.Lock()
				text = st.stmts[binary.LittleEndian.Uint32(payload[1:5])]
				st.mu.Unlock()
			}
			if text == "" {
				text = "(unknown statement)"
			}
			counts.add("execute "+text, true)
		case comStmtClose:
			counts.add("close-stmt", false) // no answer: not a round trip
		case comQuit:
			counts.add("quit", false)
		default:
			counts.add("command 0x"+hexByte(payload[0]), true)
		}
	})
}

// pumpPackets copies protocol packets from src to dst, calling seen on each
// before forwarding it; writes are flushed whenever src has nothing buffered.
func pumpPackets(src io.Reader, dst io.Writer, seen func(seq byte, payload []byte)) error {
	r := bufio.NewReaderSize(src, 64<<10)
	w := bufio.NewWriterSize(dst, 64<<10)
	for {
		h, payload, err := readPacket(r)
		if err != nil {
			return err
		}
		seen(h[3], payload)
		if _, err := w.Write(h[:]); err != nil {
			return err
		}
		if _, err := w.Write(payload); err != nil {
			return err
		}
		if r.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
}

// readPacket reads one protocol packet: a header (3-byte length, sequence)
// and its payload.
func readPacket(r *bufio.Reader) ([4]byte, []byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return h, nil, err
	}
	n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	payload := make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		return h, nil, err
	}
	return h, payload, nil
}

var (
	spaces      = regexp.MustCompile(`\s+`)
	quoted      = regexp.MustCompile(`(?:_binary)?'(?:[^'\\]|\\.)*'`)
	numbers     = regexp.MustCompile(`\b\d+(?:\.\d+)?\b`)
	placeholder = regexp.MustCompile(`\(\s*\?(\s*,\s*\?)*\s*\)`)
)

// digestSQL shortens a statement to its shape: one line, literals (the
// driver interpolates arguments client-side) and placeholder lists folded to
// "?", long text cut.
func digestSQL(q string) string {
	q = strings.TrimSpace(spaces.ReplaceAllString(q, " "))
	q = quoted.ReplaceAllString(q, "?")
	q = numbers.ReplaceAllString(q, "?")
	q = placeholder.ReplaceAllString(q, "(?…)")
	if r := []rune(q); len(r) > 110 {
		q = string(r[:107]) + "..." // by rune: "(?…)" is multi-byte
	}
	return q
}

func hexByte(b byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[b>>4], digits[b&0xf]})
}
