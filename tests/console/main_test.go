package console

import (
	"testing"

	"orderflow/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }
