package model_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"orderflow/model"
)

// stateDiagramsDoc is the page whose diagrams must draw the tables.
const stateDiagramsDoc = "../docs/state-machines.md"

// diagramEdge is one "A --> B" line of a Mermaid stateDiagram ("A --> B : label"
// alike); [*] stands for the start or the end.
var diagramEdge = regexp.MustCompile(`^(\S+)\s*-->\s*(\S+)\s*(?::.*)?$`)

// diagrams reads every mermaid block of doc into its machine's edges, the
// machine named by the block's "%% machine: <object>" line.
func diagrams(doc string) (map[string][]string, error) {
	out := map[string][]string{}
	var machine string
	in := false
	for i, line := range strings.Split(doc, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "```mermaid":
			in, machine = true, ""
		case !in:
		case line == "```":
			if machine == "" {
				return nil, fmt.Errorf("line %d: a mermaid block names no machine (%%%% machine: <object>)", i+1)
			}
			in = false
		case strings.HasPrefix(line, "%% machine:"):
			machine = strings.TrimSpace(strings.TrimPrefix(line, "%% machine:"))
			if _, dup := out[machine]; dup {
				return nil, fmt.Errorf("line %d: a second diagram of machine %s", i+1, machine)
			}
			out[machine] = []string{}
		case strings.Contains(line, "-->"):
			m := diagramEdge.FindStringSubmatch(line)
			if m == nil || machine == "" {
				return nil, fmt.Errorf("line %d: cannot read %q as an edge of a named machine", i+1, line)
			}
			out[machine] = append(out[machine], m[1]+" --> "+m[2])
		}
	}
	return out, nil
}

// tableEdges is what a diagram of t must draw: its start, every move, and
// an end for every terminal status.
func tableEdges(t model.Table) []string {
	out := []string{"[*] --> " + t.Initial}
	for _, e := range t.Edges {
		out = append(out, e.From+" --> "+e.To)
	}
	for _, s := range t.Terminal {
		out = append(out, s+" --> [*]")
	}
	return out
}

// TestStateMachineDiagrams fails, naming the edge, when a table in
// model/transitions.go and its diagram in docs/state-machines.md disagree,
// in either direction.
func TestStateMachineDiagrams(t *testing.T) {
	doc, err := os.ReadFile(stateDiagramsDoc)
	if err != nil {
		t.Fatal(err)
	}
	drawn, err := diagrams(string(doc))
	if err != nil {
		t.Fatalf("%s: %v", stateDiagramsDoc, err)
	}
	for _, tb := range model.Tables() {
		got, ok := drawn[tb.Object]
		if !ok {
			t.Errorf("%s has no diagram of machine %s", stateDiagramsDoc, tb.Object)
			continue
		}
		delete(drawn, tb.Object)
		want := tableEdges(tb)
		for _, e := range want {
			if !slices.Contains(got, e) {
				t.Errorf("%s: the table allows %s but %s does not draw it", tb.Object, e, stateDiagramsDoc)
			}
		}
		for _, e := range got {
			if !slices.Contains(want, e) {
				t.Errorf("%s: %s draws %s but the table does not allow it", tb.Object, stateDiagramsDoc, e)
			}
		}
	}
	for m := range drawn {
		t.Errorf("%s draws machine %s, which model/transitions.go does not have", stateDiagramsDoc, m)
	}
}
