//! A graph solved in partitions: the list's later edges filtered, on the device,
//! against the forest carried so far before they take room in a partition (`sf_*` in
//! msf.cl). Every forest edge precedes the edges still to come in the list, so a forest
//! edge whose key is at most an edge's key is lighter than it; an edge whose ends the
//! forest's lighter edges already join is the heaviest of a cycle and in no minimum
//! spanning forest of what is left. Without the filter every partition solves the
//! carried forest again; with it, partitions fill with survivors only (a few of them
//! where the forest is light, as in most graphs past their first partition).

use super::resident::IDS_PER_ITEM;
use crate::tier::gpu::{Arg, Device, DeviceBuffer, Gpu};
use crate::types::{ScanKind, ScanOp};
use crate::Result;

/// An edge list on the device as the filter's kernels take it (the code is the same
/// for every weight type): ends and weights.
pub(super) struct EdgeArgs<D: Device> {
    pub u: Arg<D>,
    pub v: Arg<D>,
    pub weights: Option<Arg<D>>,
}

/// How the kernels read weights: `kind` and `descending` as msf.cl's narrow_key, in
/// `words` 32-bit words each (0: unweighted).
#[derive(Clone, Copy, Debug)]
pub(super) struct WeightKeys {
    pub kind: u32,
    pub descending: bool,
    pub words: u32,
}

/// Key thresholds of a filter at most: seven quantiles of a sample of the forest's keys
/// and the sample's heaviest (as the CPU tier's filter, `msf::streamed`).
const LEVELS: usize = 8;
/// Forest keys sampled for the thresholds.
const SAMPLE: usize = 1024;

/// Component labels of the carried forest at each threshold, and the buffers that
/// filter one chunk of edges.
pub(super) struct Filter<D: Device> {
    num_vertices: usize,
    keys: WeightKeys,
    thresholds: DeviceBuffer<D, u64>,
    levels: usize,
    /// Labels at threshold j: `num_vertices` words from j * num_vertices.
    labels: DeviceBuffer<D, u32>,
    /// Per chunk: whether each edge is kept, then the kept edges' positions in it.
    flags: DeviceBuffer<D, u8>,
    kept: DeviceBuffer<D, u64>,
    block_ends: DeviceBuffer<D, u32>,
    /// rs_write_ids' status: three check words (left unset) and the kept count.
    status: DeviceBuffer<D, u32>,
}

impl<D: Device> Filter<D> {
    /// The filter of the forest of `count` edges at the head of `forest` (over `n`
    /// vertices; weights read as `keys` says), for chunks of up to `chunk` edges.
    pub(super) fn new(
        tier: &Gpu<D>,
        program: &D::Program,
        (forest, n, count): (EdgeArgs<D>, usize, usize),
        keys: WeightKeys,
        chunk: usize,
    ) -> Result<Self> {
        let (kind, descending) = (keys.kind, keys.descending);
        let thresholds = match forest.weights {
            // No forest edge: no threshold, every edge but a self-loop is kept.
            _ if count == 0 => Vec::new(),
            // Unweighted edges are ordered by position alone: every forest edge is
            // lighter than every edge after it.
            None => vec![0u64],
            Some(weights) => {
                let taken = SAMPLE.min(count);
                let sample = tier.alloc::<u64>(taken)?;
                tier.launch(
                    program,
                    "rs_sample_keys",
                    taken,
                    0,
                    &[
                        weights,
                        Arg::U64((count / taken) as u64),
                        Arg::U32(taken as u32),
                        Arg::U32(kind),
                        Arg::U32(descending as u32),
                        sample.arg(),
                    ],
                )?;
                let mut keys = vec![0u64; taken];
                tier.read(&sample, &mut keys)?;
                keys.sort_unstable();
                let mut thresholds: Vec<u64> = (1..LEVELS)
                    .map(|j| keys[j * keys.len() / LEVELS])
                    .chain(keys.last().copied())
                    .collect();
                thresholds.dedup();
                thresholds
            }
        };
        // Labels of every level in one buffer whose words the kernels index by u32
        // within a level.
        let levels = match n {
            0 => 0,
            _ => thresholds.len().min(u32::MAX as usize / n),
        };
        let thresholds = tier.upload_buffer(&thresholds[thresholds.len() - levels..])?;
        let labels = tier.alloc::<u32>(levels * n)?;
        let vertices = Arg::U32(n as u32);
        // One threshold after another, each starting from the one below: every forest
        // edge is linked once, not at every level it joins.
        for level in 0..levels {
            let level = Arg::U32(level as u32);
            tier.launch(
                program,
                "sf_labels_init",
                n,
                0,
                &[labels.arg(), vertices, level],
            )?;
            // (There are levels only where the forest has edges: `count` > 0.)
            tier.launch(
                program,
                "sf_labels_link",
                count,
                0,
                &[
                    forest.u,
                    forest.v,
                    forest.weights.unwrap_or(forest.u),
                    Arg::U32(count as u32),
                    Arg::U32(kind),
                    Arg::U32(descending as u32),
                    thresholds.arg(),
                    Arg::U32(levels as u32),
                    level,
                    vertices,
                    labels.arg(),
                ],
            )?;
            tier.launch(
                program,
                "sf_labels_flatten",
                n,
                0,
                &[labels.arg(), vertices, level],
            )?;
        }
        let blocks = chunk.div_ceil(tier.settings.group_size * IDS_PER_ITEM);
        let mut status = tier.alloc::<u32>(4)?;
        tier.fill(&mut status, u32::MAX, 4)?;
        Ok(Filter {
            num_vertices: n,
            keys,
            thresholds,
            levels,
            labels,
            flags: tier.alloc::<u8>(chunk.next_multiple_of(16))?,
            kept: tier.alloc::<u64>(chunk)?,
            block_ends: tier.alloc::<u32>(blocks)?,
            status,
        })
    }

