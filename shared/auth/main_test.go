package auth_test

import (
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }
