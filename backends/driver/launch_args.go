package driver

import "github.com/zyxtt/zyxtt/backends"

// SplitArgs splits a checked launch's args by p's params: it returns the
// buffers' ids in param order, and hands each scalar's bytes, as encode
// makes them, to set with the param's index. A scalar that encode refuses
// is ErrUnsupported for backend's "launch", naming the param.
func SplitArgs(backend string, p *backends.Program, args []backends.LaunchArg, encode func(backends.Constant) ([]byte, error), set func(i int, val []byte)) ([]backends.BufferID, error) {
	var ids []backends.BufferID
	for i, a := range args {
		if p.Params[i].Kind.IsBuffer() {
			ids = append(ids, a.Buffer)
			continue
		}
		val, err := encode(a.Value)
		if err != nil {
			return nil, backends.Errorf(backend, "launch", backends.ErrUnsupported, "param %d: %v", i, err)
		}
		set(i, val)
	}
	return ids, nil
}
