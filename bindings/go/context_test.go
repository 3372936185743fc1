package gpumst_test

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"regexp"
	"slices"
	"sync"
	"testing"

	"gpumst.dev/gpumst"
)

func TestVersionAndProbeReport(t *testing.T) {
	if v := gpumst.Version(); !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(v) {
		t.Fatalf("Version() = %q, want MAJOR.MINOR.PATCH", v)
	}
	report, err := gpumst.ProbeReport()
	if err != nil {
		t.Fatal(err)
	}
	var parsed map[string]any
	if err := json.Unmarshal([]byte(report), &parsed); err != nil {
		t.Fatalf("the probe report is not JSON: %v\n%s", err, report)
	}
	if len(parsed) == 0 {
		t.Fatalf("the probe report is an empty object")
	}
}

func TestStatusAndTierNames(t *testing.T) {
	if s := gpumst.StatusInvalidGraph.String(); s != "invalid graph" {
		t.Errorf("StatusInvalidGraph.String() = %q", s)
	}
	if s := gpumst.TierOpenCL.String(); s != "opencl" {
		t.Errorf("TierOpenCL.String() = %q", s)
	}
	if s := gpumst.Tier(17).String(); s != "unknown" {
		t.Errorf("Tier(17).String() = %q", s)
	}
}

