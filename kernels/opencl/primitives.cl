// Scans, segmented scans and arg-reductions (appended to types.cl).
//
// Scan: Merrill's two-level reduce-then-scan as in Sun & Skadron. A fixed number of
// work-groups each own a contiguous range of whole tiles:
//   1. scan_upsweep   reduces each group's range to one run,
//   2. scan_spine     (one group) turns the runs into each group's carry-in,
//   3. scan_downsweep rescans each range from its carry-in and writes the output.
// No work-group ever waits for another, so it needs no forward-progress guarantee.
// Segmented scans use the same kernels on runs (has-head flag, value since the last
// head); the unsegmented scan is the case with no heads.

typedef struct {
    T v;
    uint f;
} Run;

// -DSEGMENTED=1 builds the scans that read head flags; without it the flags are never
// loaded or kept, which saves a fifth of the local-memory traffic per tile.
#if SEGMENTED
#define FLAGS_LEN TILE_PADDED
#define HEAD(lf, j) (lf[j])
#else
#define FLAGS_LEN 1
#define HEAD(lf, j) 0
#endif

inline Run run_make(T v, uint f) {
    Run r;
    r.v = v;
    r.f = f;
    return r;
}

// `earlier` followed by `later`.
inline Run run_combine(Run earlier, Run later) {
    return run_make(later.f ? later.v : combine(earlier.v, later.v), earlier.f | later.f);
}

// ---- tiles in local memory ----------------------------------------------------------
// A tile is WG * ITEMS elements. Whole tiles move between global and local memory in
// 16-byte chunks of VEC elements (types.cl; buffers start 16-byte aligned and tiles are
// whole numbers of chunks): work-item lid moves chunks lid, lid + WG, ... (coalesced),
// and scans its own ITEMS consecutive elements. On the H200, 16-byte global accesses
// took the scan of 2^28 u32 from 0.625 to 0.588 ms; 16-byte local-memory accesses (with
// 16 bytes of pad per 128 to keep them aligned) took it back to 0.66 ms, so local
// memory is read and written element by element.
#if ITEMS % VEC != 0
#error "ITEMS must be a whole number of 16-byte chunks"
#endif
// PAD(VEC * (k * WG + lid) + c): element c of work-item lid's chunk k. With VEC * WG a
// multiple of 32 each chunk adds a constant stride. (Written so, it also keeps NVRTC's
// output reproducible, which recomputing PAD for each chunk did not for some 8-byte
// modules.)
#if (VEC * WG) % 32 == 0
#define CHUNK_AT(lid, k, c) (PAD(VEC * (lid)) + (k) * (VEC * WG + VEC * WG / 32) + (c))
#else
#define CHUNK_AT(lid, k, c) PAD(VEC * ((k) * WG + (lid)) + (c))
#endif

// The c-th element of a 16-byte chunk.
inline T chunk_at(uint4 v, uint c) {
#if T_WIDE
    uint lo = c == 0 ? v.x : v.z, hi = c == 0 ? v.y : v.w;
    return AS_T(((ulong)hi << 32) | lo);
#else
    return AS_T(c == 0 ? v.x : c == 1 ? v.y : c == 2 ? v.z : v.w);
#endif
}

// A 16-byte chunk of VEC elements.
inline uint4 chunk_of(const T* e) {
    uint4 v;
#if T_WIDE
    ulong a = as_ulong(e[0]), b = as_ulong(e[1]);
    v.x = (uint)a;
    v.y = (uint)(a >> 32);
    v.z = (uint)b;
    v.w = (uint)(b >> 32);
#else
    v.x = as_uint(e[0]);
    v.y = as_uint(e[1]);
    v.z = as_uint(e[2]);
    v.w = as_uint(e[3]);
#endif
    return v;
}

// The VEC elements of the local tile from padded index j (a multiple of VEC: they lie
// side by side).
inline void local_read(LOCAL const T* lv, uint j, T* e) {
    for (uint c = 0; c < VEC; c++)
        e[c] = lv[j + c];
}

inline void local_write(LOCAL T* lv, uint j, const T* e) {
    for (uint c = 0; c < VEC; c++)
        lv[j + c] = e[c];
}

