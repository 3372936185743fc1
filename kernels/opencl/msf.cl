// Minimum spanning forest kernels (appended to types.cl). The host passes:
//   -DKEYS=n    0 unweighted, 1 a uint weight key per edge, 2 a ulong weight key per edge
//   -DATOM64=n  1 when cl_khr_int64_{base,extended}_atomics are present
// Edges are ordered by (weight key, edge position): keys are order-preserving images
// of the weights (src/msf/prepare.rs), so the lightest edge under this strict order
// is unique and every algorithm finds the same forest.
//
// The lightest edge at each vertex is found by atomic minima, one 32- or 64-bit word
// at a time: pass 0 takes the minimum of the first word over all offered edges, pass 1
// the minimum of the next word among edges that matched pass 0, and so on. With 64-bit
// atomics a uint key and the position pack into one ulong (a single pass); without
// them every word is a 32-bit atomic_min, which OpenCL 1.2 guarantees.

#if ATOM64 && defined(__OPENCL_VERSION__)
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
#endif

#if KEYS == 2
typedef ulong Key;
#else
typedef uint Key;
#endif

#define NO_EDGE 0xFFFFFFFFu
#define PACKED (KEYS == 1 && ATOM64)
// Atomic-min passes that find the lightest edge, one per key word (KernelConfig::passes).
#if KEYS == 0 || PACKED
#define PASSES 1
#elif KEYS == 1 || ATOM64
#define PASSES 2
#else
#define PASSES 3
#endif

// Per-vertex minima: best64 (packed key|position, or the ulong key), best_hi/best_lo
// (32-bit words of the key), best_pos (the position).
#define BEST_PARAMS \
    __global ulong *best64, __global uint *best_hi, __global uint *best_lo, __global uint *best_pos

// Offers edge `e` with key `key` to vertex `r` in pass `pass`. Each atomic is issued
// only when it can lower the current minimum: late rounds offer millions of edges to
// a few roots, and skipping the hopeless atomics removes that contention.
inline void offer(uint r, uint e, Key key, uint pass, BEST_PARAMS) {
#if KEYS == 0
    if (e < best_pos[r])
        atomic_min(&best_pos[r], e);
#elif PACKED
    ulong packed = ((ulong)key << 32) | e;
    if (packed < best64[r])
        atom_min(&best64[r], packed);
#elif KEYS == 1
    if (pass == 0) {
        if (key < best_hi[r])
            atomic_min(&best_hi[r], key);
    } else if (key == best_hi[r] && e < best_pos[r])
        atomic_min(&best_pos[r], e);
#elif ATOM64
    if (pass == 0) {
        if (key < best64[r])
            atom_min(&best64[r], key);
    } else if (key == best64[r] && e < best_pos[r])
        atomic_min(&best_pos[r], e);
#else
    uint hi = (uint)(key >> 32), lo = (uint)key;
    if (pass == 0) {
        if (hi < best_hi[r])
            atomic_min(&best_hi[r], hi);
    } else if (pass == 1) {
        if (hi == best_hi[r] && lo < best_lo[r])
            atomic_min(&best_lo[r], lo);
    } else if (hi == best_hi[r] && lo == best_lo[r] && e < best_pos[r])
        atomic_min(&best_pos[r], e);
#endif
}

// The lightest edge offered to `r` once all passes ran, or NO_EDGE.
inline uint best_edge(uint r, BEST_PARAMS) {
#if PACKED
    ulong b = best64[r];
    return b == ULONG_MAX ? NO_EDGE : (uint)b;
#else
    return best_pos[r];
#endif
}

inline Key key_of(__global const Key* keys, uint e) {
#if KEYS == 0
    return 0;
#else
    return keys[e];
#endif
}

// ---- union-find (edge-centric Borůvka, `auto`) ------------------------------------
// ec_choose hooks a root only onto a smaller root, by a successful compare-and-swap, so
// parent[] stays acyclic; path halving rewrites only non-roots, so concurrent finds and
// hooks never lose a link. A stale read only yields an older ancestor; the hook reads
// through volatile so a retry sees other groups' hooks. (ec_rounds points each tree
// along the edge it chose instead, in a step with no finds; see choose_and_follow.
// Links made either way keep parent[] acyclic, so phases may mix them.)

// Root of x with path halving; find_root_fresh reads through volatile.
#define DEFINE_FIND_ROOT(name, qualifier)                  \
    inline uint name(__global qualifier uint* parent, uint x) { \
        for (;;) {                                         \
            uint p = parent[x];                            \
            if (p == x)                                    \
                return x;                                  \
            uint gp = parent[p];                           \
            if (gp != p)                                   \
                parent[x] = gp;                            \
            x = gp;                                        \
        }                                                  \
    }
DEFINE_FIND_ROOT(find_root, )
DEFINE_FIND_ROOT(find_root_fresh, volatile)

// Joins the trees of a and b: the higher root hung under the lower by compare-and-swap,
// retried from fresh roots when another work-item linked one first (so each tree's
// root stays its smallest vertex where every link is made this way).
inline void link_roots(__global volatile uint* parent, uint a, uint b) {
    for (;;) {
        uint ra = find_root_fresh(parent, a), rb = find_root_fresh(parent, b);
        if (ra == rb)
            return;
        uint high = max(ra, rb), low = min(ra, rb);
        if (atomic_cmpxchg(&parent[high], high, low) == high)
            return;
    }
}

// A slot in an output list for each work-item that `keep`s something, with one global
// atomic per work-group (`shared` is 2 words of the kernel's local memory). Every
// work-item of the group must call it.
inline uint claim_slot(bool keep, __global uint* counter, LOCAL uint* shared) {
    if (get_local_id(0) == 0)
        shared[0] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint slot = keep ? atomic_inc(&shared[0]) : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0)
        shared[1] = shared[0] ? atomic_add(counter, shared[0]) : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    return shared[1] + slot;
}

// The worklist length lives on the device, in slot `at` of `counts` (one slot per
// round, so no round waits for the host to clear a counter), and rounds run without the
// host reading it: the host launches at least that many work-items (a bound it learns
// from counts it reads back some rounds later) and the rest return at once.

// out[i] = i below `len`: every vertex its own tree or successor (written on the device,
// instead of a host array copied over and waited for every round).
__kernel void iota(__global uint* out, uint len) {
    uint i = get_global_id(0);
    if (i < len)
        out[i] = i;
}

// Every vertex points straight at its root (before a phase that finds the roots of
// every edge's ends; concurrent path halving is harmless, as in ec_compact).
__kernel void uf_flatten(__global uint* parent, uint vertices) {
    uint v = get_global_id(0);
    if (v < vertices)
        parent[v] = find_root(parent, v);
}

// The worklist of edge-centric Borůvka holds, per entry, the edge's position, the roots
// its ends had at the last compaction and its key: later rounds read these in order
// instead of gathering the edge's ends and key from the graph's arrays, and a root
// found then is an ancestor of the end, so the end's root now is that root's root.

// An end of the graph's arrays as the algorithms read it: clamped to the vertex range.
// The ends' check (rs_prepare) runs beside the algorithm and is read only at the
// end, so a graph it rejects must still index inside every vertex array until then.
inline uint end_at(__global const uint* ends, uint e, uint vertices) {
    return min(ends[e], vertices - 1);
}

// Whether entry `i` of a round's compaction stays (its ends in different trees), with
// its edge, roots and key: entry i of the worklist, or, in a phase's first round
// (`first`), edge i of the graph when its key lies in [lowest, highest].
inline bool compacted(uint i, bool first, __global const uint* eu, __global const uint* ev,
                      __global const Key* keys, ulong lowest, ulong highest,
                      __global uint* parent, uint vertices, __global const uint* wl_e,
                      __global const uint* wl_ru, __global const uint* wl_rv,
                      __global const Key* wl_key, uint* e, uint* ru, uint* rv, Key* key) {
    if (first) {
        *e = i;
        *key = key_of(keys, i);
        if ((ulong)*key < lowest || (ulong)*key > highest)
            return false;
        *ru = find_root(parent, end_at(eu, i, vertices));
        *rv = find_root(parent, end_at(ev, i, vertices));
    } else {
        *e = wl_e[i];
        *key = key_of(wl_key, i);
        *ru = find_root(parent, wl_ru[i]);
        *rv = find_root(parent, wl_rv[i]);
    }
    return *ru != *rv;
}

