package gpumst_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gpumst.dev/gpumst"
	"gpumst.dev/gpumst/internal/devmem"
)

func TestDeviceCallsNeedAGPUTier(t *testing.T) {
	ctx := openTier(t, gpumst.TierCPU)
	if _, err := ctx.Native(); !errors.Is(err, gpumst.ErrBackendUnavailable) {
		t.Fatalf("Native on the CPU tier: %v", err)
	}
	g := gpumst.DeviceGraph{NumVertices: 2, NumEdges: 1, U: 0x1000, V: 0x2000}
	_, err := gpumst.MinimumSpanningForestDeviceUnweighted(ctx, g, 0x3000, gpumst.DeviceOptions{})
	if !errors.Is(err, gpumst.ErrBackendUnavailable) {
		t.Fatalf("a device forest on the CPU tier: %v", err)
	}
	if err := gpumst.ScanDevice[int64](ctx, gpumst.Sum, gpumst.Inclusive, 0x1000, 0x1000, 4, 0); !errors.Is(err, gpumst.ErrBackendUnavailable) {
		t.Fatalf("a device scan on the CPU tier: %v", err)
	}
	if _, _, err := gpumst.ArgMaxDevice[float32](ctx, 0x1000, 4, 0); !errors.Is(err, gpumst.ErrBackendUnavailable) {
		t.Fatalf("a device argmax on the CPU tier: %v", err)
	}
}

// openDevice opens tier (skipping where it does not open) and devmem over its native
// objects, both closed when the test ends. devmem's CUDA calls use the context current
// on the thread that opened it: the test's goroutine stays on that thread until then.
func openDevice(t *testing.T, tier gpumst.Tier) (*gpumst.Context, *devmem.Device) {
	t.Helper()
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	ctx := openTier(t, tier)
	native, err := ctx.Native()
	if err != nil {
		t.Fatal(err)
	}
	dev, err := devmem.Open(int32(native.Tier), native.Context, native.Queue, native.Device)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dev.Close)
	return ctx, dev
}

// On each GPU tier that opens (OpenCL on PoCL in CI): the forest of a graph in
// device memory is the host call's, and errors are the host call's.
func TestDeviceForestMatchesTheHost(t *testing.T) {
	for _, tier := range []gpumst.Tier{gpumst.TierOpenCL, gpumst.TierCUDA} {
		t.Run(tier.String(), func(t *testing.T) {
			ctx, dev := openDevice(t, tier)
			rng := rand.New(rand.NewPCG(5, 6))
			g := randomGraph(rng, 400, 3000, drawFloat32(rng))
			u, v, w := devmem.Copy(dev, g.u, len(g.u)), devmem.Copy(dev, g.v, len(g.v)), devmem.Copy(dev, g.w, len(g.w))
			ids := devmem.Copy[uint64](dev, nil, g.n-1)
			defer func() {
				for _, m := range []uintptr{u, v, w, ids} {
					dev.Free(m)
				}
			}()
			graph := gpumst.DeviceGraph{NumVertices: uint64(g.n), NumEdges: uint64(len(g.u)),
				U: gpumst.DevicePtr(u), V: gpumst.DevicePtr(v), W: gpumst.DevicePtr(w)}
			for _, maximum := range []bool{false, true} {
				var opts []gpumst.Option
				if maximum {
					opts = append(opts, gpumst.Maximum())
				}
				host, err := gpumst.MinimumSpanningForest(ctx, g.n, g.u, g.v, g.w, opts...)
				if err != nil {
					t.Fatal(err)
				}
				forest, err := gpumst.MinimumSpanningForestDevice[float32](ctx, graph, gpumst.DevicePtr(ids), gpumst.DeviceOptions{}, opts...)
				if err != nil {
					t.Fatal(err)
				}
				got := make([]uint64, forest.NumEdges)
				devmem.Read(dev, ids, got)
				want := make([]uint64, len(host.Edges))
				for i, e := range host.Edges {
					want[i] = uint64(e)
				}
				if !slices.Equal(got, want) || forest.NumComponents != uint64(host.NumComponents) {
					t.Fatalf("maximum=%v: device forest %d edges, host %d", maximum, len(got), len(want))
				}
				if forest.Total == nil || forest.Total.Float != host.Total.Float {
					t.Fatalf("maximum=%v: total %v, host %v", maximum, forest.Total, host.Total)
				}
			}
			noTotal, err := gpumst.MinimumSpanningForestDeviceUnweighted(ctx, graph, gpumst.DevicePtr(ids),
				gpumst.DeviceOptions{NoTotalWeight: true})
			if err != nil || noTotal.Total != nil {
				t.Fatalf("unweighted without a total: %v %v", noTotal, err)
			}
			// Labels on the device for the first 250 edges (many components).
			const few = 250
			labels := devmem.Copy[uint32](dev, nil, g.n)
			defer dev.Free(labels)
			sparse := graph
			sparse.NumEdges = few
			if _, err := gpumst.MinimumSpanningForestDevice[float32](ctx, sparse, gpumst.DevicePtr(ids),
				gpumst.DeviceOptions{Labels: gpumst.DevicePtr(labels)}); err != nil {
				t.Fatal(err)
			}
			hostLabels, err := gpumst.MinimumSpanningForest(ctx, g.n, g.u[:few], g.v[:few], g.w[:few], gpumst.WithLabels())
			if err != nil {
				t.Fatal(err)
			}
			gotLabels := make([]uint32, g.n)
			devmem.Read(dev, labels, gotLabels)
			if !slices.Equal(gotLabels, hostLabels.Labels) || hostLabels.NumComponents < 100 {
				t.Fatalf("labels on the device differ from the host's (%d components)", hostLabels.NumComponents)
			}
			// The same graph as a symmetric CSR in device memory.
			offsets, targets, cw := symmetricCSR(g.n, g.u, g.v, g.w)
			dOffsets, dTargets := devmem.Copy(dev, offsets, len(offsets)), devmem.Copy(dev, targets, len(targets))
			dCW := devmem.Copy(dev, cw, len(cw))
			defer func() {
				for _, m := range []uintptr{dOffsets, dTargets, dCW} {
					dev.Free(m)
				}
			}()
			csr := gpumst.DeviceCSR{NumVertices: uint64(g.n), NumEntries: uint64(len(targets)),
				Offsets: gpumst.DevicePtr(dOffsets), Targets: gpumst.DevicePtr(dTargets), W: gpumst.DevicePtr(dCW)}
			hostCSR, err := gpumst.MinimumSpanningForestCSR(ctx, offsets, targets, cw)
			if err != nil {
				t.Fatal(err)
			}
			csrForest, err := gpumst.MinimumSpanningForestDeviceCSR[float32](ctx, csr, gpumst.DevicePtr(ids), gpumst.DeviceOptions{})
			if err != nil {
				t.Fatal(err)
			}
			gotCSR := make([]uint64, csrForest.NumEdges)
			devmem.Read(dev, ids, gotCSR)
			if len(gotCSR) != len(hostCSR.Edges) || csrForest.Total == nil || csrForest.Total.Float != hostCSR.Total.Float {
				t.Fatalf("CSR: device %d edges (%v), host %d", len(gotCSR), csrForest.Total, len(hostCSR.Edges))
			}
			for i, e := range hostCSR.Edges {
				if gotCSR[i] != uint64(e) {
					t.Fatalf("CSR: edge %d is %d on the device, %d on the host", i, gotCSR[i], e)
				}
			}
			if _, err := gpumst.MinimumSpanningForestDeviceCSRUnweighted(ctx, csr, gpumst.DevicePtr(ids), gpumst.DeviceOptions{}); err != nil {
				t.Fatal(err)
			}
			cw[offsets[g.n/2]] += 1
			dBad := devmem.Copy(dev, cw, len(cw))
			defer dev.Free(dBad)
			csr.W = gpumst.DevicePtr(dBad)
			_, err = gpumst.MinimumSpanningForestDeviceCSR[float32](ctx, csr, gpumst.DevicePtr(ids), gpumst.DeviceOptions{})
			_, hostErr := gpumst.MinimumSpanningForestCSR(ctx, offsets, targets, cw)
			var ce, he *gpumst.Error
			if !errors.As(err, &ce) || !errors.As(hostErr, &he) || ce.Status != gpumst.StatusInvalidGraph ||
				!strings.Contains(ce.Message, "CSR is not symmetric") ||
				strings.SplitN(ce.Message, ": ", 2)[1] != strings.SplitN(he.Message, ": ", 2)[1] {
				t.Fatalf("an asymmetric CSR: device %v, host %v", err, hostErr)
			}

			g.u[17] = uint32(g.n + 3)
			bad := devmem.Copy(dev, g.u, len(g.u))
			defer dev.Free(bad)
			graph.U = gpumst.DevicePtr(bad)
			_, err = gpumst.MinimumSpanningForestDevice[float32](ctx, graph, gpumst.DevicePtr(ids), gpumst.DeviceOptions{})
			var e *gpumst.Error
			if !errors.As(err, &e) || e.Status != gpumst.StatusInvalidGraph || e.Message != "gpumst_msf_device: edge 17: u = 403 is out of range for 400 vertices" {
				t.Fatalf("an id out of range: %v", err)
			}
			if devmem.Failures() != 0 {
				t.Fatalf("%d driver calls failed", devmem.Failures())
			}
		})
	}
}

