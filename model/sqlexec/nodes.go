package sqlexec

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
)

// A DSN whose address lists several nodes, `tcp(n1:3306,n2:3306,n3:3306)`,
// is a Galera cluster: each new connection goes to the first listed node
// that answers and is ready (wsrep_ready=ON), so a process lists its own
// node first and the others after it. Why in the product and not a local
// HAProxy: a proxy's health check only sees a port that accepts; this check
// sees a node that accepts but would refuse every statement (not primary,
// still joining), and a connection that meets WSREP's "not yet prepared"
// later is dropped instead of pooled (docs/ha.md).

// nodeDownFor is how long a node that failed a dial or its ready check is
// skipped before it is tried again (unless every node is skipped).
const nodeDownFor = 2 * time.Second

// nodeConnMaxLifetime bounds a connection's life when the DSN lists nodes, so
// a process drifts back to its own node within a minute of that node's return.
const nodeConnMaxLifetime = time.Minute

// errNotPrimary is Galera's "WSREP has not yet prepared node for
// application use": the node is joining, or lost quorum.
const errNotPrimary = 1047

// splitNodes takes the node list out of a DSN's `tcp(…)` address: the
// driver's parser would read `n1:3306,n2:3306` as one host. It returns the
// DSN with only the first node and the whole list (one node for an
// ordinary DSN).
func splitNodes(dsn string) (string, []string) {
	open := strings.Index(dsn, "@tcp(")
	if open < 0 {
		return dsn, nil
	}
	open += len("@tcp(")
	end := strings.IndexByte(dsn[open:], ')')
	if end < 0 {
		return dsn, nil
	}
	var nodes []string
	for _, a := range strings.Split(dsn[open:open+end], ",") {
		if a = strings.TrimSpace(a); a != "" {
			nodes = append(nodes, a)
		}
	}
	if len(nodes) < 2 {
		return dsn, nodes
	}
	return dsn[:open] + nodes[0] + dsn[open+end:], nodes
}

// nodeConnector opens connections to the first ready node of a list.
type nodeConnector struct {
	nodes []string
	conns []driver.Connector

	mu        sync.Mutex
	downUntil []time.Time
}

// newNodeConnector builds one driver connector per node from cfg.
func newNodeConnector(cfg *mysql.Config, nodes []string) (*nodeConnector, error) {
	nc := &nodeConnector{nodes: nodes, downUntil: make([]time.Time, len(nodes))}
	for _, n := range nodes {
		one := cfg.Clone()
		one.Addr = n
		// Through the text form, as gorm's own path does: the parser turns
		// parameters such as charset into settings instead of SET statements.
		c, err := mysql.ParseDSN(one.FormatDSN())
		if err != nil {
			return nil, fmt.Errorf("mysql node %s: %w", n, err)
		}
		conn, err := mysql.NewConnector(c)
		if err != nil {
			return nil, fmt.Errorf("mysql node %s: %w", n, err)
		}
		nc.conns = append(nc.conns, conn)
	}
	return nc, nil
}

// Connect implements driver.Connector: nodes in list order, skipping those
// that recently failed unless none is left.
func (nc *nodeConnector) Connect(ctx context.Context) (driver.Conn, error) {
	var errs []error
	for _, skipDown := range []bool{true, false} {
		for i := range nc.nodes {
			if skipDown && nc.isDown(i) {
				continue
			}
			c, err := nc.conns[i].Connect(ctx)
			if err == nil {
				if err = nodeReady(ctx, c); err == nil {
					return &nodeConn{Conn: c, nc: nc, node: i}, nil
				}
				_ = c.Close()
			}
			nc.markDown(i)
			errs = append(errs, fmt.Errorf("node %s: %w", nc.nodes[i], err))
			if ctx.Err() != nil {
				return nil, errors.Join(errs...)
			}
		}
	}
	return nil, errors.Join(errs...)
}

// Driver implements driver.Connector.
func (nc *nodeConnector) Driver() driver.Driver { return nc.conns[0].Driver() }

func (nc *nodeConnector) isDown(i int) bool {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	return time.Now().Before(nc.downUntil[i])
}

func (nc *nodeConnector) markDown(i int) {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	nc.downUntil[i] = time.Now().Add(nodeDownFor)
}

// nodeReady fails unless the server is outside a cluster or a ready member
// of one.
func nodeReady(ctx context.Context, c driver.Conn) error {
	q, ok := c.(driver.QueryerContext)
	if !ok {
		return nil
	}
	rows, err := q.QueryContext(ctx, "SELECT @@global.wsrep_on, "+
		"(SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_READY')", nil)
	if err != nil {
		if mysqlErrno(err) == 1193 { // no wsrep variables: not MariaDB, not a cluster
			return nil
		}
		return err
	}
	defer rows.Close()
	vals := make([]driver.Value, 2)
	if err := rows.Next(vals); err != nil {
		return err
	}
	on, ready := asText(vals[0]), strings.ToUpper(asText(vals[1]))
	if on == "1" && ready != "ON" {
		return fmt.Errorf("wsrep not ready (wsrep_ready=%s)", ready)
	}
	return nil
}

// asText renders a text-protocol value (bytes, a number or NULL).
func asText(v driver.Value) string {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return fmt.Sprint(v)
}

// nodeConn is a connection to one node. A statement refused with WSREP's
// "not yet prepared" marks the node down and the connection bad, so the
// pool drops it and the next connection goes to another node.
type nodeConn struct {
	driver.Conn
	nc   *nodeConnector
	node int
	bad  atomic.Bool
}

func (c *nodeConn) check(err error) error {
	if err != nil && mysqlErrno(err) == errNotPrimary {
		c.bad.Store(true)
		c.nc.markDown(c.node)
	}
	return err
}

// ExecContext implements driver.ExecerContext.
func (c *nodeConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	r, err := c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
	return r, c.check(err)
}

// QueryContext implements driver.QueryerContext.
func (c *nodeConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	r, err := c.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
	return r, c.check(err)
}

// PrepareContext implements driver.ConnPrepareContext.
func (c *nodeConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	s, err := c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	return s, c.check(err)
}

// BeginTx implements driver.ConnBeginTx.
func (c *nodeConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	t, err := c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
	return t, c.check(err)
}

// Ping implements driver.Pinger.
func (c *nodeConn) Ping(ctx context.Context) error {
	return c.check(c.Conn.(driver.Pinger).Ping(ctx))
}

// CheckNamedValue implements driver.NamedValueChecker (the driver's own
// conversions).
func (c *nodeConn) CheckNamedValue(nv *driver.NamedValue) error {
	return c.Conn.(driver.NamedValueChecker).CheckNamedValue(nv)
}

// ResetSession implements driver.SessionResetter.
func (c *nodeConn) ResetSession(ctx context.Context) error {
	if c.bad.Load() {
		return driver.ErrBadConn
	}
	return c.Conn.(driver.SessionResetter).ResetSession(ctx)
}

// IsValid implements driver.Validator: a refused connection is not pooled.
func (c *nodeConn) IsValid() bool {
	return !c.bad.Load() && c.Conn.(driver.Validator).IsValid()
}
