package handler

import "testing"

// asynqmon shows a task's payload with the console page of what it is about.
func TestWithStory(t *testing.T) {
	tests := []struct{ payload, want string }{
		{`{"order_no":"O1","gen":2}`, `{"order_no":"O1","gen":2}  — story: /console/story?no=O1`},
		{`{"refund_no":"RF1","gen":1}`, `{"refund_no":"RF1","gen":1}  — story: /console/story?no=RF1`},
		{`{"group_no":"G1","gen":1}`, `{"group_no":"G1","gen":1}  — story: /console/story?no=G1`},
		{`{"slot":"x"}`, `{"slot":"x"}`},
		{`not json`, `not json`},
	}
	for _, tc := range tests {
		if got := withStory("t", []byte(tc.payload)); got != tc.want {
			t.Errorf("withStory(%s) = %q, want %q", tc.payload, got, tc.want)
		}
	}
}
