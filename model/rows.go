package model

import "context"

// rowOf loads the one row query names as a T; ErrNotFound when there is
// none. The By-key loaders are this with their table's query.
func rowOf[T any](ctx context.Context, s *Store, query string, args ...any) (*T, error) {
	var row T
	if err := s.first(ctx, &row, query, args...); err != nil {
		return nil, err
	}
	return &row, nil
}

// valueOf reads the one value query selects (a COUNT, a column).
func valueOf[T any](ctx context.Context, s *Store, query string, args ...any) (T, error) {
	var v T
	err := s.first(ctx, &v, query, args...)
	return v, err
}

// rowsOf lists the rows query names as Ts.
func rowsOf[T any](ctx context.Context, s *Store, query string, args ...any) ([]T, error) {
	var out []T
	err := s.all(ctx, &out, query, args...)
	return out, err
}

// rowsIn is rowsOf for a query whose IN list is keys: no keys, no rows,
// and no query (an empty IN list is not SQL).
func rowsIn[T any](ctx context.Context, s *Store, keys []string, query string, args ...any) ([]T, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	return rowsOf[T](ctx, s, query, args...)
}

// countsBy reads a count per key: query selects the key AS counted and
// COUNT(*) AS n, grouped by the key. A key with no rows is absent.
func countsBy[K comparable](ctx context.Context, s *Store, query string, args ...any) (map[K]int64, error) {
	var rows []struct {
		Counted K
		N       int64
	}
	if err := s.all(ctx, &rows, query, args...); err != nil {
		return nil, err
	}
	out := make(map[K]int64, len(rows))
	for _, r := range rows {
		out[r.Counted] = r.N
	}
	return out, nil
}
