//! Minimum spanning forests on a GPU tier (kernels in `kernels/opencl/msf.cl`, built for
//! CUDA through `kernels/cuda/msf.cu`).
//!
//! - `auto`: edge-centric Borůvka on a worklist of edges, with union-find hooking by
//!   compare-and-swap, over the edges in phases of rising weight (light edges first,
//!   see `light_thresholds`): each round finds every tree's lightest edge by atomic minima,
//!   hooks the trees, and compacts the worklist to the edges still between trees. The
//!   host reads the worklist's length back behind the work, a few rounds late, so the
//!   device does not wait for it.
//! - `boruvka`: Vineet et al.'s round on the device: entries grouped by supervertex,
//!   the lightest edge of each by a segmented min-scan, successors, 2-cycle removal,
//!   pointer doubling, renumbering by the scan primitive, contraction and regrouping by
//!   a counting sort whose offsets come from the scan primitive.

use std::borrow::Cow;

pub(crate) mod csr;
mod filter;
pub(crate) mod labels;
pub(crate) mod partitions;
pub(crate) mod resident;
mod ring;
pub(crate) mod split;

use super::{Arg, Device, DeviceBuffer, Gpu, ProgramKind};
use crate::types::{Algorithm, ScanKind, ScanOp};
use crate::{alloc, Error, Result, Status};

/// The edges an MSF device kernel sees: endpoints and weight keys by position.
pub(crate) struct DeviceProblem<'a> {
    pub num_vertices: usize,
    pub u: &'a [u32],
    pub v: &'a [u32],
    pub keys: Option<DeviceKeys<'a>>,
    /// Builds Prim's CSR of both directions of every edge (offsets, targets, edge
    /// positions) from this problem: the host code that does it belongs to the
    /// algorithms' layer, which hands it down.
    pub adjacency: fn(&DeviceProblem<'_>) -> Result<DeviceCsr>,
}

/// A CSR for a device: offsets, targets and the edge position of each entry.
pub(crate) type DeviceCsr = (Vec<u32>, Vec<u32>, Vec<u32>);

/// Weight keys by edge position, for devices that order edges by (key, position)
/// without building packed priorities: 32-bit where every key fits.
/// The caller's own weights where they are their keys (unsigned integers, ascending
/// order), so that they go to the device without a copy on the host.
pub(crate) enum DeviceKeys<'a> {
    Narrow(Cow<'a, [u32]>),
    Wide(Cow<'a, [u64]>),
}

/// Where a device MSF spent its time (host clock around finished device work). A call
/// on host arrays waits for its uploads, checks and keys before the algorithm and for
/// the algorithm after it, so that the laps split there. A call on device arrays waits
/// only where the algorithm must learn a round's length, and at its end: its laps are
/// the host's (compute: queueing the algorithm, with those waits; download: the rest of
/// the device's work and the forest's count), and only their sum is the call's time.
#[derive(Debug, Clone, Copy, Default)]
pub struct DeviceTimings {
    /// Host arrays to device buffers, with the device's checks and keys. In partitions
    /// (a graph over the device memory it may use), the first partition's upload: the
    /// later chunks go up while the device filters and solves, and the filter's waits
    /// for them count as compute.
    pub upload_ms: f64,
    /// The algorithm's kernels and per-round reads of counters.
    pub compute_ms: f64,
    /// The same span by the device's own clock (CUDA events from the first command
    /// to the last), where the tier keeps one.
    pub compute_device_ms: Option<f64>,
    /// The forest back to the host.
    pub download_ms: f64,
    /// The most device memory the call's buffers held at once, in bytes.
    pub peak_device_bytes: u64,
}

impl DeviceTimings {
    /// Adds a call's timings to these (the peak is the larger of the two).
    pub(crate) fn add(&mut self, part: &DeviceTimings) {
        self.upload_ms += part.upload_ms;
        self.compute_ms += part.compute_ms;
        self.download_ms += part.download_ms;
        self.compute_device_ms = match (self.compute_device_ms, part.compute_device_ms) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        self.peak_device_bytes = self.peak_device_bytes.max(part.peak_device_bytes);
    }
}

/// The compile-time shape of the MSF program: key width and 64-bit atomics.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct KernelConfig {
    /// 0 unweighted, 1 u32 keys, 2 u64 keys.
    keys: u8,
    atom64: bool,
}

impl KernelConfig {
    pub(crate) fn defines(&self) -> String {
        // types.cl wants an element type and operator; the MSF kernels use neither.
        format!(
            "-DDTYPE=1 -DSCAN_OP=0 -DKEYS={} -DATOM64={}",
            self.keys, self.atom64 as u8
        )
    }

    /// The CUDA bundle's module for this configuration (CUDA always has 64-bit atomics).
    pub(crate) fn cuda_module(&self) -> Result<String> {
        if !self.atom64 {
            return Err(Error::internal(
                "the CUDA MSF kernels always use 64-bit atomics",
            ));
        }
        Ok(format!("msf_k{}", self.keys))
    }

    /// Atomic-min passes needed to find the lightest edge (one per key word).
    fn passes(&self) -> u32 {
        match (self.keys, self.atom64) {
            (0, _) | (1, true) => 1,
            (1, false) | (2, true) => 2,
            _ => 3,
        }
    }
}

const NO_EDGE: u32 = u32::MAX;

/// Per-vertex minima buffers (see BEST_PARAMS in msf.cl); unused ones are 1 element.
struct Best<D: Device> {
    wide: DeviceBuffer<D, u64>,
    hi: DeviceBuffer<D, u32>,
    lo: DeviceBuffer<D, u32>,
    pos: DeviceBuffer<D, u32>,
}