// Loads the tile at `base` (clipped at `end`) into local memory, coalesced.
inline void load_tile(__global const T* in, __global const uchar* flags, uint segmented,
                      ulong base, ulong end, LOCAL T* lv, LOCAL uchar* lf) {
    const uint lid = get_local_id(0);
    if (base + TILE <= end) {
        // A whole tile: every load is issued before the first store to local memory
        // waits for one. (Loading and storing under a bounds check, ptxas for sm_90
        // kept only about 10 of 32 loads in flight at a time.)
        __global const uint4* from = (__global const uint4*)(in + base) + lid;
        uint4 x[ITEMS / VEC];
        for (uint k = 0; k < ITEMS / VEC; k++)
            x[k] = from[k * WG];
        for (uint k = 0; k < ITEMS / VEC; k++)
            for (uint c = 0; c < VEC; c++)
                lv[CHUNK_AT(lid, k, c)] = chunk_at(x[k], c);
#if SEGMENTED
        __global const uchar* head = flags + base + VEC * lid;
        for (uint k = 0; k < ITEMS / VEC; k++)
            for (uint c = 0; c < VEC; c++)
                lf[CHUNK_AT(lid, k, c)] = segmented && head[k * VEC * WG + c] != 0;
#endif
        return;
    }
    for (uint k = 0; k < ITEMS; k++) {
        uint j = k * WG + lid;
        ulong i = base + j;
        bool inside = i < end;
        lv[PAD(j)] = inside ? in[i] : IDENTITY;
#if SEGMENTED
        lf[PAD(j)] = (inside && segmented) ? (flags[i] != 0) : 0;
#endif
    }
}

// The run of this work-item's ITEMS consecutive elements of the tile.
inline Run thread_run(LOCAL const T* lv, LOCAL const uchar* lf) {
    const uint first = get_local_id(0) * ITEMS;
    Run r = run_make(IDENTITY, 0);
    for (uint m = 0; m < ITEMS / VEC; m++) {
        const uint j = PAD(first + m * VEC);
        T e[VEC];
        local_read(lv, j, e);
        for (uint c = 0; c < VEC; c++) {
            if (HEAD(lf, j + c)) {
                r.v = IDENTITY;
                r.f = 1;
            }
            r.v = combine(r.v, e[c]);
        }
    }
    return r;
}

// Rescans this work-item's elements within the tile from `before` (the run of the
// tile's elements before them), in place; with segments, each element's flag becomes
// whether a head came at or before it in the tile (such an element takes no carry from
// earlier tiles: see store_with_carry).
inline void rescan_local(Run before, LOCAL T* lv, LOCAL uchar* lf, uint exclusive) {
    const uint first = get_local_id(0) * ITEMS;
    T acc = before.v;
#if SEGMENTED
    uchar seen = before.f != 0;
#endif
    for (uint m = 0; m < ITEMS / VEC; m++) {
        const uint j = PAD(first + m * VEC);
        T e[VEC];
        local_read(lv, j, e);
        for (uint c = 0; c < VEC; c++) {
#if SEGMENTED
            if (lf[j + c]) {
                acc = IDENTITY;
                seen = 1;
            }
            lf[j + c] = seen;
#endif
            T inclusive = combine(acc, e[c]);
            e[c] = exclusive ? acc : inclusive;
            acc = inclusive;
        }
        local_write(lv, j, e);
    }
}

#if SEGMENTED
#define WITH_CARRY(carry, x, seen) ((seen) ? (x) : combine((carry), (x)))
#else
#define WITH_CARRY(carry, x, seen) combine((carry), (x))
#endif

// Stores the locally rescanned tile, each element joined to `carry` (the value of the
// elements before the tile), to `out` (coalesced).
inline void store_with_carry(T carry, LOCAL const T* lv, LOCAL const uchar* lf, ulong base,
                             ulong end, __global T* out) {
    const uint lid = get_local_id(0);
    if (base + TILE <= end) {
        // A whole tile: read local memory first, then issue the stores back to back.
        uint4 x[ITEMS / VEC];
        for (uint k = 0; k < ITEMS / VEC; k++) {
            T e[VEC];
            for (uint c = 0; c < VEC; c++) {
                const uint j = CHUNK_AT(lid, k, c);
                e[c] = WITH_CARRY(carry, lv[j], HEAD(lf, j));
            }
            x[k] = chunk_of(e);
        }
        __global uint4* to = (__global uint4*)(out + base) + lid;
        for (uint k = 0; k < ITEMS / VEC; k++)
            to[k * WG] = x[k];
        return;
    }
    for (uint k = 0; k < ITEMS; k++) {
        uint j = k * WG + lid;
        if (base + j < end)
            out[base + j] = WITH_CARRY(carry, lv[PAD(j)], HEAD(lf, PAD(j)));
    }
}

