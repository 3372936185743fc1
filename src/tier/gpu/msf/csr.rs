//! Symmetric CSR graphs in device memory: the offsets, the targets' range and the
//! symmetry are checked on the device (`csr_*` in msf.cl), and the entries with source
//! < target become the edge list the resident solver takes, each edge keeping its
//! entry's position as its id (the host path numbers CSR edges so).

use super::resident::{download, kernel_config, key_kind, ResidentEdges};
use crate::tier::gpu::{Arg, Device, DeviceBuffer, Gpu, ProgramKind};
use crate::types::{DType, ScanKind, ScanOp};
use crate::{Error, Result};

/// A symmetric CSR graph in device memory (addresses as the tier knows them).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ResidentCsr {
    pub num_vertices: usize,
    /// Entries of `targets` (and of `weights`).
    pub num_entries: usize,
    /// num_vertices + 1 u64.
    pub offsets: usize,
    /// num_entries u32.
    pub targets: usize,
    /// num_entries weights of the given type; None: unweighted.
    pub weights: Option<(usize, DType)>,
}

/// The status words of the checks (CSR_* in msf.cl): each the least entry (or offset
/// index) found wrong, NOT_FOUND when none.
const STATUS_WORDS: usize = 5;
const OFFSETS: usize = 0;
const RANGE: usize = 1;
const UNSORTED: usize = 2;
const UNPAIRED: usize = 3;
const LOOP_NAN: usize = 4;
const NOT_FOUND: u32 = u32::MAX;

/// A checked CSR graph's edges, in gpumst's device memory.
pub(crate) struct CsrEdges<D: Device> {
    num_vertices: usize,
    count: usize,
    u: DeviceBuffer<D, u32>,
    v: DeviceBuffer<D, u32>,
    /// The weights' 32-bit words (one or two per edge).
    weights: Option<DeviceBuffer<D, u32>>,
    /// Each edge's CSR position (its id), ascending.
    ids: DeviceBuffer<D, u64>,
}

impl<D: Device> CsrEdges<D> {
    /// The edges as the resident solver takes them (gpumst's memory, alive with self).
    pub(crate) fn list(&self) -> ResidentEdges {
        ResidentEdges {
            num_vertices: self.num_vertices,
            num_edges: self.count,
            u: self.u.address(),
            v: self.v.address(),
            weights: self.weights.as_ref().map(|w| w.address()),
        }
    }

    /// The CSR position (id) of edge `edge`.
    pub(crate) fn entry_of(&self, tier: &Gpu<D>, edge: usize) -> Result<u64> {
        tier.read_one(&self.ids, edge)
    }
}

/// What the device's checks found.
pub(crate) enum CsrChecked<D: Device> {
    Edges(CsrEdges<D>),
    /// Something is wrong: host copies of the arrays (the weights as 32-bit words),
    /// for the host path's checks to name it with their messages.
    Rejected {
        offsets: Vec<u64>,
        targets: Vec<u32>,
        weight_words: Option<Vec<u32>>,
    },
}