// On each GPU tier that opens (OpenCL on PoCL in CI): the primitives on device
// memory give the host calls' results and errors.
func TestDevicePrimitivesMatchTheHost(t *testing.T) {
	for _, tier := range []gpumst.Tier{gpumst.TierOpenCL, gpumst.TierCUDA} {
		t.Run(tier.String(), func(t *testing.T) {
			ctx, dev := openDevice(t, tier)
			rng := rand.New(rand.NewPCG(7, 8))
			data := make([]int64, 50_000)
			for i := range data {
				data[i] = rng.Int64N(2001) - 1000
			}
			n := uint64(len(data))
			in, out := devmem.Copy(dev, data, len(data)), devmem.Copy[int64](dev, nil, len(data))
			offsets := []uint64{0, 700, 700, 30_000, n}
			segments := uint64(len(offsets) - 1)
			dOffsets := devmem.Copy(dev, offsets, len(offsets))
			values, indices := devmem.Copy[int64](dev, nil, int(segments)), devmem.Copy[uint64](dev, nil, int(segments))
			defer func() {
				for _, m := range []uintptr{in, out, dOffsets, values, indices} {
					dev.Free(m)
				}
			}()
			got, want := make([]int64, len(data)), make([]int64, len(data))
			var err error
			for _, segmented := range []bool{false, true} {
				if segmented {
					err = gpumst.SegmentedScanOffsetsDevice[int64](ctx, gpumst.Sum, gpumst.Exclusive,
						gpumst.DevicePtr(in), gpumst.DevicePtr(out), n, gpumst.DevicePtr(dOffsets), segments, 0)
				} else {
					err = gpumst.ScanDevice[int64](ctx, gpumst.Sum, gpumst.Exclusive, gpumst.DevicePtr(in), gpumst.DevicePtr(out), n, 0)
				}
				if err != nil {
					t.Fatal(err)
				}
				devmem.Read(dev, out, got)
				if segmented {
					err = gpumst.SegmentedScanOffsets(ctx, gpumst.Sum, gpumst.Exclusive, data, want, offsets)
				} else {
					err = gpumst.Scan(ctx, gpumst.Sum, gpumst.Exclusive, data, want)
				}
				if err != nil || !slices.Equal(got, want) {
					t.Fatalf("segmented=%v: the device scan differs from the host's (%v)", segmented, err)
				}
			}
			// By head flags in device memory: any nonzero byte starts a segment.
			heads, headBytes := make([]bool, len(data)), make([]uint8, len(data))
			for i := range heads {
				if i%613 == 9 {
					heads[i], headBytes[i] = true, uint8(1+i%200)
				}
			}
			dHeads := devmem.Copy(dev, headBytes, len(headBytes))
			defer dev.Free(dHeads)
			if err := gpumst.SegmentedScanFlagsDevice[int64](ctx, gpumst.Max, gpumst.Inclusive,
				gpumst.DevicePtr(in), gpumst.DevicePtr(out), gpumst.DevicePtr(dHeads), n, 0); err != nil {
				t.Fatal(err)
			}
			devmem.Read(dev, out, got)
			if err := gpumst.SegmentedScanFlags(ctx, gpumst.Max, gpumst.Inclusive, data, want, heads); err != nil || !slices.Equal(got, want) {
				t.Fatalf("the device scan by flags differs from the host's (%v)", err)
			}
			for _, max := range []bool{false, true} {
				argDevice, argHost := gpumst.ArgMinDevice[int64], gpumst.ArgMin[int64]
				segDevice, segHost := gpumst.SegmentedArgMinDevice[int64], gpumst.SegmentedArgMin[int64]
				if max {
					argDevice, argHost = gpumst.ArgMaxDevice[int64], gpumst.ArgMax[int64]
					segDevice, segHost = gpumst.SegmentedArgMaxDevice[int64], gpumst.SegmentedArgMax[int64]
				}
				value, index, err := argDevice(ctx, gpumst.DevicePtr(in), n, 0)
				hostValue, hostIndex, hostErr := argHost(ctx, data)
				if err != nil || hostErr != nil || value != hostValue || index != hostIndex {
					t.Fatalf("max=%v: device %d@%d (%v), host %d@%d (%v)", max, value, index, err, hostValue, hostIndex, hostErr)
				}
				if err := segDevice(ctx, gpumst.DevicePtr(in), n, gpumst.DevicePtr(dOffsets), segments,
					gpumst.DevicePtr(values), gpumst.DevicePtr(indices), 0); err != nil {
					t.Fatal(err)
				}
				gotValues, gotIndices := make([]int64, segments), make([]uint64, segments)
				devmem.Read(dev, values, gotValues)
				devmem.Read(dev, indices, gotIndices)
				wantValues, wantIndices, err := segHost(ctx, data, offsets)
				if err != nil || !slices.Equal(gotValues, wantValues) {
					t.Fatalf("max=%v: segmented values %v, host %v (%v)", max, gotValues, wantValues, err)
				}
				for s, at := range wantIndices {
					if (at == gpumst.EmptyIndex && gotIndices[s] != ^uint64(0)) || (at != gpumst.EmptyIndex && gotIndices[s] != uint64(at)) {
						t.Fatalf("max=%v: segment %d index %d, host %d", max, s, gotIndices[s], at)
					}
				}
			}
			if v, at, err := gpumst.ArgMaxDevice[int64](ctx, gpumst.DevicePtr(in), 0, 0); err != nil || v != math.MinInt64 || at != gpumst.EmptyIndex {
				t.Fatalf("argmax of 0 elements: %d at %d (%v)", v, at, err)
			}
			bad := devmem.Copy(dev, []uint64{0, 20, 10, n}, 4)
			defer dev.Free(bad)
			err = gpumst.SegmentedScanOffsetsDevice[int64](ctx, gpumst.Sum, gpumst.Inclusive,
				gpumst.DevicePtr(in), gpumst.DevicePtr(out), n, gpumst.DevicePtr(bad), 3, 0)
			hostErr := gpumst.SegmentedScanOffsets(ctx, gpumst.Sum, gpumst.Inclusive, data, want, []uint64{0, 20, 10, n})
			var e, h *gpumst.Error
			if !errors.As(err, &e) || !errors.As(hostErr, &h) || e.Status != h.Status || e.Status != gpumst.StatusInvalidArgument {
				t.Fatalf("decreasing offsets: device %v, host %v", err, hostErr)
			}
			if devmem.Failures() != 0 {
				t.Fatalf("%d driver calls failed", devmem.Failures())
			}
		})
	}
}