// ---- work-group scan -----------------------------------------------------------------
// group_scan returns work-item i's exclusive prefix (the runs of work-items 0..i-1) and
// sets *total to the whole group's run. It uses lr; callers barrier before reusing it
// (the shuffle version's calls may follow each other without one). `flagged`: whether
// the runs' flags are scanned too (SEGMENTED for data; the look-back's always), where
// leaving them out saves work (the shuffles).

#if NV_SHUFFLE
// NVIDIA's OpenCL accepts inline PTX: warp shuffles scan 32 work-items without local
// memory or barriers (work-items 32w..32w+31 of a 1-D group form warp w there). The host
// sets NV_SHUFFLE only on NVIDIA GPUs with a multiple-of-32 group of at most 1024.
#define WARPS (WG / 32)

inline uint shuffle_up_u32(uint x, uint delta) {
    uint r;
    asm volatile("shfl.sync.up.b32 %0, %1, %2, 0, 0xffffffff;" : "=r"(r) : "r"(x), "r"(delta));
    return r;
}

inline T shuffle_up_t(T x, uint delta) {
#if T_WIDE
    uint2 halves = as_uint2(x);
    halves.x = shuffle_up_u32(halves.x, delta);
    halves.y = shuffle_up_u32(halves.y, delta);
    return AS_T(halves);
#else
    return AS_T(shuffle_up_u32(as_uint(x), delta));
#endif
}

inline Run shuffle_up_run(Run x, uint delta, uint flagged) {
    return run_make(shuffle_up_t(x.v, delta), flagged ? shuffle_up_u32(x.f, delta) : 0);
}

// Inclusive scan across the warp (Kogge-Stone over shuffles).
inline Run warp_scan(Run x, uint lane, uint flagged) {
    for (uint delta = 1; delta < 32; delta <<= 1) {
        Run before = shuffle_up_run(x, delta, flagged);
        if (lane >= delta)
            x = run_combine(before, x);
    }
    return x;
}

