package strictjson

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// Messages speak of JSON values, never of Go types.
func TestJSONKindNamesNoGoType(t *testing.T) {
	type obj struct{ A int }
	for _, tc := range []struct {
		t    reflect.Type
		want string
	}{
		{reflect.TypeFor[string](), "a string"},
		{reflect.TypeFor[int](), "a whole number"},
		{reflect.TypeFor[uint32](), "a whole number ≥ 0"},
		{reflect.TypeFor[float64](), "a number"},
		{reflect.TypeFor[bool](), "true or false"},
		{reflect.TypeFor[[]string](), "a list of strings"},
		{reflect.TypeFor[[][]int](), "a list of lists of whole numbers"},
		{reflect.TypeFor[[]uint64](), "a list of whole numbers ≥ 0"},
		{reflect.TypeFor[*obj](), "an object"},
		{reflect.TypeFor[map[string]int](), "an object"},
		{reflect.TypeFor[[]obj](), "a list of objects"},
	} {
		require.Equal(t, tc.want, JSONKind(tc.t), tc.t.String())
	}
	var v struct {
		Outputs []string `json:"outputs"`
		N       *int     `json:"n"`
	}
	err := Decode([]byte(`{"outputs": "z"}`), &v)
	require.EqualError(t, err, "outputs: want a list of strings, got a string")
	err = Decode([]byte(`{"n": 1.5}`), &v)
	require.EqualError(t, err, "n: want a whole number, got the number 1.5")
	err = Decode([]byte(`[1]`), &v)
	require.EqualError(t, err, "the file must hold one JSON object, got a list")
}
