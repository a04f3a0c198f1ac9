// Command protogen writes the files made from the protocol's description,
// protocol/protocol.json: ttruntime/protocol_gen.go, the C++ tables
// cpp/src/protocol_enums_gen.hpp and cpp/src/protocol_fields_gen.hpp, and
// the generated tables of docs/protocol.md. `go generate ./ttruntime` runs
// it; -check only reports the files that are not up to date.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/zyxtt/zyxtt/internal/protogen"
)

func main() {
	root := flag.String("root", "", "the repository root (default: the nearest directory with a go.mod)")
	check := flag.Bool("check", false, "write nothing; exit 1 when a generated file is not up to date")
	flag.Parse()
	if err := run(*root, *check); err != nil {
		fmt.Fprintln(os.Stderr, "protogen:", err)
		os.Exit(1)
	}
}

func run(root string, check bool) error {
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		if root, err = protogen.RepoRoot(wd); err != nil {
			return err
		}
	}
	files, err := protogen.Generate(root)
	if err != nil {
		return err
	}
	if check {
		if stale := protogen.Stale(root, files); len(stale) > 0 {
			return fmt.Errorf("not up to date (run go generate ./ttruntime): %v", stale)
		}
		return nil
	}
	_, err = protogen.Write(root, files)
	return err
}
