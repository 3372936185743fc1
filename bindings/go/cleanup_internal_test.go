package gpumst

import (
	"runtime"
	"testing"
	"time"
)

// A Context dropped without Close is destroyed by its cleanup; a closed one is
// not destroyed twice.
func TestUnreachableContextsAreReleased(t *testing.T) {
	before := unclosedDestroyed.Load()
	const dropped = 8
	for range dropped {
		if _, err := NewContext(Options{Tier: TierCPU, Threads: 1}); err != nil {
			t.Fatal(err)
		}
	}
	closed, err := NewContext(Options{Tier: TierCPU, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	closed = nil
	deadline := time.Now().Add(10 * time.Second)
	for unclosedDestroyed.Load()-before < dropped && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	if got := unclosedDestroyed.Load() - before; got != dropped {
		t.Fatalf("%d unclosed contexts were released by their cleanup, want %d (the closed one must not be)", got, dropped)
	}
}
