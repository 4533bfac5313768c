package httpapi

import "strconv"

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// groupBy maps each key to the values of its rows, in row order.
func groupBy[T any, K comparable, V any](rows []T, kv func(T) (K, V)) map[K][]V {
	out := map[K][]V{}
	for _, r := range rows {
		k, v := kv(r)
		out[k] = append(out[k], v)
	}
	return out
}
