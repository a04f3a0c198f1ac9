package backends

import (
	"testing"

	"github.com/zyxtt/zyxtt/internal/shmtest"
)

// The host pool's segments go to a private tmpfs directory, so these tests
// neither see nor leave segments among other processes' ones.
func TestMain(m *testing.M) { shmtest.Main(m) }
