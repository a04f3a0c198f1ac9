package driver

import "sync"

// ReleaseOnce is the body of an executable's Release as the executable
// contract has it: the first call marks *released and runs free, both
// under mu (the lock the executable's launches hold, so that none is
// halfway through); every later call does nothing and returns nil.
func ReleaseOnce(mu sync.Locker, released *bool, free func() error) error {
	mu.Lock()
	defer mu.Unlock()
	if *released {
		return nil
	}
	*released = true
	return free()
}