impl<D: Device> Best<D> {
    fn new(tier: &Gpu<D>, config: KernelConfig, n: usize) -> Result<Self> {
        let wide_len = if config.atom64 && config.keys > 0 {
            n
        } else {
            0
        };
        let hi_len = if !config.atom64 && config.keys > 0 {
            n
        } else {
            0
        };
        let lo_len = if !config.atom64 && config.keys == 2 {
            n
        } else {
            0
        };
        let pos_len = if config.keys == 1 && config.atom64 {
            0
        } else {
            n
        };
        Ok(Best {
            wide: tier.alloc(wide_len)?,
            hi: tier.alloc(hi_len)?,
            lo: tier.alloc(lo_len)?,
            pos: tier.alloc(pos_len)?,
        })
    }

    /// Resets the first `n` vertices of the buffers in use to "nothing offered"
    /// (unused ones are placeholders of one element).
    fn reset(&mut self, tier: &Gpu<D>, n: usize) -> Result<()> {
        let in_use = |len: usize| if n > 1 && len == 1 { 0 } else { n.min(len) };
        for buffer in [&mut self.hi, &mut self.lo, &mut self.pos] {
            let len = in_use(buffer.len());
            tier.fill(buffer, NO_EDGE, len)?;
        }
        let len = in_use(self.wide.len());
        tier.fill(&mut self.wide, u64::MAX, len)
    }

    fn args(&self) -> [Arg<D>; 4] {
        [
            self.wide.arg(),
            self.hi.arg(),
            self.lo.arg(),
            self.pos.arg(),
        ]
    }
}

/// Runs `algorithm` on the device; returns, per edge position, whether it is in the
/// forest (non-zero) or not, and where the time went. Kruskal never reaches here (it is the host
/// reference).
pub(crate) fn solve<D: Device>(
    tier: &Gpu<D>,
    problem: &DeviceProblem<'_>,
    algorithm: Algorithm,
) -> Result<(Vec<u8>, DeviceTimings)> {
    let mut timings = DeviceTimings::default();
    let mut watch = Stopwatch::start(tier);
    let m = problem.u.len();
    let n = problem.num_vertices;
    check_edge_count(algorithm, m)?;
    if m == 0 || n == 0 {
        return Ok((alloc::zeroed(m, "the chosen-edge flags")?, timings));
    }
    let (keys_kind, key_bytes) = match &problem.keys {
        None => (0, 0),
        Some(DeviceKeys::Narrow(_)) => (1, 4),
        Some(DeviceKeys::Wide(_)) => (2, 8),
    };
    let config = KernelConfig {
        keys: keys_kind,
        atom64: tier.settings.int64_atomics,
    };
    check_capacity(tier, algorithm, n, m, key_bytes, 0)?;
    let program = tier.program(ProgramKind::Msf(config))?;
    let eu = tier.upload(problem.u)?;
    let ev = tier.upload(problem.v)?;
    let keys = match &problem.keys {
        None => KeyBuffer::None(tier.alloc::<u32>(0)?),
        Some(DeviceKeys::Narrow(k)) => KeyBuffer::Narrow(tier.upload(k.as_ref())?),
        Some(DeviceKeys::Wide(k)) => KeyBuffer::Wide(tier.upload(k.as_ref())?),
    };
    let mut in_forest = tier.alloc::<u8>(m)?;
    tier.fill(&mut in_forest, 0, m)?;
    tier.finish()?;
    timings.upload_ms = watch.lap();
    let run = Run {
        tier,
        program: &program,
        config,
        eu: &eu,
        ev: &ev,
        keys: keys.arg(),
        in_forest: &in_forest,
    };
    let thresholds = light_thresholds(m, n, super::knobs().filter_from, |stride| {
        let key = |i: usize| match &problem.keys {
            Some(DeviceKeys::Narrow(k)) => Some(k[i] as u64),
            Some(DeviceKeys::Wide(k)) => Some(k[i]),
            None => None,
        };
        Ok((0..SAMPLE).map(|j| key(j * stride)).collect())
    })?;
    let ((), device_ms) =
        tier.time(|| run.algorithm(n, m, algorithm, &thresholds, Some(problem)))?;
    crate::profile::span("gpu msf: wait for the device", || tier.finish())?;
    timings.compute_device_ms = device_ms;
    timings.compute_ms = watch.lap();
    let mut chosen: Vec<u8> = alloc::zeroed(m, "the forest's edge flags")?;
    tier.read(&in_forest, &mut chosen)?;
    timings.download_ms = watch.lap();
    timings.peak_device_bytes = watch.peak_bytes(tier);
    Ok((chosen, timings))
}

/// Host-clock laps of a device MSF (upload, compute, download) and the device memory
/// its buffers held at most, counted from its start.
struct Stopwatch {
    clock: std::time::Instant,
    held_before: u64,
}

impl Stopwatch {
    fn start<D: Device>(tier: &Gpu<D>) -> Self {
        Stopwatch {
            held_before: tier.meter.reset_peak(),
            clock: std::time::Instant::now(),
        }
    }

    /// Milliseconds since the last lap (or the start).
    fn lap(&mut self) -> f64 {
        let ms = self.clock.elapsed().as_secs_f64() * 1e3;
        self.clock = std::time::Instant::now();
        ms
    }

