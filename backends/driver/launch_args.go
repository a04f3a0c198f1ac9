package driver

// SplitArgs splits a checked launch's args by p's params: it returns the
// buffers' ids in param order, and hands each scalar's bytes, as encode
// makes them, to set with the param's index. A scalar that encode refuses
// is ErrUnsupported for backend's "launch", naming the param.
func SplitArgs(backend string, p *Program, args []LaunchArg, encode func(Constant) ([]byte, error), set func(i int, val []byte)) ([]BufferID, error) {
	var ids []BufferID
	for i, a := range args {
		if p.Params[i].Kind.IsBuffer() {
			ids = append(ids, a.Buffer)
			continue
		}
		val, err := encode(a.Value)
		if err != nil {
			return nil, Errorf(backend, "launch", ErrUnsupported, "param %d: %v", i, err)
		}
		set(i, val)
	}
	return ids, nil
}
