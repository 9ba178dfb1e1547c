package inlinehttp

import (
	"testing"

	"go.uber.org/goleak"
)

// No test leaves a goroutine behind: the transport starts none.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