inline Run group_scan(Run x, LOCAL Run* lr, Run* total, uint flagged) {
    const uint lid = get_local_id(0), lane = lid & 31, warp = lid >> 5;
    const Run none = run_make(IDENTITY, 0);
    Run inclusive = warp_scan(x, lane, flagged);
    if (lane == 31)
        lr[warp] = inclusive;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (warp == 0) {
        Run w = warp_scan(lane < WARPS ? lr[lane] : none, lane, flagged);
        if (lane < WARPS)
            lr[WARPS + lane] = w;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    Run within = shuffle_up_run(inclusive, 1, flagged);
    if (lane == 0)
        within = none;
    *total = lr[2 * WARPS - 1];
    return warp > 0 ? run_combine(lr[WARPS + warp - 1], within) : within;
}
#else
// Hillis-Steele over local memory. (A raking scan with four barriers measured slower on
// an H200 under NVIDIA's OpenCL.)
inline Run group_scan(Run x, LOCAL Run* lr, Run* total, uint flagged) {
    uint lid = get_local_id(0);
    lr[lid] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint offset = 1; offset < WG; offset <<= 1) {
        Run before = x;
        if (lid >= offset)
            before = lr[lid - offset];
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid >= offset) {
            x = run_combine(before, x);
            lr[lid] = x;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    *total = lr[WG - 1];
    return lid > 0 ? lr[lid - 1] : run_make(IDENTITY, 0);
}
#endif

__kernel void scan_upsweep(__global const T* in, __global const uchar* flags, uint segmented,
                           ulong n, ulong group_len, __global T* part_v,
                           __global uchar* part_f) {
    __local T lv[TILE_PADDED];
    __local uchar lf[FLAGS_LEN];
    __local Run lr[WG];
    ulong start = get_group_id(0) * group_len;
    ulong end = min(n, start + group_len);
    Run aggregate = run_make(IDENTITY, 0);
    for (ulong base = start; base < end; base += TILE) {
        load_tile(in, flags, segmented, base, end, lv, lf);
        barrier(CLK_LOCAL_MEM_FENCE);
        Run tile;
        group_scan(thread_run(lv, lf), lr, &tile, SEGMENTED);
        aggregate = run_combine(aggregate, tile);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (get_local_id(0) == 0) {
        part_v[get_group_id(0)] = aggregate.v;
        part_f[get_group_id(0)] = aggregate.f;
    }
}

// One work-group: part_v[g] becomes the value entering group g (exclusive prefix).
__kernel void scan_spine(__global T* part_v, __global const uchar* part_f, uint groups) {
    __local Run lr[WG];
    uint lid = get_local_id(0);
    uint per = (groups + WG - 1) / WG;
    uint lo = min(groups, lid * per);
    uint hi = min(groups, lo + per);
    Run mine = run_make(IDENTITY, 0);
    for (uint g = lo; g < hi; g++)
        mine = run_combine(mine, run_make(part_v[g], part_f[g]));
    Run all;
    Run prefix = group_scan(mine, lr, &all, SEGMENTED);
    for (uint g = lo; g < hi; g++) {
        Run next = run_combine(prefix, run_make(part_v[g], part_f[g]));
        part_v[g] = prefix.v;
        prefix = next;
    }
}

// `in` and `out` may be the same buffer: each tile is fully loaded before it is written.
__kernel void scan_downsweep(__global const T* in, __global const uchar* flags, uint segmented,
                             ulong n, ulong group_len, __global const T* carries,
                             uint exclusive, __global T* out) {
    __local T lv[TILE_PADDED];
    __local uchar lf[FLAGS_LEN];
    __local Run lr[WG];
    ulong start = get_group_id(0) * group_len;
    ulong end = min(n, start + group_len);
    Run carry = run_make(carries[get_group_id(0)], 0);
    for (ulong base = start; base < end; base += TILE) {
        load_tile(in, flags, segmented, base, end, lv, lf);
        barrier(CLK_LOCAL_MEM_FENCE);
        Run tile;
        rescan_local(group_scan(thread_run(lv, lf), lr, &tile, SEGMENTED), lv, lf, exclusive);
        barrier(CLK_LOCAL_MEM_FENCE);
        store_with_carry(carry.v, lv, lf, base, end, out);
        carry = run_combine(carry, tile);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

// ---- single-pass scan (chained, decoupled look-back; Merrill & Garland) -------------
// One launch, one tile per work-group (persistent work-groups that loop over tiles, with
// or without the next tile's loads in flight in registers, and tiles kept in registers
// instead of local memory, all measured slower on an H200); each work-group takes the
// next tile by ticket, publishes its aggregate, looks back over its predecessors 32 at
// a time until one has published its inclusive prefix, then publishes its own and
// writes its tile. A tile waits only on tiles whose tickets came earlier, so on devices
// whose running work-groups keep running (NVIDIA and AMD GPUs) it cannot deadlock; the
// host uses reduce-then-scan everywhere else.
//
// The ticket and the tiles' states live in a buffer the host keeps across calls and
// zeroes only when it is new: the call's last draw returns the ticket to zero, and
// each state word carries the call's epoch (never 0; a new one per call), so words
// from earlier calls read as unpublished.
//
// A tile's state is published by 64-bit atomic exchanges, each word holding the status,
// the run's flag, the epoch and 32 bits of its value: one word for 4-byte types; two for
// 8-byte ones, which a reader accepts only when both show the same status and epoch (a
// tile publishes its aggregate once, then its prefix once, so equal statuses mean one
// publication). No memory fence is needed, and none is portable across work-groups in
// OpenCL 1.2.
#if SINGLE_PASS
#ifdef __OPENCL_VERSION__
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif
#define STATE_AGGREGATE 1ul
#define STATE_PREFIX 2ul
#define STATUS(word) ((word) >> 62)
// Bits 60..32 of a state word: the epoch (the host's SCAN_EPOCHS bounds it).
#define EPOCH_OF(word) (((word) >> 32) & 0x1FFFFFFFul)

inline ulong state_head(Run r, ulong status, uint epoch) {
    return (status << 62) | ((ulong)(r.f != 0) << 61) | ((ulong)epoch << 32);
}

inline void publish(__global volatile ulong* state, uint tile, Run r, ulong status, uint epoch) {
    const ulong head = state_head(r, status, epoch);
#if T_WIDE
    ulong bits = as_ulong(r.v);
    atom_xchg(&state[2 * (ulong)tile], head | (bits & 0xFFFFFFFFul));
    atom_xchg(&state[2 * (ulong)tile + 1], head | (bits >> 32));
#else
    atom_xchg(&state[tile], head | (ulong)as_uint(r.v));
#endif
}

// Waits until tile j has published in this call, and returns its status and run.
inline ulong read_state(__global volatile ulong* state, ulong j, uint epoch, Run* r) {
#if T_WIDE
    ulong lo, hi;
    do {
        lo = state[2 * j];
        hi = state[2 * j + 1];
    } while (EPOCH_OF(lo) != epoch || (lo >> 32) != (hi >> 32));
    *r = run_make(AS_T((hi << 32) | (lo & 0xFFFFFFFFul)), (uint)(lo >> 61) & 1u);
#else
    ulong lo;
    while (EPOCH_OF(lo = state[j]) != epoch)
        ;
    *r = run_make(AS_T((uint)lo), (uint)(lo >> 61) & 1u);
#endif
    return STATUS(lo);
}

// The tiles' states start this many words after the ticket (a 128-byte line of its own;
// the host sizes the buffer by the same number, SCAN_STATE_OFFSET in primitives.rs).
#define STATE_OFFSET 16

// Takes the next tile by ticket (every work-item gets it). The call's last draw (of
// `draws`) puts the ticket back to zero for the next call.
inline uint take_tile(__global volatile uint* ticket, uint draws, LOCAL uint* tile_id) {
    if (get_local_id(0) == 0) {
        uint t = atomic_inc(ticket);
        if (t == draws - 1)
            atomic_xchg(ticket, 0u);
        *tile_id = t;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return *tile_id;
}

// Work-item 0 publishes the tile's aggregate (tile 0: its prefix).
inline void publish_aggregate(uint tile, Run aggregate, __global volatile ulong* state,
                              uint epoch) {
    if (get_local_id(0) == 0)
        publish(state, tile, aggregate, tile == 0 ? STATE_PREFIX : STATE_AGGREGATE, epoch);
}

// Looks back until the run before the tile is known, publishes the tile's inclusive
// prefix, and returns that run's value to every work-item. Each step reads
// the WG tiles before the last one read (work-item lid the lid-th oldest) as runs whose
// flag says where the look-back may stop: at a tile that published its inclusive prefix
// or whose run holds a head. Their group scan's total is then the run from the newest
// such tile on; its flag says whether there was one, or the next step goes further back.
// (The flag of a published prefix is not read: readers stop at its status.)
inline T look_back(uint tile, Run aggregate, __global volatile ulong* state, uint epoch,
                   LOCAL Run* lr) {
    Run suffix = run_make(IDENTITY, tile == 0); // the runs of tiles hi+1 .. tile-1
    long hi = (long)tile - 1;
    while (!suffix.f) {
        const long j = hi - (long)(WG - 1) + (long)get_local_id(0);
        Run r = run_make(IDENTITY, 0); // before tile 0: nothing
        if (j >= 0 && read_state(state, (ulong)j, epoch, &r) == STATE_PREFIX)
            r.f = 1;
#if !NV_SHUFFLE
        // The local-memory group scan writes lr before its first barrier.
        barrier(CLK_LOCAL_MEM_FENCE);
#endif
        Run window;
        group_scan(r, lr, &window, 1);
        suffix = run_combine(window, suffix);
        hi -= WG;
    }
    if (tile == 0) // (uniform) orders the rescan before the store, as the steps' scans do
        barrier(CLK_LOCAL_MEM_FENCE);
    else if (get_local_id(0) == 0)
        publish(state, tile, run_combine(suffix, aggregate), STATE_PREFIX, epoch);
    return suffix.v;
}

__kernel void scan_single_pass(__global const T* in, __global const uchar* flags,
                               uint segmented, ulong n, uint exclusive, __global T* out,
                               __global volatile ulong* words, uint epoch) {
    __local T lv[TILE_PADDED];
    __local uchar lf[FLAGS_LEN];
    __local Run lr[WG];
    __local uint tile_id;
    __global volatile ulong* state = words + STATE_OFFSET;
    const uint tiles = (uint)((n + TILE - 1) / TILE);
    const uint tile = take_tile((__global volatile uint*)words, tiles, &tile_id);
    const ulong base = (ulong)tile * TILE;
    load_tile(in, flags, segmented, base, n, lv, lf);
    barrier(CLK_LOCAL_MEM_FENCE);
    Run aggregate;
    const Run before = group_scan(thread_run(lv, lf), lr, &aggregate, SEGMENTED);
    publish_aggregate(tile, aggregate, state, epoch);
    // The tile is rescanned while its predecessors finish; the carry joins on the way
    // out (on the H200: 0.625 ms for 2^28 u32, against 0.645 rescanning after the
    // look-back). look_back's barriers order the rescan before the store.
    rescan_local(before, lv, lf, exclusive);
    const T carry_in = look_back(tile, aggregate, state, epoch, lr);
    store_with_carry(carry_in, lv, lf, base, n, out);
}
#endif

// Head flags from CSR offsets (flags zeroed before): every segment start below n.
__kernel void offsets_to_flags(__global const ulong* offsets, ulong segments, ulong n,
                               __global uchar* flags) {
    ulong s = get_global_id(0);
    if (s < segments && offsets[s] < n)
        flags[offsets[s]] = 1;
}

// The first i at which CSR offsets fail (offsets[0] == 0, non-decreasing, last == n),
// by atomic minimum into *bad (preset to 0xFFFFFFFF; 32-bit, so callers check fewer
// than 2^32 - 1 segments).
__kernel void check_offsets(__global const ulong* offsets, ulong segments, ulong n,
                            __global uint* bad) {
    ulong i = get_global_id(0);
    if (i > segments)
        return;
    bool wrong = i == 0 ? offsets[0] != 0
                        : offsets[i] < offsets[i - 1] || (i == segments && offsets[i] != n);
    if (wrong)
        atomic_min(bad, (uint)i);
}

// ---- arg-reductions (Wang et al.'s min-reduction: any length, one launch or two) ----

#if SCAN_OP != 0
#define NO_INDEX ULONG_MAX

// Whether (av, ai) comes before (bv, bi): the better value, NaN first, then the lower
// index. A total order, so any reduction tree gives the sequential answer.
inline bool arg_better(T av, ulong ai, T bv, ulong bi) {
    if (bi == NO_INDEX)
        return ai != NO_INDEX;
    if (ai == NO_INDEX)
        return false;
    if (IS_NAN(av) || IS_NAN(bv))
        return IS_NAN(av) && IS_NAN(bv) ? ai < bi : IS_NAN(av);
#if SCAN_OP == 1
    if (av < bv)
        return true;
    if (bv < av)
        return false;
#else
    if (av > bv)
        return true;
    if (bv > av)
        return false;
#endif
    return ai < bi;
}

// The best (value, index) of in[from], in[from + step], ... below `to`, with ARG_UNROLL
// loads in flight per work-item (one at a time leaves the memory system idle between
// loads). Indices only grow along the fold, so folding in order keeps the first of
// equal values.
#define ARG_UNROLL 8
inline void arg_fold(__global const T* in, ulong from, ulong to, ulong step, T* best,
                     ulong* at) {
    *best = IDENTITY;
    *at = NO_INDEX;
    ulong k = from;
    for (; k + (ARG_UNROLL - 1) * step < to; k += ARG_UNROLL * step) {
        T x[ARG_UNROLL];
        for (uint u = 0; u < ARG_UNROLL; u++)
            x[u] = in[k + u * step];
        for (uint u = 0; u < ARG_UNROLL; u++) {
            if (arg_better(x[u], k + u * step, *best, *at)) {
                *best = x[u];
                *at = k + u * step;
            }
        }
    }
    for (; k < to; k += step) {
        T x = in[k];
        if (arg_better(x, k, *best, *at)) {
            *best = x;
            *at = k;
        }
    }
}

// Reduces the (value, index) pairs of each run of `lanes` consecutive work-items (a power
// of two dividing WG) to every work-item of the run; lanes == WG: the whole work-group.
// Every work-item of the group must call it.
inline void lanes_arg(T* v, ulong* i, LOCAL T* lv, LOCAL ulong* li, uint lanes) {
    const uint lid = get_local_id(0), lane = lid % lanes;
    lv[lid] = *v;
    li[lid] = *i;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint stride = lanes / 2; stride > 0; stride >>= 1) {
        if (lane < stride && arg_better(lv[lid + stride], li[lid + stride], lv[lid], li[lid])) {
            lv[lid] = lv[lid + stride];
            li[lid] = li[lid + stride];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    *v = lv[lid - lane];
    *i = li[lid - lane];
}

#if NV_SHUFFLE
// On NVIDIA, runs of at most 32 lanes reduce through warp shuffles (butterfly: every
// lane ends with the run's best), without local memory or barriers.
inline uint shuffle_xor_u32(uint x, uint mask) {
    uint r;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(x), "r"(mask));
    return r;
}

inline ulong shuffle_xor_u64(ulong x, uint mask) {
    uint2 halves = as_uint2(x);
    halves.x = shuffle_xor_u32(halves.x, mask);
    halves.y = shuffle_xor_u32(halves.y, mask);
    return as_ulong(halves);
}

inline void warp_lanes_arg(T* v, ulong* i, uint lanes) {
    for (uint stride = lanes / 2; stride > 0; stride >>= 1) {
#if T_WIDE
        T other_v = AS_T(shuffle_xor_u64(as_ulong(*v), stride));
#else
        T other_v = AS_T(shuffle_xor_u32(as_uint(*v), stride));
#endif
        ulong other_i = shuffle_xor_u64(*i, stride);
        if (arg_better(other_v, other_i, *v, *i)) {
            *v = other_v;
            *i = other_i;
        }
    }
}
#endif

// The best (value, index) of the whole work-group, to work-item 0 (the others' are left
// unspecified). Every work-item must call it.
inline void group_arg(T* v, ulong* i, LOCAL T* lv, LOCAL ulong* li) {
#if NV_SHUFFLE
    // Each warp by shuffles, then warp 0 over the warps' bests: one barrier instead of
    // one per halving.
    const uint lid = get_local_id(0), lane = lid & 31, warp = lid >> 5;
    warp_lanes_arg(v, i, 32);
    if (lane == 0) {
        lv[warp] = *v;
        li[warp] = *i;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (warp == 0) {
        *v = lane < WG / 32 ? lv[lane] : IDENTITY;
        *i = lane < WG / 32 ? li[lane] : NO_INDEX;
        warp_lanes_arg(v, i, 32);
    }
#else
    lanes_arg(v, i, lv, li, WG);
#endif
}

// Both launches share one scratch buffer of 64-bit words (kept between calls):
//   [0, 2)                 the answer, where the host has the kernels write it here,
//   [2, 2 + groups)        each group's index,
//   [2 + groups, ...)      each group's value (T, packed).
#define ARG_INDICES(scratch) ((scratch) + 2)
#define ARG_VALUES(scratch, groups) ((__global T*)((scratch) + 2 + (groups)))

// -DARG_LAST_GROUP=1 (the CUDA build): arg_partial's last group to finish folds the
// partial pairs itself, and arg_final is not launched: one launch instead of two (on
// the H200, 2^28 u32: 0.270-0.274 ms against 0.271-0.280 in the same runs). It relies on
// mem_fence ordering global memory between work-groups, which CUDA's does (opencl.cuh)
// and OpenCL 1.2's need not.
#ifndef ARG_LAST_GROUP
#define ARG_LAST_GROUP 0
#endif

// The best of the groups' partial pairs, into `answer` (two words: the value's bytes,
// then its index), so the host reads value and index in one transfer; the host passes
// the scratch itself (its first two words), or, on CUDA, page-locked host memory the
// kernel writes straight into (no copy after the kernel). Every work-item of one group
// calls it. Group g's range comes before group g + 1's and none is empty, so the first
// best partial value holds the first best index: the fold is over values by group
// number, then the index is looked up (the same code as the fold over the input, in as
// many registers).
inline void arg_fold_partials(uint groups, __global ulong* scratch, __global ulong* answer,
                              LOCAL T* lv, LOCAL ulong* li) {
    T best;
    ulong group;
    arg_fold(ARG_VALUES(scratch, groups), get_local_id(0), groups, WG, &best, &group);
    group_arg(&best, &group, lv, li);
    if (get_local_id(0) == 0) {
        *(__global T*)answer = best;
        answer[1] = ARG_INDICES(scratch)[group];
    }
}

// Launch 1 (`groups` groups): each group strides over its range; one pair per group.
// `done` counts the groups that have written theirs (ARG_LAST_GROUP only; it is zero
// at the start of every call and the last group puts it back).
__kernel void arg_partial(__global const T* in, ulong n, ulong group_len, uint groups,
                          __global ulong* scratch, __global volatile uint* done,
                          __global ulong* answer) {
    __local T lv[WG];
    __local ulong li[WG];
#if ARG_LAST_GROUP
    __local uint last;
#endif
    ulong start = get_group_id(0) * group_len;
    ulong end = min(n, start + group_len);
    T best;
    ulong at;
    arg_fold(in, start + get_local_id(0), end, WG, &best, &at);
    group_arg(&best, &at, lv, li);
    if (get_local_id(0) == 0) {
        ARG_VALUES(scratch, groups)[get_group_id(0)] = best;
        ARG_INDICES(scratch)[get_group_id(0)] = at;
#if ARG_LAST_GROUP
        // Release this group's pair before counting it; the last group's fence after
        // the count acquires every other group's (the CUDA memory model's fence-fence
        // synchronization through the counter).
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        last = atomic_inc(done) == groups - 1;
        if (last) {
            atomic_xchg(done, 0u);
            mem_fence(CLK_GLOBAL_MEM_FENCE);
        }
#endif
    }
#if ARG_LAST_GROUP
    barrier(CLK_LOCAL_MEM_FENCE);
    if (last)
        arg_fold_partials(groups, scratch, answer, lv, li);
#endif
}

// Launch 2 (one group), without ARG_LAST_GROUP.
__kernel void arg_final(uint groups, __global ulong* scratch, __global ulong* answer) {
    __local T lv[WG];
    __local ulong li[WG];
    arg_fold_partials(groups, scratch, answer, lv, li);
}

// Segmented arg-reduction over CSR offsets, one work-item per segment (short segments).
__kernel void segmented_arg_items(__global const T* in, __global const ulong* offsets,
                                  ulong segments, __global T* values, __global ulong* indices) {
    ulong s = get_global_id(0);
    if (s >= segments)
        return;
    T best;
    ulong at;
    arg_fold(in, offsets[s], offsets[s + 1], 1, &best, &at);
    values[s] = best;
    indices[s] = at;
}

// Segmented arg-reduction, one work-group per segment (long segments).
__kernel void segmented_arg_groups(__global const T* in, __global const ulong* offsets,
                                   ulong segments, __global T* values,
                                   __global ulong* indices) {
    __local T lv[WG];
    __local ulong li[WG];
    ulong s = get_group_id(0);
    T best;
    ulong at;
    arg_fold(in, offsets[s] + get_local_id(0), offsets[s + 1], WG, &best, &at);
    group_arg(&best, &at, lv, li);
    if (get_local_id(0) == 0) {
        values[s] = best;
        indices[s] = at;
    }
}

// Segmented arg-reduction, `lanes` consecutive work-items per segment (a power of two,
// at most 32, dividing WG; medium segments): coalesced reads without idling a whole
// work-group on a short segment.
__kernel void segmented_arg_lanes(__global const T* in, __global const ulong* offsets,
                                  ulong segments, __global T* values, __global ulong* indices,
                                  uint lanes) {
    const uint lid = get_local_id(0), lane = lid % lanes;
    const ulong s = get_global_id(0) / lanes;
    T best = IDENTITY;
    ulong at = NO_INDEX;
    if (s < segments)
        arg_fold(in, offsets[s] + lane, offsets[s + 1], lanes, &best, &at);
#if NV_SHUFFLE
    warp_lanes_arg(&best, &at, lanes);
#else
    __local T lv[WG];
    __local ulong li[WG];
    lanes_arg(&best, &at, lv, li, lanes);
#endif
    if (lane == 0 && s < segments) {
        values[s] = best;
        indices[s] = at;
    }
}
#endif
