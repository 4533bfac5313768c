package httpapi

import "strconv"

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// keyBy maps each row's key to the row (a later row wins).
func keyBy[T any, K comparable](rows []T, key func(T) K) map[K]T {
	out := make(map[K]T, len(rows))
	for _, r := range rows {
		out[key(r)] = r
	}
	return out
}

// groupBy maps each key to the values of its rows, in row order.
func groupBy[T any, K comparable, V any](rows []T, kv func(T) (K, V)) map[K][]V {
	out := map[K][]V{}
	for _, r := range rows {
		k, v := kv(r)
		out[k] = append(out[k], v)
	}
	return out
}