inline void put_entry(uint slot, uint e, uint ru, uint rv, Key key, __global uint* out_e,
                      __global uint* out_ru, __global uint* out_rv, __global Key* out_key) {
    out_e[slot] = e;
    out_ru[slot] = ru;
    out_rv[slot] = rv;
#if KEYS
    out_key[slot] = key;
#endif
}

// Keeps the worklist entries whose ends are in different trees, with their new roots.
// A phase's first round (`first_count` edges) reads the edges by position instead and
// keeps only those whose key lies in [lowest, highest] (the light edges first, then
// the rest). counts[at] holds the worklist's length and counts[into] (zero before)
// receives the new one; work-item 0 clears counts[clear_at] for a later round.
__kernel void ec_compact(__global const uint* eu, __global const uint* ev,
                         __global const Key* keys, ulong lowest, ulong highest,
                         __global uint* parent, uint vertices, uint first_count,
                         __global uint* counts, uint at, uint into, uint clear_at,
                         __global const uint* wl_e,
                         __global const uint* wl_ru, __global const uint* wl_rv,
                         __global const Key* wl_key, __global uint* out_e,
                         __global uint* out_ru, __global uint* out_rv,
                         __global Key* out_key) {
    __local uint shared[2];
    uint i = get_global_id(0);
    uint n = first_count ? first_count : counts[at];
    if (i == 0)
        counts[clear_at] = 0;
    uint e = 0, ru = 0, rv = 0;
    Key key = 0;
    bool keep = i < n && compacted(i, first_count != 0, eu, ev, keys, lowest, highest, parent,
                                   vertices, wl_e, wl_ru, wl_rv, wl_key, &e, &ru, &rv, &key);
    uint slot = claim_slot(keep, &counts[into], shared);
    if (keep)
        put_entry(slot, e, ru, rv, key, out_e, out_ru, out_rv, out_key);
}

// Pass `pass` of the lightest-edge search: each worklist edge offers itself to both
// trees. Its key is keys[i] with `keys_in_order` (the worklist's own), else keys[edge].
__kernel void ec_lightest(__global const uint* worklist, __global const uint* wl_ru,
                          __global const uint* wl_rv, __global const Key* keys,
                          uint keys_in_order, __global const uint* counts, uint at,
                          uint pass, BEST_PARAMS) {
    uint i = get_global_id(0);
    if (i >= counts[at])
        return;
    uint e = worklist[i];
    Key key = key_of(keys, keys_in_order ? i : e);
    offer(wl_ru[i], e, key, pass, best64, best_hi, best_lo, best_pos);
    offer(wl_rv[i], e, key, pass, best64, best_hi, best_lo, best_pos);
}

// Marks entry i's edge if one of its trees chose it and, with `hook`, joins the two trees.
inline void choose_entry(uint i, __global const uint* worklist, __global const uint* wl_ru,
                         __global const uint* wl_rv, BEST_PARAMS, __global uchar* in_forest,
                         uint hook, __global volatile uint* parent) {
    uint e = worklist[i];
    if (best_edge(wl_ru[i], best64, best_hi, best_lo, best_pos) != e &&
        best_edge(wl_rv[i], best64, best_hi, best_lo, best_pos) != e)
        return;
    in_forest[e] = 1;
    if (hook)
        link_roots(parent, wl_ru[i], wl_rv[i]);
}

// Marks the edges some tree chose and, with `hook` (edge-centric Borůvka), joins the
// trees of each chosen edge's ends in `parent` (strut merges its own way). Choosing
// reads only best_*, which hooking leaves alone, so one launch does both.
__kernel void ec_choose(__global const uint* worklist, __global const uint* wl_ru,
                        __global const uint* wl_rv, __global const uint* counts, uint at,
                        BEST_PARAMS, __global uchar* in_forest, uint hook,
                        __global volatile uint* parent) {
    uint i = get_global_id(0);
    if (i < counts[at])
        choose_entry(i, worklist, wl_ru, wl_rv, best64, best_hi, best_lo, best_pos, in_forest,
                     hook, parent);
}

#if defined(__CUDACC__) || RESIDENT_ROUNDS
// ---- every round of a phase in one launch (CUDA; NVIDIA's OpenCL) -------------------
// Road graphs need ten or so rounds of a few microseconds of work each; as separate
// launches whose lengths the host reads back, their gaps are most of the time. Here
// the groups of one launch that are all resident at once (so none waits for a group
// that cannot start) run the rounds with a barrier across the launch between steps,
// two per round: the compaction also offers each kept entry to its trees, and
// choosing also resets the other set of minima for the next round's trees (every tree
// that will have entries then is a root now with entries of its own, so resetting the
// minima of the worklist's roots resets all that the next round reads).
//
// CUDA's cooperative launch promises the residency. OpenCL promises none; the host
// builds this kernel (-DRESIDENT_ROUNDS=1) only on NVIDIA's OpenCL platform for GPUs,
// whose work-groups are the same hardware blocks, and launches one group per compute
// unit, or launches per round where the driver refuses the group (opencl/mod.rs).

// A fence across the device, ordering this work-item's global accesses before and
// after it for every other work-group: CUDA's __threadfence; on NVIDIA's OpenCL the PTX
// instruction it compiles to (OpenCL 1.2's mem_fence orders one work-item's accesses
// only, so it need not).
#ifdef __CUDACC__
#define DEVICE_FENCE() __threadfence()
#else
#define DEVICE_FENCE() asm volatile("membar.gl;" ::: "memory")
#endif