    fn peak_bytes<D: Device>(&self, tier: &Gpu<D>) -> u64 {
        tier.meter.peak().saturating_sub(self.held_before)
    }
}

/// Refuses edge counts the device kernels cannot index: positions and vertex ids are
/// 32-bit on the device, NO_EDGE is reserved, and Borůvka keeps two entries per edge.
fn check_edge_count(algorithm: Algorithm, m: usize) -> Result<()> {
    let limit = if matches!(algorithm, Algorithm::Boruvka | Algorithm::Prim) {
        (u32::MAX / 2) as usize
    } else {
        u32::MAX as usize
    };
    if m >= limit {
        return Err(Error::invalid_argument(format!(
            "{algorithm} on a GPU tier handles fewer than {limit} edges (this graph has {m}); use the CPU tier"
        )));
    }
    Ok(())
}

/// Upper keys of the light phases (ascending, distinct, below u64::MAX): the keys
/// below which about n/2, n and 2n edges lie (a sorted sample of the m keys), when
/// filtering pays (from `filter_from` edges per 100 vertices). A
/// forest needs fewer than n edges, so most heavy edges of a dense enough graph never
/// enter a round; and the phases stay small, so few of their rounds go to the many
/// parallel edges left between the last big trees of a phase. (tools/
/// simulate_filter_phases.py counts it: on a random graph of 2^20 vertices and 2^23
/// edges and an R-MAT graph of scale 20, these three phases take 0.26 and 0.30 of the
/// edge-rounds of a single light phase up to 2n.)
fn light_thresholds(
    m: usize,
    n: usize,
    filter_from: usize,
    sample: impl FnOnce(usize) -> Result<Option<Vec<u64>>>,
) -> Result<Vec<u64>> {
    let Some(stride) = sample_stride(m, n, filter_from) else {
        return Ok(Vec::new());
    };
    Ok(sample(stride)?.map_or_else(Vec::new, |sample| thresholds_of(sample, m, n)))
}

/// The stride of [`light_thresholds`]' sample where filtering pays, else None.
fn sample_stride(m: usize, n: usize, filter_from: usize) -> Option<usize> {
    (m * 100 >= filter_from * n && m >= 4 * SAMPLE).then_some(m / SAMPLE)
}

/// [`light_thresholds`] from the keys sampled at the stride [`sample_stride`] gave.
fn thresholds_of(mut sample: Vec<u64>, m: usize, n: usize) -> Vec<u64> {
    /// Edges below each threshold, in halves of n.
    const HALF_N_MULTIPLES: [usize; 3] = [1, 2, 4];
    sample.sort_unstable();
    let mut thresholds: Vec<u64> = HALF_N_MULTIPLES
        .iter()
        .map(|&halves| sample[(SAMPLE * halves * n / (2 * m)).min(SAMPLE - 1)])
        // Keys at u64::MAX leave no heavier range.
        .filter(|&key| key < u64::MAX)
        .collect();
    thresholds.dedup();
    thresholds
}

/// Edges per 100 vertices from which `auto` runs light phases (`GPUMST_GPU_FILTER_FROM`).
/// Partitions of a graph over the device's memory hold about 3.4 edges per vertex (a
/// forest carried, room for the vertices' arrays): from 4 edges per vertex, as before,
/// they got none. H200, R-MAT 26 capped at 14 GB, compute (two calls each): 390-395 ms
/// from 400, 188-191 from 250, 186-187 from 150; random 2^22 / 2^25 capped at 900 MB
/// 15.5 -> 8.6 ms. The grid 2048² (2 edges per vertex, uncapped) gains nothing from
/// them: 1.7 ms from 400 and 250, 2.1 from 150.
pub(super) const FILTER_FROM: usize = 250;

/// The same for the calls of a graph solved in partitions: a partition leaves room for
/// the largest forest that may be carried into the next, so it may hold fewer than 2.5
/// edges per vertex (R-MAT 26 capped at 14 GB: 2.46), and its carried forest and own
/// edges still gain from the light phases.
pub(super) const FILTER_FROM_IN_PARTITIONS: usize = 100;

/// Keys sampled for `light_thresholds`: the key at every `stride`-th position, SAMPLE
/// of them (the sampler gets the stride and returns None for a graph without keys).
const SAMPLE: usize = 4096;

/// Device bytes per edge and per vertex of `algorithm`'s working set, keys of
/// `key_bytes` included.
fn working_set(algorithm: Algorithm, key_bytes: usize) -> (u64, u64) {
    let per_edge = 4
        + 4
        + key_bytes
        + 1
        + if algorithm == Algorithm::Boruvka {
            // Two lists of two 12-byte entries; value, flag and rank per entry.
            2 * 2 * 12 + 2 * (8 + 1 + 4)
        } else {
            // Two worklists of position, two roots and (auto) the key.
            2 * (3 * 4 + key_bytes)
        };
    let per_vertex = 4
        + 8
        + 4
        + 4
        + 4
        + if algorithm == Algorithm::Boruvka {
            // Two offsets, cursor, base, chosen edge, (wide keys) minimum key.
            4 * 5 + 8
        } else if algorithm == Algorithm::Auto {
            // The next round's minima when a phase's rounds run in one launch (CUDA;
            // counted for every tier).
            8 + 4
        } else {
            0
        };
    (per_edge as u64, per_vertex as u64)
}

/// Bytes per edge of the working set's largest buffer (Borůvka: a u64 value per entry,
/// two entries per edge; the others: wide keys or weights), for partitions that stay
/// under the device's largest allocation.
fn largest_buffer_per_edge(algorithm: Algorithm) -> u64 {
    if algorithm == Algorithm::Boruvka {
        16
    } else {
        8
    }
}

