//! An edge list or a symmetric CSR graph uploaded to a GPU tier with room for its
//! forest's ids, solved by `Context::msf_on_device` or `Context::msf_csr_on_device`
//! (tests/device_memory.rs and tests/partitioned.rs).

use gpumst::msf::{DeviceCsrGraph, DeviceForest, DeviceGraph, DeviceOutput};
use gpumst::{Buffer, Context, Element, MsfOptions};

/// A graph uploaded to `ctx`'s tier, with room for its forest.
pub struct OnDevice<W: Element> {
    pub u: Buffer<u32>,
    pub v: Buffer<u32>,
    pub w: Option<Buffer<W>>,
    pub ids: Buffer<u64>,
    pub n: usize,
}

fn address<T: Element>(buffer: &Buffer<T>) -> usize {
    buffer.device_address().expect("a device buffer")
}

impl<W: Element> OnDevice<W> {
    pub fn new(ctx: &Context, n: usize, u: &[u32], v: &[u32], w: Option<&[W]>) -> Self {
        let capacity = n.saturating_sub(1).min(u.len());
        OnDevice {
            u: ctx.upload(u).unwrap(),
            v: ctx.upload(v).unwrap(),
            w: w.map(|w| ctx.upload(w).unwrap()),
            ids: ctx.upload(&vec![u64::MAX; capacity.max(1)]).unwrap(),
            n,
        }
    }

    pub fn graph(&self) -> DeviceGraph {
        DeviceGraph {
            num_vertices: self.n,
            num_edges: self.u.len(),
            u: address(&self.u),
            v: address(&self.v),
            weights: self.w.as_ref().map(|w| (address(w), W::DTYPE)),
        }
    }

    /// Bytes of the caller's arrays (the graph and the ids' room).
    pub fn bytes(&self) -> u64 {
        let m = self.u.len() as u64;
        let weights = self.w.as_ref().map_or(0, |_| W::DTYPE.size() as u64);
        m * (8 + weights) + 8 * self.ids.len() as u64
    }

    /// The forest with its total weight, its ids written to `ids`.
    pub fn solve(&self, ctx: &Context, options: &MsfOptions) -> gpumst::Result<DeviceForest> {
        let output = DeviceOutput {
            edge_ids: address(&self.ids),
            queue: 0,
            total_weight: true,
        };
        // SAFETY: every address is a live buffer of ctx's tier made in `new`, of the
        // lengths the graph states.
        unsafe { ctx.msf_on_device(&self.graph(), options, &output) }
    }

    /// The first `count` forest ids, read back.
    pub fn ids(&self, ctx: &Context, count: usize) -> Vec<u64> {
        let mut all = vec![0u64; self.ids.len()];
        ctx.download(&self.ids, &mut all).unwrap();
        all.truncate(count);
        all
    }
}

/// A symmetric CSR graph uploaded to `ctx`'s tier, with room for its forest, solved by
/// `Context::msf_csr_on_device`.
pub struct CsrOnDevice<W: Element> {
    pub offsets: Buffer<u64>,
    pub targets: Buffer<u32>,
    pub w: Option<Buffer<W>>,
    pub ids: Buffer<u64>,
}

impl<W: Element> CsrOnDevice<W> {
    pub fn new(ctx: &Context, offsets: &[u64], targets: &[u32], w: Option<&[W]>) -> Self {
        let capacity = (offsets.len().saturating_sub(2)).min(targets.len() / 2);
        CsrOnDevice {
            offsets: ctx.upload(offsets).unwrap(),
            targets: ctx.upload(targets).unwrap(),
            w: w.map(|w| ctx.upload(w).unwrap()),
            ids: ctx.upload(&vec![u64::MAX; capacity.max(1)]).unwrap(),
        }
    }

    pub fn graph(&self) -> DeviceCsrGraph {
        DeviceCsrGraph {
            num_vertices: self.offsets.len() - 1,
            num_entries: self.targets.len(),
            offsets: address(&self.offsets),
            targets: address(&self.targets),
            weights: self.w.as_ref().map(|w| (address(w), W::DTYPE)),
        }
    }

    /// The forest with its total weight, its ids written to `ids`.
    pub fn solve(&self, ctx: &Context, options: &MsfOptions) -> gpumst::Result<DeviceForest> {
        let output = DeviceOutput {
            edge_ids: address(&self.ids),
            queue: 0,
            total_weight: true,
        };
        // SAFETY: every address is a live buffer of ctx's tier made in `new`, of the
        // lengths the graph states.
        unsafe { ctx.msf_csr_on_device(&self.graph(), options, &output) }
    }

    /// The first `count` forest ids, read back.
    pub fn ids(&self, ctx: &Context, count: usize) -> Vec<u64> {
        let mut all = vec![0u64; self.ids.len()];
        ctx.download(&self.ids, &mut all).unwrap();
        all.truncate(count);
        all
    }
}