// A barrier across every group of the launch: sync[0] counts arrivals, sync[1] the
// barriers passed (sync[0] is zero before the launch and again after it). The fences
// make each group's writes before the barrier visible to every group after it, as
// cooperative groups' grid barrier does.
inline void grid_barrier(__global volatile uint* sync) {
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (get_local_id(0) == 0) {
        uint passed = sync[1];
        DEVICE_FENCE();
        if (atomic_inc(&sync[0]) == (uint)get_num_groups(0) - 1) {
            sync[0] = 0;
            DEVICE_FENCE();
            atomic_inc(&sync[1]);
        } else {
            while (sync[1] == passed) {
            }
        }
        DEVICE_FENCE();
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
}

// Marks edge e if one of its trees (roots ru and rv, both roots since the round's
// compaction) chose it, and points each tree that chose it at the other: every tree
// chose exactly one edge, so each root is written by one work-item at most, and no
// find or compare-and-swap is needed. Two trees that chose each other's edge would
// point at each other: the larger root points at the smaller instead (under the strict
// (key, position) order no longer cycles form).
inline void choose_and_follow(uint e, uint ru, uint rv, BEST_PARAMS, __global uchar* in_forest,
                              __global uint* parent) {
    bool u_chose = best_edge(ru, best64, best_hi, best_lo, best_pos) == e;
    bool v_chose = best_edge(rv, best64, best_hi, best_lo, best_pos) == e;
    if (!u_chose && !v_chose)
        return;
    in_forest[e] = 1;
    if (u_chose && v_chose)
        parent[max(ru, rv)] = min(ru, rv);
    else if (u_chose)
        parent[ru] = rv;
    else
        parent[rv] = ru;
}

// Root r offers nothing yet (every set of minima the configuration uses).
inline void reset_best(uint r, BEST_PARAMS) {
#if KEYS == 0
    best_pos[r] = NO_EDGE;
#elif PACKED
    best64[r] = ULONG_MAX;
#elif ATOM64
    best64[r] = ULONG_MAX;
    best_pos[r] = NO_EDGE;
#else
    best_hi[r] = NO_EDGE;
    best_lo[r] = NO_EDGE;
    best_pos[r] = NO_EDGE;
#endif
}

#define BEST_ARGS(s) s##64, s##_hi, s##_lo, s##_pos

// -DROUND_CLOCKS=1 (CUDA variant bundles only): block 0 notes the clock at each barrier and
// prints the marks with the rounds' lengths at the end.
#if ROUND_CLOCKS
#define CLOCK_MARK(count)                                  \
    if (threadIdx.x == 0 && marks_len < 64) {              \
        marks[marks_len] = clock64();                      \
        mark_counts[marks_len++] = count;                  \
    }
#define CLOCK_PRINT()                                      \
    if (blockIdx.x == 0 && threadIdx.x == 0)               \
        for (uint k = 1; k < marks_len; k++)               \
            printf("ec_rounds mark %u count %u cycles %lld\n", k, mark_counts[k], marks[k] - marks[k - 1])
#else
#define CLOCK_MARK(count)
#define CLOCK_PRINT()
#endif

// The rounds of ec_compact, ec_lightest and ec_choose from round `round` (its count
// slots as the host's) until the worklist is empty. The first set of minima
// (best*) is reset before the launch; the other (next*) is the next round's. Leaves
// the last worklist in whichever buffer it ended; the host needs none of it.
__kernel void ec_rounds(__global const uint* eu, __global const uint* ev,
                        __global const Key* keys, ulong lowest, ulong highest,
                        __global uint* parent, uint vertices, uint first_count,
                        __global uint* counts, uint round, __global uint* wl_e,
                        __global uint* wl_ru,
                        __global uint* wl_rv, __global Key* wl_key, __global uint* out_e,
                        __global uint* out_ru, __global uint* out_rv, __global Key* out_key,
                        BEST_PARAMS, __global ulong* next64, __global uint* next_hi,
                        __global uint* next_lo, __global uint* next_pos,
                        __global uchar* in_forest) {
    __local uint shared[2];
    __global volatile uint* fresh_counts = counts;
    // The barrier's words follow the count slots (COUNT_SLOTS + BARRIER_WORDS in msf.rs).
    __global volatile uint* sync = counts + 3;
    const uint group = (uint)get_local_size(0), stride = (uint)get_num_groups(0) * group;
#if ROUND_CLOCKS
    long long marks[64];
    uint mark_counts[64], marks_len = 0;
#endif
    CLOCK_MARK(0u);
    for (;; round++) {
        uint at = round % 3, into = (round + 1) % 3, clear_at = (round + 2) % 3;
        uint n = first_count ? first_count : fresh_counts[at];
        if (get_global_id(0) == 0)
            counts[clear_at] = 0;
        // Compaction, each kept entry offering itself (pass 0) to both trees.
        for (uint base = (uint)get_group_id(0) * group; base < n; base += stride) {
            uint i = base + (uint)get_local_id(0);
            uint e = 0, ru = 0, rv = 0;
            Key key = 0;
            bool keep = i < n && compacted(i, first_count != 0, eu, ev, keys, lowest, highest,
                                           parent, vertices, wl_e, wl_ru, wl_rv, wl_key, &e,
                                           &ru, &rv, &key);
            uint slot = claim_slot(keep, &counts[into], shared);
            if (keep) {
                put_entry(slot, e, ru, rv, key, out_e, out_ru, out_rv, out_key);
                offer(ru, e, key, 0, BEST_ARGS(best));
                offer(rv, e, key, 0, BEST_ARGS(best));
            }
        }
        first_count = 0;
        grid_barrier(sync);
        uint count = fresh_counts[into];
        CLOCK_MARK(count);
        if (count == 0) {
            CLOCK_PRINT();
            return;
        }
        // The remaining passes of the lightest-edge search.
        for (uint pass = 1; pass < PASSES; pass++) {
            for (uint i = get_global_id(0); i < count; i += stride) {
                Key key = key_of(out_key, i);
                offer(out_ru[i], out_e[i], key, pass, BEST_ARGS(best));
                offer(out_rv[i], out_e[i], key, pass, BEST_ARGS(best));
            }
            grid_barrier(sync);
        }
        for (uint i = get_global_id(0); i < count; i += stride) {
            choose_and_follow(out_e[i], out_ru[i], out_rv[i], BEST_ARGS(best), in_forest,
                              parent);
            reset_best(out_ru[i], BEST_ARGS(next));
            reset_best(out_rv[i], BEST_ARGS(next));
        }
        grid_barrier(sync);
        CLOCK_MARK(count);
        // The new worklist is the next round's input; the minima swap roles.
        __global uint* t;
        t = wl_e, wl_e = out_e, out_e = t;
        t = wl_ru, wl_ru = out_ru, out_ru = t;
        t = wl_rv, wl_rv = out_rv, out_rv = t;
        __global Key* tk = wl_key;
        wl_key = out_key, out_key = tk;
        __global ulong* t64 = best64;
        best64 = next64, next64 = t64;
        t = best_hi, best_hi = next_hi, next_hi = t;
        t = best_lo, best_lo = next_lo, next_lo = t;
        t = best_pos, best_pos = next_pos, next_pos = t;
    }
}
#endif

// ---- Vineet et al.'s recursive Borůvka (`boruvka`) ---------------------------------
// The contracted graph is a list of directed entries (src, tgt, edge position), two per
// undirected edge, grouped by src (a CSR over supervertices: offsets[v] .. offsets[v+1])
// and relabelled to supervertex ids every round. The lightest edge leaving each
// supervertex comes from a segmented min-scan (the scan primitive, u64 min, head flags)
// over one value per entry: the packed (key, position) where the key fits 32 bits, else
// two scans, the key's and then the position's among the entries of the lightest key.

// Head flags of the segments: the first entry of each src.
__kernel void vb_head_flags(__global const uint* src, uint entries, __global uchar* flags) {
    uint j = get_global_id(0);
    if (j < entries)
        flags[j] = j == 0 || src[j] != src[j - 1];
}

// The scan's input for pass `pass` (see above); min_key holds pass 0's minima.
__kernel void vb_values(__global const uint* src, __global const uint* pos,
                        __global const Key* keys, uint entries, uint pass,
                        __global const ulong* min_key, __global ulong* values) {
    uint j = get_global_id(0);
    if (j >= entries)
        return;
    uint e = pos[j];
#if KEYS == 2
    ulong key = keys[e];
    values[j] = pass == 0 ? key : key == min_key[src[j]] ? (ulong)e : ULONG_MAX;
#else
    values[j] = ((ulong)key_of(keys, e) << 32) | e;
#endif
}

// Reads each supervertex's minimum off the last entry of its segment: pass 0 of wide
// keys gives min_key, the last pass the chosen position (NO_EDGE for no entries).
__kernel void vb_segment_min(__global const uint* offsets, uint vertices,
                             __global const ulong* scanned, uint pass,
                             __global ulong* min_key, __global uint* chosen) {
    uint v = get_global_id(0);
    if (v >= vertices)
        return;
    uint lo = offsets[v], hi = offsets[v + 1];
    ulong last = lo < hi ? scanned[hi - 1] : ULONG_MAX;
#if KEYS == 2
    if (pass == 0) {
        min_key[v] = last;
        return;
    }
#endif
    chosen[v] = lo < hi ? (uint)last : NO_EDGE;
}

// The successor of each supervertex: the far end of its lightest edge (itself when it
// has none): the entry that carries the chosen edge out of src writes its target.
__kernel void vb_successor(__global const uint* src, __global const uint* tgt,
                           __global const uint* pos, uint entries,
                           __global const uint* chosen, __global uint* successor) {
    uint j = get_global_id(0);
    if (j >= entries)
        return;
    if (chosen[src[j]] == pos[j])
        successor[src[j]] = tgt[j];
}

// Breaks the 2-cycles S(S(v)) = v (both ends chose the same edge): the smaller vertex
// becomes the root. Every other vertex's chosen edge joins the forest.
__kernel void vb_break_cycles(__global uint* successor, uint vertices,
                              __global const uint* chosen, __global uchar* in_forest) {
    uint v = get_global_id(0);
    if (v >= vertices)
        return;
    uint s = successor[v];
    if (s == v)
        return;
    if (v < s && successor[s] == v) {
        successor[v] = v;
        return;
    }
    in_forest[chosen[v]] = 1;
}

__kernel void vb_jump(__global uint* successor, uint vertices, __global uint* changed) {
    uint v = get_global_id(0);
    if (v >= vertices)
        return;
    uint s = successor[v], ss = successor[s];
    if (s != ss) {
        successor[v] = ss;
        *changed = 1;
    }
}

__kernel void vb_root_flags(__global const uint* successor, uint vertices,
                            __global uint* is_root) {
    uint v = get_global_id(0);
    if (v < vertices)
        is_root[v] = successor[v] == v;
}

// Grouping by src. The first time (vb_count, vb_scatter) is a counting sort of the
// ungrouped list: count the entries per src, an exclusive scan of the counts gives the
// offsets, and each entry takes its src's next free slot (`cursor`, a copy of them).
// Order inside a segment does not matter: the values scanned there are unique.
__kernel void vb_count(__global const uint* src, __global const uint* tgt, uint entries,
                       __global uint* count) {
    uint j = get_global_id(0);
    if (j < entries && src[j] != tgt[j])
        atomic_inc(&count[src[j]]);
}

__kernel void vb_scatter(__global const uint* src, __global const uint* tgt,
                         __global const uint* pos, uint entries, __global uint* cursor,
                         __global uint* out_src, __global uint* out_tgt,
                         __global uint* out_pos) {
    uint j = get_global_id(0);
    if (j >= entries || src[j] == tgt[j])
        return;
    uint slot = atomic_inc(&cursor[src[j]]);
    out_src[slot] = src[j];
    out_tgt[slot] = tgt[j];
    out_pos[slot] = pos[j];
}

// Contraction keeps the list grouped without an atomic per entry (late rounds send
// millions of entries to a few supervertices): every entry of an old segment gets the
// same new src, so whole segments move. vb_keep flags the entries that stay (ends in
// different supervertices); a segmented exclusive sum-scan of the flags ranks them
// within their old segment; vb_segment_base gives each old segment its place inside
// its new group (one atomic per old segment) and counts the new groups; an exclusive
// scan of the counts gives the new offsets; vb_move writes each entry to
// new_offsets[a] + base[old src] + rank.
inline uint vb_new_src(uint v, __global const uint* successor, __global const uint* new_id) {
    return new_id[successor[v]];
}

__kernel void vb_keep(__global const uint* src, __global const uint* tgt, uint entries,
                      __global const uint* successor, __global const uint* new_id,
                      __global uint* keep) {
    uint j = get_global_id(0);
    if (j < entries)
        keep[j] = vb_new_src(src[j], successor, new_id) != vb_new_src(tgt[j], successor, new_id);
}

// `rank` holds the scanned flags; the last entry's flag is recomputed.
__kernel void vb_segment_base(__global const uint* offsets, uint vertices,
                              __global const uint* tgt, __global const uint* rank,
                              __global const uint* successor, __global const uint* new_id,
                              __global uint* count, __global uint* base) {
    uint v = get_global_id(0);
    if (v >= vertices)
        return;
    uint lo = offsets[v], hi = offsets[v + 1];
    if (lo == hi)
        return;
    uint a = vb_new_src(v, successor, new_id);
    uint kept = rank[hi - 1] + (a != vb_new_src(tgt[hi - 1], successor, new_id));
    if (kept)
        base[v] = atomic_add(&count[a], kept);
}

__kernel void vb_move(__global const uint* src, __global const uint* tgt,
                      __global const uint* pos, uint entries, __global const uint* successor,
                      __global const uint* new_id, __global const uint* rank,
                      __global const uint* base, __global const uint* new_offsets,
                      __global uint* out_src, __global uint* out_tgt, __global uint* out_pos) {
    uint j = get_global_id(0);
    if (j >= entries)
        return;
    uint a = vb_new_src(src[j], successor, new_id), b = vb_new_src(tgt[j], successor, new_id);
    if (a == b)
        return;
    uint slot = new_offsets[a] + base[src[j]] + rank[j];
    out_src[slot] = a;
    out_tgt[slot] = b;
    out_pos[slot] = pos[j];
}

// The first entry list, ungrouped: both directions of every edge (a self-loop gives two
// entries from a vertex to itself, which vb_count and vb_scatter drop).
__kernel void vb_entries(__global const uint* eu, __global const uint* ev, uint edges,
                         uint vertices, __global uint* out_src, __global uint* out_tgt,
                         __global uint* out_pos) {
    uint e = get_global_id(0);
    if (e >= edges)
        return;
    uint a = end_at(eu, e, vertices), b = end_at(ev, e, vertices);
    out_src[2 * e] = a;
    out_tgt[2 * e] = b;
    out_pos[2 * e] = e;
    out_src[2 * e + 1] = b;
    out_tgt[2 * e + 1] = a;
    out_pos[2 * e + 1] = e;
}

// ---- Wang et al.'s Prim (`prim`) -----------------------------------------------------
// One work-group grows the forest in a single launch (no host round trip per vertex).
// Candidates R2/R3 per vertex (lightest known edge into the tree: key and position);
// the two-level min-reduction keeps each block of WG vertices' best candidate in
// block_best between steps and recomputes only the blocks a step touched. Parallel
// edges were merged on the host, so each neighbour is updated by one work-item.

#if KEYS == 2
#define KEY_MAX ULONG_MAX
#else
#define KEY_MAX UINT_MAX
#endif
#define DIRTY_CAPACITY 512

inline bool lighter(Key ka, uint pa, Key kb, uint pb) {
    return ka < kb || (ka == kb && pa < pb);
}

// Reduces each work-item's (key, position, vertex) to work-item 0's, returned to all.
inline uint group_lightest(Key k, uint p, uint v, LOCAL Key* lk, LOCAL uint* lp,
                           LOCAL uint* lv) {
    uint lid = get_local_id(0);
    lk[lid] = k;
    lp[lid] = p;
    lv[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint stride = WG / 2; stride > 0; stride >>= 1) {
        if (lid < stride && lighter(lk[lid + stride], lp[lid + stride], lk[lid], lp[lid])) {
            lk[lid] = lk[lid + stride];
            lp[lid] = lp[lid + stride];
            lv[lid] = lv[lid + stride];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    uint best = lv[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return best;
}

__kernel void prim_grow(__global const uint* offsets, __global const uint* targets,
                        __global const uint* edges, __global const Key* keys, uint n,
                        __global Key* cand_key, __global uint* cand_pos,
                        __global uchar* in_tree, __global uint* block_best,
                        __global uchar* in_forest) {
    __local Key lk[WG];
    __local uint lp[WG], lv[WG];
    __local uint chosen, next_start, dirty_count;
    __local uint dirty[DIRTY_CAPACITY];
    const uint lid = get_local_id(0);
    const uint blocks = (n + WG - 1) / WG;
    if (lid == 0)
        next_start = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (;;) {
        // 1. The lightest candidate of all: over the blocks' best.
        Key bk = KEY_MAX;
        uint bp = NO_EDGE, bv = NO_EDGE;
        for (uint b = lid; b < blocks; b += WG) {
            uint v = block_best[b];
            if (v != NO_EDGE && lighter(cand_key[v], cand_pos[v], bk, bp)) {
                bk = cand_key[v];
                bp = cand_pos[v];
                bv = v;
            }
        }
        bv = group_lightest(bk, bp, bv, lk, lp, lv);
        // 2. Add it to the tree, or start a new tree at the lowest unreached vertex.
        if (lid == 0) {
            if (bv == NO_EDGE) {
                uint s = next_start;
                while (s < n && in_tree[s])
                    s++;
                next_start = s;
                chosen = s;
            } else {
                chosen = bv;
                in_forest[cand_pos[bv]] = 1;
            }
            if (chosen < n)
                in_tree[chosen] = 1;
            dirty_count = 0;
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        const uint u = chosen;
        if (u >= n)
            return;
        // 3. Its edges may give unreached neighbours lighter candidates.
        for (uint j = offsets[u] + lid; j < offsets[u + 1]; j += WG) {
            uint w = targets[j], e = edges[j];
            Key k = key_of(keys, e);
            if (!in_tree[w] && lighter(k, e, cand_key[w], cand_pos[w])) {
                cand_key[w] = k;
                cand_pos[w] = e;
                uint slot = atomic_inc(&dirty_count);
                if (slot < DIRTY_CAPACITY)
                    dirty[slot] = w / WG;
            }
        }
        if (lid == 0) {
            uint slot = atomic_inc(&dirty_count);
            if (slot < DIRTY_CAPACITY)
                dirty[slot] = u / WG;
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        // 4. Recompute the touched blocks' best (every block after an overflow).
        const uint touched = dirty_count;
        const uint count = touched > DIRTY_CAPACITY ? blocks : touched;
        for (uint d = 0; d < count; d++) {
            uint b = touched > DIRTY_CAPACITY ? d : dirty[d];
            uint v = b * WG + lid;
            bool open = v < n && !in_tree[v] && cand_pos[v] != NO_EDGE;
            uint best = group_lightest(open ? cand_key[v] : KEY_MAX,
                                       open ? cand_pos[v] : NO_EDGE, open ? v : NO_EDGE, lk,
                                       lp, lv);
            if (lid == 0)
                block_best[b] = best;
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }
}

// ---- Vasconcellos, Cáceres et al.'s strut algorithm (`strut`) -----------------------
// The bipartite edge-vertex graph as links (a, b, e): edge-vertex e joined to fragments
// a < b. Each fragment's strut (lightest incident edge-vertex) comes from ec_lightest
// and ec_choose over the links (worklist = e, roots = a and b); st_successor merges
// along the struts, vb_jump and the scan renumber, st_contract compacts.

// The first links: every edge that is not a self-loop.
__kernel void st_links(__global const uint* eu, __global const uint* ev, uint edges,
                       uint vertices, __global uint* out_a, __global uint* out_b,
                       __global uint* out_e, __global uint* counter) {
    __local uint shared[2];
    uint e = get_global_id(0);
    uint a = 0, b = 0;
    if (e < edges) {
        uint x = end_at(eu, e, vertices), y = end_at(ev, e, vertices);
        a = min(x, y);
        b = max(x, y);
    }
    bool keep = e < edges && a != b;
    uint slot = claim_slot(keep, counter, shared);
    if (keep) {
        out_a[slot] = a;
        out_b[slot] = b;
        out_e[slot] = e;
    }
}

// A fragment's successor is the far fragment of its strut; an edge-vertex picked from
// both sides (zero difference) roots the merged fragment at its smaller end.
__kernel void st_successor(__global const uint* la, __global const uint* lb,
                           __global const uint* le, __global const uint* count, BEST_PARAMS,
                           __global uint* successor) {
    uint i = get_global_id(0);
    if (i >= *count)
        return;
    uint a = la[i], b = lb[i], e = le[i];
    bool picked_a = best_edge(a, best64, best_hi, best_lo, best_pos) == e;
    bool picked_b = best_edge(b, best64, best_hi, best_lo, best_pos) == e;
    if (picked_a)
        successor[a] = picked_b ? a : b;
    if (picked_b)
        successor[b] = a;
}

// Compaction: relabel both ends, drop edge-vertices inside a fragment.
__kernel void st_contract(__global const uint* la, __global const uint* lb,
                          __global const uint* le, __global const uint* count,
                          __global const uint* successor, __global const uint* new_id,
                          __global uint* out_a, __global uint* out_b, __global uint* out_e,
                          __global uint* counter) {
    __local uint shared[2];
    uint i = get_global_id(0);
    uint a = 0, b = 0;
    bool inside = i < *count;
    if (inside) {
        a = new_id[successor[la[i]]];
        b = new_id[successor[lb[i]]];
    }
    bool keep = inside && a != b;
    uint slot = claim_slot(keep, counter, shared);
    if (keep) {
        out_a[slot] = min(a, b);
        out_b[slot] = max(a, b);
        out_e[slot] = le[i];
    }
}

// ---- graphs already in device memory (src/tier/gpu/resident.rs) --------------------
// The host path validates and derives keys on the host (src/msf/prepare.rs); these do
// the same on the device, for arrays the caller hands over in device memory. Bad
// positions go to `bad` by atomic minimum (NO_EDGE before): bad[0] the first edge with
// u out of range, bad[1] with v out of range, bad[2] with a NaN weight; bad[3] later
// receives the forest's edge count (rs_write_ids), so that the host reads all at once.

// Four consecutive entries of `array` from `first` (a multiple of 4) into `out`: one
// vector load where `aligned` (the array starts on 16 bytes) and all four exist, else
// one at a time, repeating the last entry past `len`. (With one word per work-item the
// ends' check of R-MAT 22 moved 2.0 TB/s on an H200, under half its memory's speed.)
inline void load_four(__global const uint* array, ulong first, ulong len, uint aligned,
                      uint* out) {
    if (aligned && first + 4 <= len) {
        uint4 x = ((__global const uint4*)array)[first / 4];
        out[0] = x.x;
        out[1] = x.y;
        out[2] = x.z;
        out[3] = x.w;
    } else {
        for (uint k = 0; k < 4; k++)
            out[k] = array[min(first + k, len - 1)];
    }
}

// The key of a 32-bit weight's bits (`kind` 0 uint, 1 int, 2 float; WeightKey::key in
// prepare.rs), complemented for a descending order.
inline uint narrow_key(uint bits, uint kind, uint descending) {
    uint key = bits;
    if (kind == 1) {
        key = bits ^ 0x80000000u;
    } else if (kind == 2) {
        if ((bits & 0x7FFFFFFFu) == 0)
            bits = 0; // -0.0 and 0.0 are one weight
        key = (bits >> 31) ? ~bits : (bits | 0x80000000u);
    }
    return descending ? ~key : key;
}

// The same for 64-bit weights (`kind` 0 ulong, 1 long, 2 double).
inline ulong wide_key(ulong bits, uint kind, uint descending) {
    const ulong sign = 0x8000000000000000ul;
    ulong key = bits;
    if (kind == 1) {
        key = bits ^ sign;
    } else if (kind == 2) {
        if ((bits & ~sign) == 0)
            bits = 0;
        key = (bits & sign) ? ~bits : (bits | sign);
    }
    return descending ? ~key : key;
}

// Of the four edges from `first` (a multiple of 4, below `edges`), the first whose u
// and the first whose v is not below `vertices` (`aligned`: both arrays start on 16
// bytes).
inline void check_four_ends(__global const uint* eu, __global const uint* ev, ulong first,
                            uint edges, ulong vertices, uint aligned, __global uint* bad) {
    uint u[4], v[4];
    load_four(eu, first, edges, aligned, u);
    load_four(ev, first, edges, aligned, v);
    for (uint k = 0; k < 4; k++)
        if (u[k] >= vertices) {
            atomic_min(&bad[0], (uint)(first + k));
            break;
        }
    for (uint k = 0; k < 4; k++)
        if (v[k] >= vertices) {
            atomic_min(&bad[1], (uint)(first + k));
            break;
        }
}

// The keys of the four 32-bit weights from `first` and the first NaN among them
// (`aligned`: the weights start on 16 bytes; the keys are gpumst's own).
inline void narrow_four_keys(__global const uint* weights, ulong first, uint edges, uint kind,
                             uint descending, uint aligned, __global uint* keys,
                             __global uint* bad) {
    uint bits[4], key[4];
    load_four(weights, first, edges, aligned, bits);
    for (uint k = 0; k < 4; k++) {
        if (kind == 2 && (bits[k] & 0x7FFFFFFFu) > 0x7F800000u) {
            atomic_min(&bad[2], (uint)min(first + k, (ulong)edges - 1));
            break;
        }
    }
    for (uint k = 0; k < 4; k++)
        key[k] = narrow_key(bits[k], kind, descending);
    if (first + 4 <= edges) {
        uint4 out;
        out.x = key[0];
        out.y = key[1];
        out.z = key[2];
        out.w = key[3];
        ((__global uint4*)keys)[first / 4] = out;
    } else {
        for (uint k = 0; first + k < edges; k++)
            keys[first + k] = key[k];
    }
}

// Everything before the algorithm in one launch (each step a launch of its own cost a
// road graph's call several microseconds), four edges per work-item: the ends' check,
// the forest's flags zeroed (`flag_words` words, which reach past the edges: so does
// the launch), and, where `make_keys`, the keys of 32-bit weights (`kind`,
// `descending`, `weights_aligned` as for narrow_four_keys).
__kernel void rs_prepare(__global const uint* eu, __global const uint* ev, uint edges,
                         ulong vertices, uint ends_aligned, __global uint* flags,
                         uint flag_words, __global const uint* weights, uint make_keys,
                         uint kind, uint descending, uint weights_aligned,
                         __global uint* keys, __global uint* bad) {
    ulong item = get_global_id(0);
    if (item < flag_words)
        flags[item] = 0;
    ulong first = item * 4;
    if (first >= edges)
        return;
    check_four_ends(eu, ev, first, edges, vertices, ends_aligned, bad);
    if (make_keys)
        narrow_four_keys(weights, first, edges, kind, descending, weights_aligned, keys, bad);
}

// The same for 64-bit weights, one per work-item.
__kernel void rs_wide_keys(__global const ulong* weights, uint edges, uint kind,
                           uint descending, __global ulong* keys, __global uint* bad) {
    uint e = get_global_id(0);
    if (e >= edges)
        return;
    ulong bits = weights[e];
    if (kind == 2 && (bits & 0x7FFFFFFFFFFFFFFFul) > 0x7FF0000000000000ul)
        atomic_min(&bad[2], e);
    keys[e] = wide_key(bits, kind, descending);
}

// The keys of every `stride`-th weight (`kind` and `descending` as for the keys'
// kernels), for the light phases' thresholds (light_thresholds): read from the weights
// themselves, so that the sample need not wait for the keys.
__kernel void rs_sample_keys(__global const Key* weights, ulong stride, uint count, uint kind,
                             uint descending, __global ulong* sample) {
    uint j = get_global_id(0);
    if (j >= count)
        return;
#if KEYS == 2
    sample[j] = wide_key(weights[(ulong)j * stride], kind, descending);
#else
    sample[j] = narrow_key(weights[(ulong)j * stride], kind, descending);
#endif
}

// The forest's edge ids in ascending order. Each work-group takes a block of
// WG * IDS_PER_ITEM edges, each work-item a run of IDS_PER_ITEM consecutive ones: in
// two passes over the flags with the host's scan of the blocks' counts in between, or
// in one (rs_ids_one_pass) where work-groups keep running once started.
#define IDS_PER_ITEM 16

// Exclusive sum over the work-group of each item's `x` (Hillis-Steele in `sums`, WG
// words); *total receives the group's sum. Every work-item must call it.
inline uint group_exclusive_sum(uint x, LOCAL uint* sums, uint* total) {
    uint lid = get_local_id(0);
    sums[lid] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 1; d < WG; d <<= 1) {
        uint y = lid >= d ? sums[lid - d] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        sums[lid] += y;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    uint inclusive = sums[lid];
    *total = sums[WG - 1];
    barrier(CLK_LOCAL_MEM_FENCE);
    return inclusive - x;
}

// This item's run of flags (0 or 1 each), as four words of four bytes: one vector
// load (the flags' buffer is gpumst's own, 16-byte aligned and zero up to a multiple of
// 16 bytes), zero past the edges.
inline void run_flags(__global const uchar* in_forest, uint edges, ulong item, uint* words) {
    ulong first = item * IDS_PER_ITEM;
    uint4 x;
    x.x = x.y = x.z = x.w = 0;
    if (first < edges)
        x = ((__global const uint4*)in_forest)[first / IDS_PER_ITEM];
    words[0] = x.x;
    words[1] = x.y;
    words[2] = x.z;
    words[3] = x.w;
}

// Chosen edges in a run: the bytes of the four words added (at most 4 per byte lane
// before the lanes are folded, so none carries into the next).
inline uint run_count(const uint* words) {
    uint lanes = words[0] + words[1] + words[2] + words[3];
    return (lanes * 0x01010101u) >> 24;
}

// This item's chosen edges' ids from ids[slot] on.
inline void write_run(const uint* words, ulong item, uint slot, __global ulong* ids) {
    ulong first = item * IDS_PER_ITEM;
    for (uint k = 0; k < IDS_PER_ITEM; k++)
        if ((words[k / 4] >> (8 * (k % 4))) & 0xFF)
            ids[slot++] = first + k;
}

// block_counts[g] = chosen edges in block g.
__kernel void rs_count_chosen(__global const uchar* in_forest, uint edges,
                              __global uint* block_counts) {
    __local uint sums[WG];
    uint total, words[4];
    run_flags(in_forest, edges, get_global_id(0), words);
    group_exclusive_sum(run_count(words), sums, &total);
    if (get_local_id(0) == 0)
        block_counts[get_group_id(0)] = total;
}

// Writes the ids: `block_ends` holds the inclusive sums of the blocks' counts. The
// call's status (`status`: rs_prepare's three words, then the count) receives the
// count; no id is written when a check found a bad edge, so that the caller's memory
// is left as it was.
__kernel void rs_write_ids(__global const uchar* in_forest, uint edges,
                           __global const uint* block_ends, __global uint* status,
                           __global ulong* ids) {
    __local uint sums[WG];
    uint total, words[4];
    uint g = get_group_id(0);
    if (g == get_num_groups(0) - 1 && get_local_id(0) == 0)
        status[3] = block_ends[g];
    run_flags(in_forest, edges, get_global_id(0), words);
    uint slot = (g ? block_ends[g - 1] : 0) + group_exclusive_sum(run_count(words), sums, &total);
    if ((status[0] & status[1] & status[2]) == NO_EDGE)
        write_run(words, get_global_id(0), slot, ids);
}

// rs_count_chosen, the scan and rs_write_ids in one launch, for few blocks and where
// work-groups keep running once started (the chained scan's condition). `status` holds
// rs_prepare's three words, the count's, a ticket, then one word per block, all
// NO_EDGE beforehand. Each group takes the next block by the ticket, publishes the
// block's count, and sums the counts of the blocks before it, which earlier groups
// took (so they run or are done), waiting for any not yet published: blocks^2 / 2
// reads in all, few beside the flags for the few blocks this serves. Ids are written
// only where `write` is set and the checks found nothing; the last block puts the
// count in status[3] and the four words in `out` (host memory the kernel can write,
// where the tier has some, else `status` itself).
__kernel void rs_ids_one_pass(__global const uchar* in_forest, uint edges,
                              __global volatile uint* status, uint write,
                              __global ulong* ids, __global uint* out) {
    __local uint sums[WG];
    __local uint taken;
    __global volatile uint* counts = status + 5;
    uint lid = get_local_id(0);
    if (lid == 0)
        taken = atomic_inc(&status[4]) + 1; // the ticket starts at NO_EDGE: blocks from 0
    barrier(CLK_LOCAL_MEM_FENCE);
    uint block = taken;
    ulong item = (ulong)block * WG + lid;
    uint total, before, words[4];
    run_flags(in_forest, edges, item, words);
    uint in_block = group_exclusive_sum(run_count(words), sums, &total);
    if (lid == 0)
        atomic_xchg(&counts[block], total); // below NO_EDGE: at most WG * IDS_PER_ITEM
    uint earlier = 0;
    for (uint b = lid; b < block; b += WG) {
        uint c;
        while ((c = counts[b]) == NO_EDGE)
            ;
        earlier += c;
    }
    group_exclusive_sum(earlier, sums, &before);
    if (write && (status[0] & status[1] & status[2]) == NO_EDGE)
        write_run(words, item, before + in_block, ids);
    if (block == get_num_groups(0) - 1 && lid == 0) {
        out[0] = status[0];
        out[1] = status[1];
        out[2] = status[2];
        out[3] = before + total;
    }
}

// The sum of the integer weights of block g's chosen edges (blocks as in rs_count_chosen)
// as a 128-bit two's-complement number, low word in block_sums[2g], high word in
// block_sums[2g + 1]: `wide` selects 8-byte weights, `is_signed` signed ones (sign-
// extended). The host adds the blocks' sums exactly (a forest of fewer than 2^32 edges
// of at most 64 bits sums to less than 2^96).
__kernel void rs_chosen_weight_sums(__global const uchar* in_forest, uint edges,
                                    __global const uint* weights, uint wide, uint is_signed,
                                    __global ulong* block_sums) {
    __local ulong low[WG], high[WG];
    ulong first = (ulong)get_global_id(0) * IDS_PER_ITEM;
    ulong lo = 0, hi = 0;
    for (uint k = 0; k < IDS_PER_ITEM; k++) {
        ulong e = first + k;
        if (e < edges && in_forest[e]) {
            ulong w = wide ? (ulong)weights[2 * e] | ((ulong)weights[2 * e + 1] << 32)
                           : (is_signed ? (ulong)(long)(int)weights[e] : (ulong)weights[e]);
            lo += w;
            hi += (is_signed && (long)w < 0 ? ~0UL : 0UL) + (lo < w ? 1UL : 0UL);
        }
    }
    uint lid = get_local_id(0);
    low[lid] = lo;
    high[lid] = hi;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint stride = WG / 2; stride > 0; stride >>= 1) {
        if (lid < stride) {
            ulong a = low[lid], sum = a + low[lid + stride];
            high[lid] += high[lid + stride] + (sum < a ? 1UL : 0UL);
            low[lid] = sum;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        block_sums[2 * get_group_id(0)] = low[0];
        block_sums[2 * get_group_id(0) + 1] = high[0];
    }
}

// The weights of the forest's edges, in its order (the host sums them as it does its
// own forests, so totals match bit for bit): `wide` selects 8-byte weights.
__kernel void rs_forest_weights(__global const uint* weights, __global const ulong* ids,
                                uint count, uint wide, __global uint* out) {
    uint i = get_global_id(0);
    if (i >= count)
        return;
    uint e = (uint)ids[i];
    if (wide) {
        out[2 * i] = weights[2 * e];
        out[2 * i + 1] = weights[2 * e + 1];
    } else {
        out[i] = weights[e];
    }
}

// A graph solved in partitions: the whole list's positions of the forest a partition
// call found (`ids`: its positions in the call, whose first `carried` edges are the
// forest carried in, at the whole list's positions `before`; the rest are the list's
// edges from `start` on, or, where `listed`, the edges at positions `own`: the
// survivors of a filter).
__kernel void rs_carry_positions(__global const ulong* ids, uint count, uint carried,
                                 ulong start, __global const ulong* before, uint listed,
                                 __global const ulong* own, __global ulong* after) {
    uint i = get_global_id(0);
    if (i >= count)
        return;
    ulong p = ids[i];
    after[i] = p < carried ? before[p] : listed ? own[p - carried] : start + (p - carried);
}

// ---- CSR graphs in device memory: checked there, their u < v entries made an edge list ----
// `status` words (CSR_* in src/tier/gpu/msf/csr.rs), each 0xFFFFFFFF until something
// is found, then the least entry found: 0 offsets (check_offsets writes it), 1 a target
// out of range, 2 a row not sorted by target, 3 an entry without its reverse, 4 a
// self-loop with a NaN weight (it becomes no edge, but the host refuses it too). The
// kernels after check_offsets return at once when it found something, so that no
// offset beyond the targets is followed.
#define CSR_OFFSETS 0
#define CSR_RANGE 1
#define CSR_UNSORTED 2
#define CSR_UNPAIRED 3
#define CSR_LOOP_NAN 4
#define CSR_NONE 0xFFFFFFFFu

// The row of entry p < offsets[vertices]: the x with offsets[x] <= p < offsets[x + 1].
inline uint csr_row(__global const ulong* offsets, uint vertices, ulong p) {
    uint lo = 0, hi = vertices;  // offsets[lo] <= p < offsets[hi]
    while (hi - lo > 1) {
        uint mid = lo + (hi - lo) / 2;
        if (offsets[mid] <= p)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

// Per entry: its row into `rows`, its target in range, its row's order, a NaN weight
// (`kind` 2: floats) on a self-loop, and a 1 in `forward` where it is an edge (source <
// target; self-loops and reverse entries are not).
__kernel void csr_entries(__global const ulong* offsets, uint vertices,
                          __global const uint* targets, uint entries,
                          __global const Key* weights, uint kind, __global uint* rows,
                          __global uint* forward, __global uint* status) {
    uint p = get_global_id(0);
    if (p >= entries || status[CSR_OFFSETS] != CSR_NONE)
        return;
    uint s = csr_row(offsets, vertices, p), t = targets[p];
    rows[p] = s;
    forward[p] = s < t && t < vertices;
    if (t >= vertices)
        atomic_min(&status[CSR_RANGE], p);
    if (p + 1 < offsets[s + 1] && targets[p + 1] < t)
        atomic_min(&status[CSR_UNSORTED], p);
#if KEYS
    Key magnitude = ~((Key)1 << (sizeof(Key) * 8 - 1));
    Key infinity = sizeof(Key) == 8 ? (Key)0x7FF0000000000000ul : (Key)0x7F800000u;
    if (s == t && kind == 2 && (weights[p] & magnitude) > infinity)
        atomic_min(&status[CSR_LOOP_NAN], p);
#endif
}

// A weight as the symmetry check compares it: its bits, but (floats, `kind` 2) one
// zero, as the host's keys make -0 and +0 one weight.
inline Key csr_weight(__global const Key* weights, ulong p, uint kind) {
#if KEYS
    Key w = weights[p];
    Key magnitude = ~((Key)1 << (sizeof(Key) * 8 - 1));
    return kind == 2 && (w & magnitude) == 0 ? 0 : w;
#else
    return 0;
#endif
}

// Entries of `row` with target `target` (and weight `w`): from the first such entry
// found by bisection, the rows being sorted by target.
inline uint csr_count_sorted(__global const ulong* offsets, __global const uint* targets,
                             __global const Key* weights, uint kind, uint row, uint target,
                             Key w) {
    ulong q = offsets[row], end = offsets[row + 1], hi = end;
    while (q < hi) {
        ulong mid = q + (hi - q) / 2;
        if (targets[mid] < target)
            q = mid + 1;
        else
            hi = mid;
    }
    uint count = 0;
    for (; q < end && targets[q] == target; q++)
        count += csr_weight(weights, q, kind) == w;
    return count;
}

// Rows not sorted by target: the entries (but self-loops) in a hash table of
// 2^k slots (`mask` = 2^k - 1, at most half full) by key (row, target, weight),
// placed by linear probing; a slot holds an entry's position, CSR_NONE when empty.
inline ulong csr_slot(uint row, uint target, Key w, ulong mask) {
    ulong h = (((ulong)row << 32) | target) * 0x9E3779B97F4A7C15ul;
    h ^= ((ulong)w + (h >> 31)) * 0xC2B2AE3D27D4EB4Ful;
    return (h ^ (h >> 29)) & mask;
}

__kernel void csr_table(__global const uint* rows, __global const uint* targets, uint entries,
                        uint vertices, __global const Key* weights, uint kind,
                        __global uint* table, ulong mask) {
    uint p = get_global_id(0);
    if (p >= entries)
        return;
    uint s = rows[p], t = targets[p];
    if (s == t || t >= vertices)
        return;
    ulong slot = csr_slot(s, t, csr_weight(weights, p, kind), mask);
    while (atomic_cmpxchg(&table[slot], CSR_NONE, p) != CSR_NONE)
        slot = (slot + 1) & mask;
}

// Entries with key (row, target, w) in the table.
inline uint csr_count_hashed(__global const uint* rows, __global const uint* targets,
                             __global const Key* weights, uint kind,
                             __global const uint* table, ulong mask, uint row, uint target,
                             Key w) {
    uint count = 0;
    for (ulong slot = csr_slot(row, target, w, mask);; slot = (slot + 1) & mask) {
        uint q = table[slot];
        if (q == CSR_NONE)
            return count;
        count += rows[q] == row && targets[q] == target && csr_weight(weights, q, kind) == w;
    }
}

// Symmetry: entry p (s -> t, weight w; not a self-loop) has as many twins s -> t of
// weight w as reverses t -> s of weight w. For every entry that holds exactly when the
// forward and reverse entries are one multiset, as the host checks. Sorted rows are
// searched by bisection; otherwise (`mask` != 0) the table of csr_table is probed.
__kernel void csr_symmetric(__global const ulong* offsets, __global const uint* rows,
                            __global const uint* targets, uint entries, uint vertices,
                            __global const Key* weights, uint kind,
                            __global const uint* table, ulong mask,
                            __global uint* status) {
    uint p = get_global_id(0);
    if (p >= entries || status[CSR_OFFSETS] != CSR_NONE)
        return;
    uint s = rows[p], t = targets[p];
    if (s == t || t >= vertices)
        return;
    Key w = csr_weight(weights, p, kind);
    uint twins, reverses;
    if (mask) {
        twins = csr_count_hashed(rows, targets, weights, kind, table, mask, s, t, w);
        reverses = csr_count_hashed(rows, targets, weights, kind, table, mask, t, s, w);
    } else {
        twins = csr_count_sorted(offsets, targets, weights, kind, s, t, w);
        reverses = csr_count_sorted(offsets, targets, weights, kind, t, s, w);
    }
    if (twins != reverses)
        atomic_min(&status[CSR_UNPAIRED], p);
}

// The edge list: entry p with forward[p] becomes edge at[p] (the exclusive scan of
// forward), ends (row, target), its weight's `weight_words` 32-bit words (0: none) and
// its id p.
__kernel void csr_edges(__global const uint* rows, __global const uint* targets,
                        uint entries, __global const uint* forward, __global const uint* at,
                        __global const uint* weights, uint weight_words, __global uint* eu,
                        __global uint* ev, __global uint* ew, __global ulong* ids) {
    uint p = get_global_id(0);
    if (p >= entries || !forward[p])
        return;
    uint e = at[p];
    eu[e] = rows[p];
    ev[e] = targets[p];
    ids[e] = p;
    for (uint k = 0; k < weight_words; k++)
        ew[(ulong)weight_words * e + k] = weights[(ulong)weight_words * p + k];
}

// ---- component labels of a forest in device memory ----
// Per forest edge (id `ids[i]`): the roots of its ends, the higher linked under the
// lower by compare-and-swap, so that every tree's root stays its smallest vertex;
// labels_flatten then makes each vertex's label that root (the host's labels). The ends
// are u[e] and v[e] of an edge list, or, with `csr`, entry e's row (by bisection of
// `offsets`) and target (`v` holds the targets). An id not below `edges`, or an end
// out of range, is refused: `bad` keeps the least such i.
__kernel void labels_link(__global const ulong* ids, uint count, ulong edges,
                          __global const uint* u, __global const uint* v,
                          __global const ulong* offsets, uint csr, uint vertices,
                          __global volatile uint* parent, __global uint* bad) {
    uint i = get_global_id(0);
    if (i >= count)
        return;
    ulong e = ids[i];
    if (e >= edges) {
        atomic_min(bad, i);
        return;
    }
    uint a = csr ? csr_row(offsets, vertices, e) : u[e], b = v[e];
    if (a >= vertices || b >= vertices) {
        atomic_min(bad, i);
        return;
    }
    link_roots(parent, a, b);
}

// Every vertex's label becomes its root, exactly (uf_flatten's plain path-halving
// stores may leave a vertex at a stale ancestor when another work-item has already
// written its root, which later phases of the solver tolerate but labels cannot). A
// parent is always below its child (links hang the higher root under the lower, and
// halving skips to a grandparent), so atomic_min never moves a vertex off a path to
// its root and the last value each vertex holds is the root itself.
inline void flatten_to_root(__global volatile uint* parent, uint v) {
    uint x = v;
    for (;;) {
        uint p = parent[x];
        if (p == x)
            break;
        uint gp = parent[p];
        if (gp != p)
            atomic_min(&parent[x], gp);
        x = gp;
    }
    atomic_min(&parent[v], x);
}

__kernel void labels_flatten(__global volatile uint* parent, uint vertices) {
    uint v = get_global_id(0);
    if (v < vertices)
        flatten_to_root(parent, v);
}

// ---- a graph solved in partitions: later edges filtered against the forest so far ----
// Every edge of the forest carried so far precedes, in the list, the edges still to
// come, so a forest edge whose key is at most an edge's key is lighter than it. The host
// picks ascending key thresholds from a sample of the forest's keys; labels j
// (`vertices` words from j * vertices) are the components of the forest's edges whose
// key is at most thresholds[j]. An edge whose key is at least thresholds[j] (the
// largest such j) and whose ends share labels j closes a cycle of lighter edges: no
// minimum spanning forest of the rest of the list holds it.

// Edge e's key as a ulong (0 unweighted; `kind` and `descending` as for narrow_key);
// *nan is set where the weight is a NaN.
inline ulong filter_key(__global const Key* weights, ulong e, uint kind, uint descending,
                        bool* nan) {
#if KEYS == 0
    *nan = false;
    return 0;
#elif KEYS == 2
    ulong bits = weights[e];
    *nan = kind == 2 && (bits & 0x7FFFFFFFFFFFFFFFul) > 0x7FF0000000000000ul;
    return wide_key(bits, kind, descending);
#else
    uint bits = weights[e];
    *nan = kind == 2 && (bits & 0x7FFFFFFFu) > 0x7F800000u;
    return narrow_key(bits, kind, descending);
#endif
}

// The labels of threshold `level` (`vertices` words from level * vertices) start as
// those of the threshold below, already flattened (every word its component's root), or
// at level 0 as each vertex its own component. The levels are built one after another:
// each forest edge is linked once, at the lowest threshold its key does not exceed.
__kernel void sf_labels_init(__global uint* labels, uint vertices, uint level) {
    uint g = get_global_id(0);
    if (g < vertices)
        labels[(ulong)level * vertices + g] =
            level == 0 ? g : labels[(ulong)(level - 1) * vertices + g];
}

// Forest edge i (of `count`, the first edges of fu, fv, fw) joins its ends in the
// labels of threshold `level` (of `levels`) if that is the lowest threshold its key does
// not exceed (an edge above every threshold is in none).
__kernel void sf_labels_link(__global const uint* fu, __global const uint* fv,
                             __global const Key* fw, uint count, uint kind, uint descending,
                             __global const ulong* thresholds, uint levels, uint level,
                             uint vertices, __global volatile uint* labels) {
    uint i = get_global_id(0);
    if (i >= count)
        return;
    bool nan;
    ulong key = filter_key(fw, i, kind, descending, &nan);
    uint lowest = 0;
    while (lowest < levels && thresholds[lowest] < key)
        lowest++;
    if (lowest == level)
        link_roots(labels + (ulong)level * vertices, fu[i], fv[i]);
}

// Every label of threshold `level` becomes its component's root (labels_flatten there).
__kernel void sf_labels_flatten(__global volatile uint* labels, uint vertices, uint level) {
    uint g = get_global_id(0);
    if (g < vertices)
        flatten_to_root(labels + (ulong)level * vertices, g);
}

// flags[i] = 1 where edge first + i of eu, ev, weights (i < len) may belong to the
// forest, else 0, up to the next multiple of 16 (rs_count_chosen reads 16 at a time).
// An edge with an end out of range or a NaN weight is kept, so that the solve that
// takes it names it; a self-loop is dropped.
__kernel void sf_keep(__global const uint* eu, __global const uint* ev,
                      __global const Key* weights, ulong first, uint len, uint vertices,
                      uint kind, uint descending, __global const ulong* thresholds,
                      uint levels, __global const uint* labels, __global uchar* flags) {
    uint i = get_global_id(0);
    if ((ulong)i >= ((ulong)len + 15) / 16 * 16)
        return;
    uchar keep = 0;
    if (i < len) {
        ulong e = first + i;
        uint a = eu[e], b = ev[e];
        bool nan;
        ulong key = filter_key(weights, e, kind, descending, &nan);
        keep = 1;
        if (a < vertices && b < vertices && !nan) {
            uint j = levels;
            while (j > 0 && thresholds[j - 1] > key)
                j--;
            if (a == b) {
                keep = 0;
            } else if (j > 0) {
                __global const uint* l = labels + (ulong)(j - 1) * vertices;
                keep = l[a] != l[b];
            }
        }
    }
    flags[i] = keep;
}

// The kept edges, first + ids[k] for k < count (ascending), appended to the survivors'
// arrays from `at`: their ends and `weight_words` 32-bit words of weight each; their
// positions in the whole list (`start` + ids[k]) go to `positions` from `listed_at`.
__kernel void sf_gather(__global const uint* eu, __global const uint* ev,
                        __global const uint* weights, ulong first, __global const ulong* ids,
                        uint count, ulong start, uint weight_words, uint at,
                        __global uint* su, __global uint* sv, __global uint* sw,
                        uint listed_at, __global ulong* positions) {
    uint k = get_global_id(0);
    if (k >= count)
        return;
    ulong e = first + ids[k];
    ulong s = (ulong)at + k;
    su[s] = eu[e];
    sv[s] = ev[e];
    for (uint w = 0; w < weight_words; w++)
        sw[weight_words * s + w] = weights[weight_words * e + w];
    positions[listed_at + k] = start + ids[k];
}
