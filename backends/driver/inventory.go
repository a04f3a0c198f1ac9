package driver

import "context"

// Fact is one labelled fact about a piece of hardware, in display order.
type Fact struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Hardware is something a backend found on the host (a card, a platform, a
// library), whether or not it became a device, with what is known about it
// and what is wrong with it.
type Hardware struct {
	Name     string   `json:"name"`
	Facts    []Fact   `json:"facts,omitempty"`
	Problems []string `json:"problems,omitempty"`
}

// Inventory is an optional driver capability (see backends/driver): it lists
// the hardware the backend found, for `zyx-tt probe` (Runtime.Inventory). A Tenstorrent driver reports each card
// (PCI address, board, chips, DRAM, firmware) even when no runtime is
// available to drive it.
type Inventory interface {
	Inventory(ctx context.Context) []Hardware
}