/// Checks `csr` (after the work queued so far) and builds its edge list. The caller
/// has checked the vertex count.
///
/// # Safety
/// Every address in `csr` is live device memory of this tier holding what its
/// documentation says, left alone by other work until this returns.
pub(crate) unsafe fn edge_list<D: Device>(
    tier: &Gpu<D>,
    csr: &ResidentCsr,
) -> Result<CsrChecked<D>> {
    let (n, m) = (csr.num_vertices, csr.num_entries);
    if m >= NOT_FOUND as usize || n >= NOT_FOUND as usize {
        return Err(Error::invalid_argument(format!(
            "a CSR graph in device memory has at most {} vertices and entries; this one has {n} and {m}",
            NOT_FOUND - 1
        )));
    }
    // SAFETY (each wrap): the caller's promise.
    let offsets = unsafe { tier.wrap::<u64>(csr.offsets, n + 1, "offsets")? };
    let mut status = tier.alloc::<u32>(STATUS_WORDS)?;
    tier.fill(&mut status, NOT_FOUND, STATUS_WORDS)?;
    // Its verdict lands in status[OFFSETS] (word 0).
    tier.launch_check_offsets(&offsets, n, m, &status)?;
    if m == 0 {
        return match tier.read_one(&status, OFFSETS)? {
            NOT_FOUND => Ok(CsrChecked::Edges(CsrEdges {
                num_vertices: n,
                count: 0,
                u: tier.alloc(0)?,
                v: tier.alloc(0)?,
                weights: None,
                ids: tier.alloc(0)?,
            })),
            _ => rejected(tier, &offsets, None, None),
        };
    }
    let targets = unsafe { tier.wrap::<u32>(csr.targets, m, "targets")? };
    let dtype = csr.weights.map(|(_, dtype)| dtype);
    let words = dtype.map_or(0, |dtype| dtype.size() / 4);
    let weights = match csr.weights {
        Some((address, _)) => Some(unsafe { tier.wrap::<u32>(address, m * words, "weights")? }),
        None => None,
    };
    let program = tier.program(ProgramKind::Msf(kernel_config(tier, dtype)))?;
    // Each entry's row, its forward flag, then (the scan, in place) each forward
    // entry's edge position.
    let rows = tier.alloc::<u32>(m)?;
    let forward = tier.alloc::<u32>(m)?;
    let mut at = tier.alloc::<u32>(m)?;
    let weight_arg = weights.as_ref().map_or(targets.arg(), |w| w.arg());
    let kind = Arg::U32(dtype.map_or(0, key_kind));
    tier.launch(
        &program,
        "csr_entries",
        m,
        0,
        &[
            offsets.arg(),
            Arg::U32(n as u32),
            targets.arg(),
            Arg::U32(m as u32),
            weight_arg,
            kind,
            rows.arg(),
            forward.arg(),
            status.arg(),
        ],
    )?;
    let mut found = [0u32; STATUS_WORDS];
    tier.read(&status, &mut found)?;
    if found[OFFSETS] != NOT_FOUND || found[RANGE] != NOT_FOUND {
        return rejected(tier, &offsets, Some(&targets), weights.as_ref());
    }
    // Rows not sorted by target cannot be bisected: their entries go to a hash table
    // (at most half full, so that every probe ends at an empty slot soon).
    let table = match found[UNSORTED] {
        NOT_FOUND => None,
        _ => {
            let slots = (2 * m).next_power_of_two();
            let mut table = tier.alloc::<u32>(slots)?;
            tier.fill(&mut table, NOT_FOUND, slots)?;
            tier.launch(
                &program,
                "csr_table",
                m,
                0,
                &[
                    rows.arg(),
                    targets.arg(),
                    Arg::U32(m as u32),
                    Arg::U32(n as u32),
                    weight_arg,
                    kind,
                    table.arg(),
                    Arg::U64(slots as u64 - 1),
                ],
            )?;
            Some(table)
        }
    };
    tier.launch(
        &program,
        "csr_symmetric",
        m,
        0,
        &[
            offsets.arg(),
            rows.arg(),
            targets.arg(),
            Arg::U32(m as u32),
            Arg::U32(n as u32),
            weight_arg,
            kind,
            table.as_ref().map_or(rows.arg(), |t| t.arg()),
            Arg::U64(table.as_ref().map_or(0, |t| t.len() as u64 - 1)),
            status.arg(),
        ],
    )?;
    tier.copy_at(&forward, 0, &mut at, 0, m)?;
    tier.scan_queued(&mut at, None, ScanOp::Sum, ScanKind::Exclusive)?;
    tier.read(&status, &mut found)?;
    drop(table);
    if found[UNPAIRED] != NOT_FOUND || found[LOOP_NAN] != NOT_FOUND {
        return rejected(tier, &offsets, Some(&targets), weights.as_ref());
    }
    let count = (tier.read_one(&at, m - 1)? + tier.read_one(&forward, m - 1)?) as usize;
    let edges = CsrEdges {
        num_vertices: n,
        count,
        u: tier.alloc(count)?,
        v: tier.alloc(count)?,
        weights: match &weights {
            Some(_) => Some(tier.alloc(count * words)?),
            None => None,
        },
        ids: tier.alloc(count)?,
    };
    let args = [
        rows.arg(),
        targets.arg(),
        Arg::U32(m as u32),
        forward.arg(),
        at.arg(),
        weight_arg,
        Arg::U32(words as u32),
        edges.u.arg(),
        edges.v.arg(),
        edges.weights.as_ref().map_or(edges.u.arg(), |w| w.arg()),
        edges.ids.arg(),
    ];
    // Queued: the solver's work follows on the same queue.
    tier.launch(&program, "csr_edges", m, 0, &args)?;
    Ok(CsrChecked::Edges(edges))
}

fn rejected<D: Device>(
    tier: &Gpu<D>,
    offsets: &DeviceBuffer<D, u64>,
    targets: Option<&DeviceBuffer<D, u32>>,
    weights: Option<&DeviceBuffer<D, u32>>,
) -> Result<CsrChecked<D>> {
    Ok(CsrChecked::Rejected {
        offsets: download(tier, offsets)?,
        targets: targets.map_or(Ok(Vec::new()), |t| download(tier, t))?,
        weight_words: weights.map(|w| download(tier, w)).transpose()?,
    })
}

/// Rewrites the first `count` edge positions in `ids` (device memory) as the CSR
/// positions of those edges, in place, and waits for it.
pub(crate) fn positions_to_entries<D: Device>(
    tier: &Gpu<D>,
    ids: &mut DeviceBuffer<D, u64>,
    count: usize,
    edges: &CsrEdges<D>,
) -> Result<()> {
    let entries = &edges.ids;
    if count > 0 {
        let program = tier.program(ProgramKind::Msf(kernel_config(tier, None)))?;
        // rs_carry_positions with every position "carried": ids[i] = entries[ids[i]].
        tier.launch(
            &program,
            "rs_carry_positions",
            count,
            0,
            &[
                ids.arg(),
                Arg::U32(count as u32),
                Arg::U32(u32::MAX),
                Arg::U64(0),
                entries.arg(),
                Arg::U32(0),
                entries.arg(),
                ids.arg(),
            ],
        )?;
    }
    tier.finish()
}
