//! Component labels of a forest whose edge ids are in device memory: per vertex the
//! smallest vertex of its component (the host's labels), computed on the device
//! (`labels_link` and `labels_flatten` in msf.cl) into the caller's device memory.

use super::resident::kernel_config;
use crate::tier::gpu::{Arg, Device, Gpu, ProgramKind};
use crate::Result;

/// A graph's ends in device memory, as `labels_link` reads them.
#[derive(Clone, Copy, Debug)]
pub(crate) enum LabelEnds {
    /// `edges` u32 ends in `u` and `v`.
    EdgeList { u: usize, v: usize, edges: usize },
    /// `offsets` (num_vertices + 1 u64) and `entries` u32 targets.
    Csr {
        offsets: usize,
        targets: usize,
        entries: usize,
    },
}

/// Writes the labels of `num_vertices` vertices to `labels` (device memory, u32 each)
/// from the `count` forest edge ids at `ids` (u64, device memory), after the work queued
/// so far, and waits. Returns the least index i whose id is not an edge of the graph (or
/// whose ends are out of range), where there is one; the labels are then unspecified.
///
/// # Safety
/// Every address is live device memory of this tier holding what the arguments say,
/// left alone by other work until this returns.
pub(crate) unsafe fn forest_labels<D: Device>(
    tier: &Gpu<D>,
    ends: LabelEnds,
    num_vertices: usize,
    ids: usize,
    count: usize,
    labels: usize,
) -> Result<Option<usize>> {
    if num_vertices == 0 {
        return Ok(None);
    }
    // SAFETY (each wrap): the caller's promise.
    let parent = unsafe { tier.wrap::<u32>(labels, num_vertices, "labels")? };
    let program = tier.program(ProgramKind::Msf(kernel_config(tier, None)))?;
    let n = Arg::U32(num_vertices as u32);
    tier.launch(&program, "iota", num_vertices, 0, &[parent.arg(), n])?;
    if count == 0 {
        return tier.finish().map(|()| None);
    }
    let ids = unsafe { tier.wrap::<u64>(ids, count, "edge_ids")? };
    // The caller's arrays, wrapped for the call (an edge list's u, or a CSR's offsets).
    let (first, second, offsets, csr, edges) = match ends {
        LabelEnds::EdgeList { u, v, edges } => (
            Some(unsafe { tier.wrap::<u32>(u, edges, "u")? }),
            unsafe { tier.wrap::<u32>(v, edges, "v")? },
            None,
            0,
            edges,
        ),
        LabelEnds::Csr {
            offsets,
            targets,
            entries,
        } => (
            None,
            unsafe { tier.wrap::<u32>(targets, entries, "targets")? },
            Some(unsafe { tier.wrap::<u64>(offsets, num_vertices + 1, "offsets")? }),
            1,
            entries,
        ),
    };
    let mut bad = tier.alloc::<u32>(1)?;
    tier.fill(&mut bad, u32::MAX, 1)?;
    tier.launch(
        &program,
        "labels_link",
        count,
        0,
        &[
            ids.arg(),
            Arg::U32(count as u32),
            Arg::U64(edges as u64),
            first.as_ref().map_or(second.arg(), |u| u.arg()),
            second.arg(),
            offsets.as_ref().map_or(ids.arg(), |o| o.arg()),
            Arg::U32(csr),
            n,
            parent.arg(),
            bad.arg(),
        ],
    )?;
    tier.launch(
        &program,
        "labels_flatten",
        num_vertices,
        0,
        &[parent.arg(), n],
    )?;
    Ok(match tier.read_one(&bad, 0)? {
        u32::MAX => None,
        i => Some(i as usize),
    })
}