// Options.DeviceMemoryLimit: a graph larger than the cap is solved a partition of the
// edges at a time, with the CPU tier's forest; one whose vertices leave no room under
// the cap is ErrOutOfMemory.
func TestDeviceMemoryLimitGivesTheCPUForest(t *testing.T) {
	for _, tier := range []gpumst.Tier{gpumst.TierOpenCL, gpumst.TierCUDA} {
		t.Run(tier.String(), func(t *testing.T) {
			capped, err := gpumst.NewContext(gpumst.Options{Tier: tier, DeviceMemoryLimit: 400_000})
			if errors.Is(err, gpumst.ErrBackendUnavailable) {
				t.Skipf("tier %s does not open on this machine: %v", tier, err)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer capped.Close()
			cpu := openTier(t, gpumst.TierCPU)
			rng := rand.New(rand.NewPCG(9, 10))
			g := randomGraph(rng, 1000, 40_000, drawUint32(rng))
			want, err := gpumst.MinimumSpanningForest(cpu, g.n, g.u, g.v, g.w)
			if err != nil {
				t.Fatal(err)
			}
			got, err := gpumst.MinimumSpanningForest(capped, g.n, g.u, g.v, g.w)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Edges, want.Edges) {
				t.Fatalf("capped forest has %d edges, the CPU tier's %d, or they differ", len(got.Edges), len(want.Edges))
			}
			if _, err := gpumst.MinimumSpanningForest(capped, 200_000, g.u, g.v, g.w); !errors.Is(err, gpumst.ErrOutOfMemory) {
				t.Fatalf("200,000 vertices under the cap: got %v, want ErrOutOfMemory", err)
			}
		})
	}
}

// symmetricCSR lists each edge in both directions (a self-loop once), rows in
// edge order.
func symmetricCSR[W any](n int, u, v []uint32, w []W) (offsets []uint64, targets []uint32, weights []W) {
	offsets = make([]uint64, n+1)
	for e := range u {
		offsets[u[e]+1]++
		if u[e] != v[e] {
			offsets[v[e]+1]++
		}
	}
	for x := 0; x < n; x++ {
		offsets[x+1] += offsets[x]
	}
	fill := slices.Clone(offsets[:n])
	targets, weights = make([]uint32, offsets[n]), make([]W, offsets[n])
	put := func(from, to uint32, weight W) {
		targets[fill[from]], weights[fill[from]] = to, weight
		fill[from]++
	}
	for e := range u {
		put(u[e], v[e], w[e])
		if u[e] != v[e] {
			put(v[e], u[e], w[e])
		}
	}
	return offsets, targets, weights
}
