package ttruntime_test

import json "github.com/goccy/go-json"

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