func TestContextDescribesItsDevice(t *testing.T) {
	forEachTier(t, func(t *testing.T, ctx *gpumst.Context) {
		name, err := ctx.DeviceName()
		if err != nil || name == "" {
			t.Fatalf("DeviceName() = %q, %v", name, err)
		}
		mem, err := ctx.DeviceMemory()
		if err != nil || mem == 0 {
			t.Fatalf("DeviceMemory() = %d, %v", mem, err)
		}
		tier, err := ctx.Tier()
		if err != nil || tier == gpumst.TierAuto {
			t.Fatalf("Tier() = %v, %v", tier, err)
		}
	})
	// The auto tier resolves to a concrete one.
	ctx, err := gpumst.NewContext(gpumst.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	if tier, err := ctx.Tier(); err != nil || tier == gpumst.TierAuto {
		t.Fatalf("an auto context reports tier %v, %v", tier, err)
	}
}

func TestClosedContext(t *testing.T) {
	ctx, err := gpumst.NewContext(gpumst.Options{Tier: gpumst.TierCPU, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := ctx.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ctx.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	_, err = gpumst.MinimumSpanningForestUnweighted(ctx, 2, []uint32{0}, []uint32{1})
	if !errors.Is(err, gpumst.ErrClosed) || !errors.Is(err, gpumst.ErrInvalidArgument) {
		t.Fatalf("MSF on a closed context: %v, want ErrClosed (and ErrInvalidArgument)", err)
	}
	if err := gpumst.Scan(ctx, gpumst.Sum, gpumst.Inclusive, []int32{1}, []int32{0}); !errors.Is(err, gpumst.ErrClosed) {
		t.Fatalf("Scan on a closed context: %v", err)
	}
	if _, err := ctx.Tier(); !errors.Is(err, gpumst.ErrClosed) {
		t.Fatalf("Tier on a closed context: %v", err)
	}
	var nilCtx *gpumst.Context
	if _, _, err := gpumst.ArgMin(nilCtx, []int32{1}); !errors.Is(err, gpumst.ErrInvalidArgument) {
		t.Fatalf("ArgMin on a nil context: %v", err)
	}
}

// Many goroutines share one context: forests, scans and failing calls at once,
// each getting its own result and its own error message.
func TestConcurrentCallsShareOneContext(t *testing.T) {
	forEachTier(t, func(t *testing.T, ctx *gpumst.Context) {
		rng := rand.New(rand.NewPCG(5, 6))
		g := randomGraph(rng, 2000, 8000, drawFloat64(rng))
		want := referenceForest(g, false)
		in := make([]int64, 10_000)
		for i := range in {
			in[i] = int64(i % 7)
		}
		wantScan := referenceScan(in, gpumst.Sum, gpumst.Inclusive)

		const workers, rounds = 16, 8
		var wg sync.WaitGroup
		errs := make(chan error, workers*rounds)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range rounds {
					switch w % 3 {
					case 0:
						f, err := gpumst.MinimumSpanningForest(ctx, g.n, g.u, g.v, g.w)
						if err != nil {
							errs <- err
						} else if !slices.Equal(f.Edges, want) {
							errs <- errors.New("a concurrent forest differs from the reference")
						}
					case 1:
						out := make([]int64, len(in))
						if err := gpumst.Scan(ctx, gpumst.Sum, gpumst.Inclusive, in, out); err != nil {
							errs <- err
						} else if !slices.Equal(out, wantScan) {
							errs <- errors.New("a concurrent scan differs from the reference")
						}
					case 2:
						_, err := gpumst.MinimumSpanningForest(ctx, 2, []uint32{0, 1}, []uint32{1, 9}, []int32{1, 1})
						if !errors.Is(err, gpumst.ErrInvalidGraph) {
							errs <- errors.New("a concurrent invalid graph gave " + errString(err))
						}
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

// Close waits for the calls in flight; calls that start after it fail cleanly.
func TestCloseWhileCallsAreInFlight(t *testing.T) {
	ctx, err := gpumst.NewContext(gpumst.Options{Tier: gpumst.TierCPU})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(8, 9))
	g := randomGraph(rng, 20_000, 80_000, drawUint32(rng))
	want := referenceForest(g, false)
	var wg sync.WaitGroup
	results := make(chan error, 32)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := gpumst.MinimumSpanningForest(ctx, g.n, g.u, g.v, g.w)
			switch {
			case err != nil && !errors.Is(err, gpumst.ErrClosed):
				results <- err
			case err == nil && !slices.Equal(f.Edges, want):
				results <- errors.New("a forest computed around Close differs from the reference")
			}
		}()
	}
	if err := ctx.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(results)
	for err := range results {
		t.Error(err)
	}
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

func TestDeviceLists(t *testing.T) {
	// The CPU tier has no devices to add: lists are taken and ignored.
	for _, opts := range []gpumst.Options{
		{Tier: gpumst.TierCPU, Devices: []int{0, 3}},
		{Tier: gpumst.TierCPU, AllDevices: true},
	} {
		ctx, err := gpumst.NewContext(opts)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := ctx.DeviceCount(); err != nil || n != 1 {
			t.Errorf("%+v: DeviceCount() = %d, %v; want 1", opts, n, err)
		}
		ctx.Close()
	}
	if _, err := gpumst.NewContext(gpumst.Options{Tier: gpumst.TierCPU, Devices: []int{0, -2}}); !errors.Is(err, gpumst.ErrInvalidArgument) {
		t.Errorf("a negative device index gave %v, want ErrInvalidArgument", err)
	}
	// Device 0 listed twice on OpenCL (PoCL in CI), the split threshold lowered so
	// that a small graph is split: the forest is the reference's.
	t.Setenv("GPUMST_SPLIT_MIN_EDGES", "1000")
	ctx, err := gpumst.NewContext(gpumst.Options{Tier: gpumst.TierOpenCL, Devices: []int{0, 0}})
	if errors.Is(err, gpumst.ErrBackendUnavailable) {
		t.Skipf("the split across listed devices: the OpenCL tier does not open here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	if n, err := ctx.DeviceCount(); err != nil || n != 2 {
		t.Fatalf("DeviceCount() = %d, %v; want 2", n, err)
	}
	rng := rand.New(rand.NewPCG(4, 5))
	g := randomGraph(rng, 1000, 40_000, drawUint32(rng))
	f, err := gpumst.MinimumSpanningForest(ctx, g.n, g.u, g.v, g.w)
	if err != nil {
		t.Fatal(err)
	}
	if want := referenceForest(g, false); !slices.Equal(f.Edges, want) {
		t.Fatalf("the split forest (%d edges) differs from the reference (%d)", len(f.Edges), len(want))
	}
}
