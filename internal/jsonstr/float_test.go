package jsonstr

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAppendFloat(t *testing.T) {
	for f, want := range map[float64]string{1: "1.0", 0.25: "0.25", 1e21: "1e+21", 5e-324: "5e-324", -3: "-3.0", 0: "0.0", math.MaxFloat64: "1.7976931348623157e+308"} {
		assert.Equal(t, want, string(AppendFloat([]byte("x"), f))[1:])
	}
}