    /// Marks which of the edges `first..first + len` of `from` may belong to the
    /// forest and lists their positions in the chunk, in order: how many
    /// ([`Filter::gather`] then appends them).
    pub(super) fn select(
        &mut self,
        tier: &Gpu<D>,
        program: &D::Program,
        (from, first, len): (&EdgeArgs<D>, usize, usize),
    ) -> Result<usize> {
        tier.launch(
            program,
            "sf_keep",
            len.next_multiple_of(16),
            0,
            &[
                from.u,
                from.v,
                from.weights.unwrap_or(from.u),
                Arg::U64(first as u64),
                Arg::U32(len as u32),
                Arg::U32(self.num_vertices as u32),
                Arg::U32(self.keys.kind),
                Arg::U32(self.keys.descending as u32),
                self.thresholds.arg(),
                Arg::U32(self.levels as u32),
                self.labels.arg(),
                self.flags.arg(),
            ],
        )?;
        // The kept edges' positions in the chunk, in order (as a forest's ids).
        let group = tier.settings.group_size;
        let blocks = len.div_ceil(group * IDS_PER_ITEM);
        self.block_ends.set_len(blocks);
        let counted = [
            self.flags.arg(),
            Arg::U32(len as u32),
            self.block_ends.arg(),
        ];
        tier.launch(program, "rs_count_chosen", blocks * group, 0, &counted)?;
        tier.scan_queued(&mut self.block_ends, None, ScanOp::Sum, ScanKind::Inclusive)?;
        tier.launch(
            program,
            "rs_write_ids",
            blocks * group,
            0,
            &[
                counted[0],
                counted[1],
                counted[2],
                self.status.arg(),
                self.kept.arg(),
            ],
        )?;
        Ok(tier.read_one(&self.status, 3)? as usize)
    }

    /// Appends the `count` edges the last [`Filter::select`] kept of `from` (edges
    /// `first..` of it, the whole list's `start..`) to `into` from edge `at` on, in
    /// their order, and their positions in the whole list to `positions` from
    /// `listed`.
    pub(super) fn gather(
        &self,
        tier: &Gpu<D>,
        program: &D::Program,
        (from, first, start, count): (&EdgeArgs<D>, usize, usize, usize),
        (into, at): (EdgeArgs<D>, usize),
        (positions, listed): (&DeviceBuffer<D, u64>, usize),
    ) -> Result<()> {
        if count == 0 {
            return Ok(());
        }
        tier.launch(
            program,
            "sf_gather",
            count,
            0,
            &[
                from.u,
                from.v,
                from.weights.unwrap_or(from.u),
                Arg::U64(first as u64),
                self.kept.arg(),
                Arg::U32(count as u32),
                Arg::U64(start as u64),
                Arg::U32(if from.weights.is_some() {
                    self.keys.words
                } else {
                    0
                }),
                Arg::U32(at as u32),
                into.u,
                into.v,
                into.weights.unwrap_or(into.u),
                Arg::U32(listed as u32),
                positions.arg(),
            ],
        )
    }
}