/// Refuses graphs whose working set cannot fit the device, before allocating
/// (`extra`: bytes of the call's own beyond the algorithm's working set).
fn check_capacity<D: Device>(
    tier: &Gpu<D>,
    algorithm: Algorithm,
    n: usize,
    m: usize,
    key_bytes: usize,
    extra: u64,
) -> Result<()> {
    let (per_edge, per_vertex) = working_set(algorithm, key_bytes);
    let needed = (m as u64) * per_edge + (n as u64) * per_vertex + extra;
    if needed > tier.settings.global_memory {
        return Err(Error::new(
            Status::OutOfMemory,
            format!(
                "this graph ({n} vertices, {m} edges) needs about {needed} bytes of device memory for {algorithm}; {} has {}",
                tier.settings.name, tier.settings.global_memory
            ),
        ));
    }
    Ok(())
}

/// Slots of the worklist length on the device (see `Run::edge_centric`).
const COUNT_SLOTS: usize = 3;

/// Words after the count slots: the barrier of the rounds in one launch (`ec_rounds`),
/// zero between launches and zeroed with the slots.
const BARRIER_WORDS: usize = 2;

/// Rounds the host may run ahead of the worklist lengths it has read back, by default
/// (`GPUMST_GPU_LOOKAHEAD`; 0 waits for every round's length). On the H200 one round
/// ahead was fastest: NY 0.41 / 0.33 / 0.34 / 0.35 ms and random 2^22 / 2^25
/// 3.88 / 3.90 / 4.11 / 4.30 ms with 0 / 1 / 2 / 4 (`scripts/device.sh lookahead`).
pub(super) const LOOKAHEAD: usize = 1;

/// Worklist length from which the rest of an `auto` phase runs in one launch of
/// resident work-groups (`ec_rounds` in msf.cl) on a tier that can launch them (CUDA),
/// instead of launches per round (`GPUMST_GPU_RESIDENT_BELOW`; 0: never).
pub(super) const RESIDENT_BELOW: usize = 1 << 20;

/// Work-items per group of that launch (`GPUMST_GPU_RESIDENT_GROUP`).
pub(super) const RESIDENT_GROUP: usize = 1024;

/// Its groups per compute unit, at most what fits (`GPUMST_GPU_RESIDENT_GROUPS_PER_UNIT`;
/// 0: as many as fit).
pub(super) const RESIDENT_GROUPS_PER_UNIT: usize = 1;

/// A worklist of edge-centric Borůvka: per entry the edge's position, the roots of its
/// ends at the last compaction, and its key (see ec_compact in msf.cl).
struct Worklist<D: Device> {
    edge: DeviceBuffer<D, u32>,
    root_u: DeviceBuffer<D, u32>,
    root_v: DeviceBuffer<D, u32>,
    key: KeyBuffer<D>,
}

impl<D: Device> Worklist<D> {
    fn new(tier: &Gpu<D>, config: KernelConfig, m: usize) -> Result<Self> {
        Ok(Worklist {
            edge: tier.alloc(m)?,
            root_u: tier.alloc(m)?,
            root_v: tier.alloc(m)?,
            key: KeyBuffer::new(tier, config, m)?,
        })
    }

    fn args(&self) -> [Arg<D>; 4] {
        [
            self.edge.arg(),
            self.root_u.arg(),
            self.root_v.arg(),
            self.key.arg(),
        ]
    }
}

/// What the phases of edge-centric Borůvka share: two worklists, the length slots and
/// the per-tree minima.
struct Phase<D: Device> {
    vertices: usize,
    worklist: Worklist<D>,
    next: Worklist<D>,
    counts: DeviceBuffer<D, u32>,
    best: Best<D>,
    /// What the rounds in one launch need beside, made on first use (None: not yet
    /// asked; Some(None): the tier cannot launch them).
    together: Option<Option<Together<D>>>,
}

/// The rounds of a phase in one launch (`ec_rounds`): its groups and the second set of
/// minima (the next round's).
struct Together<D: Device> {
    groups: usize,
    group: usize,
    next_best: Best<D>,
}

impl<D: Device> Phase<D> {
    fn new(tier: &Gpu<D>, config: KernelConfig, n: usize, m: usize) -> Result<Self> {
        Ok(Phase {
            vertices: n,
            worklist: Worklist::new(tier, config, m)?,
            next: Worklist::new(tier, config, m)?,
            counts: tier.alloc(COUNT_SLOTS + BARRIER_WORDS)?,
            best: Best::new(tier, config, n)?,
            together: None,
        })
    }
}

enum KeyBuffer<D: Device> {
    None(DeviceBuffer<D, u32>),
    Narrow(DeviceBuffer<D, u32>),
    Wide(DeviceBuffer<D, u64>),
}

impl<D: Device> KeyBuffer<D> {
    /// Room for `len` keys of the configuration's width (none when unweighted).
    fn new(tier: &Gpu<D>, config: KernelConfig, len: usize) -> Result<Self> {
        Ok(match config.keys {
            0 => KeyBuffer::None(tier.alloc(0)?),
            1 => KeyBuffer::Narrow(tier.alloc(len)?),
            _ => KeyBuffer::Wide(tier.alloc(len)?),
        })
    }

    fn arg(&self) -> Arg<D> {
        match self {
            KeyBuffer::None(b) | KeyBuffer::Narrow(b) => b.arg(),
            KeyBuffer::Wide(b) => b.arg(),
        }
    }
}

/// What every round's launches share.
struct Run<'a, D: Device> {
    tier: &'a Gpu<D>,
    program: &'a D::Program,
    config: KernelConfig,
    eu: &'a DeviceBuffer<D, u32>,
    ev: &'a DeviceBuffer<D, u32>,
    keys: Arg<D>,
    in_forest: &'a DeviceBuffer<D, u8>,
}

impl<D: Device> Run<'_, D> {
    /// Queues `algorithm` to the end (the host waits only where it must learn a round's
    /// worklist length; the caller waits for the rest, or queues behind it).
    /// `thresholds` are the light phases' (see `light_thresholds`); Prim builds its
    /// adjacency from `problem` on the host.
    fn algorithm(
        &self,
        n: usize,
        m: usize,
        algorithm: Algorithm,
        thresholds: &[u64],
        problem: Option<&DeviceProblem<'_>>,
    ) -> Result<()> {
        let tier = self.tier;
        match algorithm {
            Algorithm::Boruvka => self.vineet_boruvka(n, m)?,
            Algorithm::Prim => self.prim(problem.ok_or_else(|| {
                Error::internal("prim on a device needs the graph's host arrays")
            })?)?,
            // Only strut and auto take minima by atomics (Best); boruvka scans, prim reduces.
            Algorithm::Strut => self.strut(n, m, &mut Best::new(tier, self.config, n)?)?,
            _ => {
                // Light edges first (by the cut property, the forest of the light edges
                // is part of the answer), in phases of rising keys, then the heavy
                // edges still between trees.
                let (parent, mut phase) = crate::profile::span("gpu msf: buffers", || {
                    let parent = tier.alloc::<u32>(n)?;
                    self.iota(&parent, n)?;
                    Ok::<_, Error>((parent, Phase::new(tier, self.config, n, m)?))
                })?;
                let mut lowest = 0;
                for &highest in thresholds {
                    crate::profile::span("gpu msf: light phases", || {
                        self.edge_centric(&mut phase, &parent, lowest, highest)
                    })?;
                    // The next phase's first round then finds every root in one step.
                    self.launch("uf_flatten", n, &[parent.arg(), Arg::U32(n as u32)])?;
                    lowest = highest + 1;
                }
                crate::profile::span("gpu msf: last phase", || {
                    self.edge_centric(&mut phase, &parent, lowest, u64::MAX)
                })?;
                // Released before the work that uses them is done (OpenCL may wait).
                crate::profile::span("gpu msf: release the phases' buffers", || {
                    drop((parent, phase))
                });
            }
        }
        Ok(())
    }

    fn launch(&self, name: &str, items: usize, args: &[Arg<D>]) -> Result<()> {
        self.tier.launch(self.program, name, items, 0, args)
    }

    /// Sets the first `len` elements of `buffer` to 0, 1, 2, ... on the device.
    fn iota(&self, buffer: &DeviceBuffer<D, u32>, len: usize) -> Result<()> {
        self.launch("iota", len, &[buffer.arg(), Arg::U32(len as u32)])
    }

    /// Edge-centric Borůvka with union-find (`auto`): rounds over the edges whose keys
    /// lie in [lowest, highest] until none of them joins two trees of `parent`.
    ///
    /// Each round is a compaction (the edges still between trees, with their roots),
    /// the lightest edge per tree by atomic minima, and one launch that marks the
    /// chosen edges and hooks their trees. The worklist's length stays on the device;
    /// the host reads it back behind the work (`read_later`) and runs up to
    /// `Knobs::lookahead` rounds ahead of what it has read, launching as many work-items
    /// as the last length it knows (an upper bound: the worklist only shrinks). A round
    /// past the end finds an empty worklist and does nothing.
    fn edge_centric(
        &self,
        phase: &mut Phase<D>,
        parent: &DeviceBuffer<D, u32>,
        lowest: u64,
        highest: u64,
    ) -> Result<()> {
        let tier = self.tier;
        let (n, m) = (phase.vertices, self.eu.len());
        let Phase {
            worklist,
            next,
            counts,
            best,
            together: phase_together,
            ..
        } = phase;
        // Round r reads its length from counts[r % 3], writes the next into
        // counts[(r + 1) % 3] and clears counts[(r + 2) % 3], last used two rounds ago.
        tier.fill(counts, 0, COUNT_SLOTS + BARRIER_WORDS)?;
        let mut bound = m;
        let mut unread = std::collections::VecDeque::new();
        let knobs = super::knobs();
        let lookahead = knobs.lookahead;
        for round in 0usize.. {
            let [at, into, clear_at] = [0, 1, 2].map(|k| ((round + k) % COUNT_SLOTS) as u32);
            // The first compaction reads edges by position (and drops self-loops).
            let first_count = if round == 0 { m as u32 } else { 0 };
            let mut args = vec![
                self.eu.arg(),
                self.ev.arg(),
                self.keys,
                Arg::U64(lowest),
                Arg::U64(highest),
                parent.arg(),
                // The graph's ends are read clamped below it (msf.cl, end_at).
                Arg::U32(n as u32),
                Arg::U32(first_count),
                counts.arg(),
                Arg::U32(at),
                Arg::U32(into),
                Arg::U32(clear_at),
            ];
            args.extend(worklist.args());
            args.extend(next.args());
            if bound <= knobs.resident_below
                && crate::profile::span("gpu msf: rounds together, host side", || {
                    self.rounds_together(phase_together, best, n, round, &args)
                })?
            {
                return Ok(());
            }
            self.launch("ec_compact", bound, &args)?;
            std::mem::swap(worklist, next);
            unread.push_back(tier.read_later(counts, into as usize)?);
            // Learn the lengths that have arrived; wait for the oldest when too far
            // ahead, and always in the first round, which shrinks the worklist most.
            loop {
                let wait = round == 0 || unread.len() > lookahead;
                let Some(front) = unread.front_mut() else {
                    break;
                };
                let Some(length) =
                    crate::profile::span("gpu msf: worklist lengths", || tier.poll(front, wait))?
                else {
                    break;
                };
                unread.pop_front();
                bound = length as usize;
                if bound == 0 {
                    return Ok(());
                }
            }
            let count = [counts.arg(), Arg::U32(into)];
            let [edge, root_u, root_v, keys] = worklist.args();
            best.reset(tier, n)?;
            for pass in 0..self.config.passes() {
                // The keys in worklist order (keys_in_order = 1).
                let mut args = vec![edge, root_u, root_v, keys, Arg::U32(1)];
                args.extend(count);
                args.push(Arg::U32(pass));
                args.extend(best.args());
                self.launch("ec_lightest", bound, &args)?;
            }
            let mut args = vec![edge, root_u, root_v];
            args.extend(count);
            args.extend(best.args());
            args.extend([self.in_forest.arg(), Arg::U32(1), parent.arg()]);
            self.launch("ec_choose", bound, &args)?;
        }
        unreachable!("the loop above runs until the worklist is empty")
    }

    /// Runs the rest of an edge-centric phase, from `round`, in one launch of resident
    /// work-groups (`ec_rounds`), where the tier can; false where it cannot (nothing
    /// was launched). `compaction` holds `ec_compact`'s arguments for this round.
    fn rounds_together(
        &self,
        together: &mut Option<Option<Together<D>>>,
        best: &mut Best<D>,
        vertices: usize,
        round: usize,
        compaction: &[Arg<D>],
    ) -> Result<bool> {
        const NAME: &str = "ec_rounds";
        let tier = self.tier;
        if together.is_none() {
            let knobs = super::knobs();
            let group = knobs.resident_group;
            let fit = crate::profile::span("gpu msf: rounds together, groups query", || {
                tier.groups_together(self.program, NAME, group)
            })?;
            *together = Some(match fit {
                None => None,
                Some(fit) => {
                    let wanted = knobs.resident_groups_per_unit * tier.settings.compute_units;
                    Some(Together {
                        groups: if wanted == 0 { fit } else { wanted.min(fit) },
                        group,
                        next_best: Best::new(tier, self.config, vertices)?,
                    })
                }
            });
        }
        let slot = together;
        let Some(Some(together)) = slot.as_ref() else {
            return Ok(false);
        };
        // ec_compact's arguments but the three slots, which ec_rounds derives from
        // the round, as this loop does.
        let mut args = compaction[..9].to_vec();
        args.push(Arg::U32(round as u32));
        args.extend_from_slice(&compaction[12..]);
        // The first round's compaction offers into these; each later round's into the
        // other set, which the round before it reset.
        best.reset(tier, vertices)?;
        args.extend(best.args());
        args.extend(together.next_best.args());
        args.extend([self.in_forest.arg()]);
        let launched = crate::profile::span("gpu msf: rounds together, launch", || {
            tier.launch_together(self.program, NAME, together.groups, together.group, &args)
        })?;
        if !launched {
            // Launches per round from here on, in this phase and the next ones.
            *slot = Some(None);
        }
        Ok(launched)
    }

    /// Pointer doubling on `successor` over `vertices`, then new ids 0.. for the roots
    /// (an exclusive scan of root flags into `new_id`); returns the number of roots.
    fn merge_and_renumber(
        &self,
        successor: &DeviceBuffer<D, u32>,
        new_id: &mut DeviceBuffer<D, u32>,
        scratch: &mut DeviceBuffer<D, u32>,
        vertices: usize,
    ) -> Result<usize> {
        let tier = self.tier;
        loop {
            tier.fill(scratch, 0, 1)?;
            self.launch(
                "vb_jump",
                vertices,
                &[successor.arg(), Arg::U32(vertices as u32), scratch.arg()],
            )?;
            if tier.read_one(scratch, 0)? == 0 {
                break;
            }
        }
        self.launch(
            "vb_root_flags",
            vertices,
            &[successor.arg(), Arg::U32(vertices as u32), new_id.arg()],
        )?;
        let last_flag = tier.read_one(new_id, vertices - 1)?;
        new_id.set_len(vertices);
        tier.scan_resident(new_id, None, ScanOp::Sum, ScanKind::Exclusive)?;
        Ok((tier.read_one(new_id, vertices - 1)? + last_flag) as usize)
    }

    /// Vasconcellos, Cáceres et al.'s strut algorithm (`strut`).
    fn strut(&self, n: usize, m: usize, best: &mut Best<D>) -> Result<()> {
        let tier = self.tier;
        let links = |tier: &Gpu<D>| -> Result<[DeviceBuffer<D, u32>; 3]> {
            Ok([tier.alloc(m)?, tier.alloc(m)?, tier.alloc(m)?])
        };
        let (mut link, mut next) = (links(tier)?, links(tier)?);
        let mut counts = [tier.alloc::<u32>(1)?, tier.alloc::<u32>(1)?];
        let successor = tier.alloc::<u32>(n)?;
        let mut new_id = tier.alloc::<u32>(n)?;
        let mut scratch = tier.alloc::<u32>(1)?;
        tier.fill(&mut counts[0], 0, 1)?;
        self.launch(
            "st_links",
            m,
            &[
                self.eu.arg(),
                self.ev.arg(),
                Arg::U32(m as u32),
                Arg::U32(n as u32),
                link[0].arg(),
                link[1].arg(),
                link[2].arg(),
                counts[0].arg(),
            ],
        )?;
        let mut count = tier.read_one(&counts[0], 0)? as usize;
        let mut fragments = n;
        while count > 0 {
            // Each fragment's strut; every edge-vertex picked at least once joins.
            let (a, b, e, c) = (link[0].arg(), link[1].arg(), link[2].arg(), counts[0].arg());
            best.reset(tier, fragments)?;
            for pass in 0..self.config.passes() {
                // Keys by edge position (keys_in_order = 0).
                let mut args = vec![e, a, b, self.keys, Arg::U32(0), c, Arg::U32(0)];
                args.push(Arg::U32(pass));
                args.extend(best.args());
                self.launch("ec_lightest", count, &args)?;
            }
            let mut args = vec![e, a, b, c, Arg::U32(0)];
            args.extend(best.args());
            // Without hooking, ec_choose leaves `parent` (the last) alone.
            args.extend([self.in_forest.arg(), Arg::U32(0), self.eu.arg()]);
            self.launch("ec_choose", count, &args)?;
            // Merge along the struts and renumber the fragments.
            self.iota(&successor, fragments)?;
            let mut args = vec![a, b, e, c];
            args.extend(best.args());
            args.push(successor.arg());
            self.launch("st_successor", count, &args)?;
            let roots =
                self.merge_and_renumber(&successor, &mut new_id, &mut scratch, fragments)?;
            // Compact the links.
            tier.fill(&mut counts[1], 0, 1)?;
            self.launch(
                "st_contract",
                count,
                &[
                    a,
                    b,
                    e,
                    c,
                    successor.arg(),
                    new_id.arg(),
                    next[0].arg(),
                    next[1].arg(),
                    next[2].arg(),
                    counts[1].arg(),
                ],
            )?;
            std::mem::swap(&mut link, &mut next);
            counts.swap(0, 1);
            count = tier.read_one(&counts[0], 0)? as usize;
            fragments = roots;
        }
        Ok(())
    }

    /// Wang et al.'s Prim (`prim`): one work-group, one launch.
    fn prim(&self, problem: &DeviceProblem<'_>) -> Result<()> {
        let tier = self.tier;
        let n = problem.num_vertices;
        let (offsets, targets, edges) = (problem.adjacency)(problem)?;
        let offsets = tier.upload(&offsets)?;
        let targets = tier.upload(&targets)?;
        let edges = tier.upload(&edges)?;
        let wide = self.config.keys == 2;
        let mut cand_key_wide = tier.alloc::<u64>(if wide { n } else { 0 })?;
        let mut cand_key = tier.alloc::<u32>(if wide { 0 } else { n })?;
        tier.fill(&mut cand_key_wide, u64::MAX, if wide { n } else { 0 })?;
        tier.fill(&mut cand_key, u32::MAX, if wide { 0 } else { n })?;
        let mut cand_pos = tier.alloc::<u32>(n)?;
        tier.fill(&mut cand_pos, NO_EDGE, n)?;
        let mut in_tree = tier.alloc::<u8>(n)?;
        tier.fill(&mut in_tree, 0, n)?;
        let blocks = n.div_ceil(tier.settings.group_size);
        let mut block_best = tier.alloc::<u32>(blocks)?;
        tier.fill(&mut block_best, NO_EDGE, blocks)?;
        let group = tier.settings.group_size;
        tier.launch(
            self.program,
            "prim_grow",
            group,
            group,
            &[
                offsets.arg(),
                targets.arg(),
                edges.arg(),
                self.keys,
                Arg::U32(n as u32),
                if wide {
                    cand_key_wide.arg()
                } else {
                    cand_key.arg()
                },
                cand_pos.arg(),
                in_tree.arg(),
                block_best.arg(),
                self.in_forest.arg(),
            ],
        )?;
        tier.finish()
    }

    /// Vineet et al.'s recursive Borůvka (`boruvka`): entries grouped by supervertex,
    /// the lightest edge of each by a segmented min-scan, then successors, 2-cycle
    /// removal, pointer doubling, renumbering by scan, and contraction that keeps the
    /// entries grouped (segmented scans rank them; see msf.cl).
    fn vineet_boruvka(&self, n: usize, m: usize) -> Result<()> {
        let tier = self.tier;
        let entries_len = 2 * m;
        let entry_lists = || -> Result<[DeviceBuffer<D, u32>; 3]> {
            Ok([
                tier.alloc(entries_len)?,
                tier.alloc(entries_len)?,
                tier.alloc(entries_len)?,
            ])
        };
        let (mut list, mut grouped) = (entry_lists()?, entry_lists()?);
        let mut values = tier.alloc::<u64>(entries_len)?;
        let mut flags = tier.alloc::<u8>(entries_len)?;
        let mut rank = tier.alloc::<u32>(entries_len)?;
        let mut offsets = tier.alloc::<u32>(n + 1)?;
        let mut new_offsets = tier.alloc::<u32>(n + 1)?;
        let base = tier.alloc::<u32>(n)?;
        let wide = self.config.keys == 2;
        let min_key = tier.alloc::<u64>(if wide { n } else { 0 })?;
        let chosen = tier.alloc::<u32>(n)?;
        let successor = tier.alloc::<u32>(n)?;
        let mut new_id = tier.alloc::<u32>(n)?;
        let mut scratch = tier.alloc::<u32>(1)?;
        let mut entries = self.first_grouping(&list, &grouped, n, m, &mut offsets)?;
        std::mem::swap(&mut list, &mut grouped);
        let mut vertices = n;
        while entries > 0 {
            let [src, tgt, pos] = [list[0].arg(), list[1].arg(), list[2].arg()];
            let count = Arg::U32(entries as u32);
            // 1. The lightest edge leaving each supervertex, by segmented min-scans.
            flags.set_len(entries);
            self.launch("vb_head_flags", entries, &[src, count, flags.arg()])?;
            for pass in 0..if wide { 2 } else { 1 } {
                values.set_len(entries);
                self.launch(
                    "vb_values",
                    entries,
                    &[
                        src,
                        pos,
                        self.keys,
                        count,
                        Arg::U32(pass),
                        min_key.arg(),
                        values.arg(),
                    ],
                )?;
                tier.scan_resident(&mut values, Some(&flags), ScanOp::Min, ScanKind::Inclusive)?;
                self.launch(
                    "vb_segment_min",
                    vertices,
                    &[
                        offsets.arg(),
                        Arg::U32(vertices as u32),
                        values.arg(),
                        Arg::U32(pass),
                        min_key.arg(),
                        chosen.arg(),
                    ],
                )?;
            }
            self.iota(&successor, vertices)?;
            self.launch(
                "vb_successor",
                entries,
                &[src, tgt, pos, count, chosen.arg(), successor.arg()],
            )?;
            // 2. Break 2-cycles; the other chosen edges join the forest.
            self.launch(
                "vb_break_cycles",
                vertices,
                &[
                    successor.arg(),
                    Arg::U32(vertices as u32),
                    chosen.arg(),
                    self.in_forest.arg(),
                ],
            )?;
            // 3-4. Pointer doubling, then renumber the roots 0.. by a scan of root flags.
            let roots = self.merge_and_renumber(&successor, &mut new_id, &mut scratch, vertices)?;
            // 5. Contract: relabel, drop entries inside a supervertex, keep them grouped.
            let (successor, new_id) = (successor.arg(), new_id.arg());
            rank.set_len(entries);
            self.launch(
                "vb_keep",
                entries,
                &[src, tgt, count, successor, new_id, rank.arg()],
            )?;
            tier.scan_resident(&mut rank, Some(&flags), ScanOp::Sum, ScanKind::Exclusive)?;
            new_offsets.set_len(roots + 1);
            tier.fill(&mut new_offsets, 0, roots + 1)?;
            self.launch(
                "vb_segment_base",
                vertices,
                &[
                    offsets.arg(),
                    Arg::U32(vertices as u32),
                    tgt,
                    rank.arg(),
                    successor,
                    new_id,
                    new_offsets.arg(),
                    base.arg(),
                ],
            )?;
            tier.scan_resident(&mut new_offsets, None, ScanOp::Sum, ScanKind::Exclusive)?;
            let kept = tier.read_one(&new_offsets, roots)? as usize;
            self.launch(
                "vb_move",
                entries,
                &[
                    src,
                    tgt,
                    pos,
                    count,
                    successor,
                    new_id,
                    rank.arg(),
                    base.arg(),
                    new_offsets.arg(),
                    grouped[0].arg(),
                    grouped[1].arg(),
                    grouped[2].arg(),
                ],
            )?;
            std::mem::swap(&mut list, &mut grouped);
            std::mem::swap(&mut offsets, &mut new_offsets);
            (entries, vertices) = (kept, roots);
        }
        Ok(())
    }

    /// Both directions of every edge into `list`, then grouped by src into `out` by a
    /// counting sort (self-loops dropped); `offsets` receives the n + 1 CSR offsets.
    /// Returns the number of entries.
    fn first_grouping(
        &self,
        list: &[DeviceBuffer<D, u32>; 3],
        out: &[DeviceBuffer<D, u32>; 3],
        n: usize,
        m: usize,
        offsets: &mut DeviceBuffer<D, u32>,
    ) -> Result<usize> {
        let tier = self.tier;
        let [src, tgt, pos] = [list[0].arg(), list[1].arg(), list[2].arg()];
        self.launch(
            "vb_entries",
            m,
            &[
                self.eu.arg(),
                self.ev.arg(),
                Arg::U32(m as u32),
                Arg::U32(n as u32),
                src,
                tgt,
                pos,
            ],
        )?;
        let entries = Arg::U32(2 * m as u32);
        offsets.set_len(n + 1);
        tier.fill(offsets, 0, n + 1)?;
        self.launch("vb_count", 2 * m, &[src, tgt, entries, offsets.arg()])?;
        tier.scan_resident(offsets, None, ScanOp::Sum, ScanKind::Exclusive)?;
        let kept = tier.read_one(offsets, n)? as usize;
        let mut cursor = tier.alloc::<u32>(n + 1)?;
        tier.copy_resident(offsets, &mut cursor)?;
        self.launch(
            "vb_scatter",
            2 * m,
            &[
                src,
                tgt,
                pos,
                entries,
                cursor.arg(),
                out[0].arg(),
                out[1].arg(),
                out[2].arg(),
            ],
        )?;
        Ok(kept)
    }
}
