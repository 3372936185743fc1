//! Adjacency lists for the vertex-centric algorithms (Borůvka, Prim): both directions
//! of every edge that is not a self-loop, grouped by vertex, each entry a 4-byte target
//! and a 4-byte edge position (priorities are looked up by position); and, through the
//! same `Grouped` builder, strut's incidence lists (edge-vertex ids per fragment). Built
//! by a parallel counting scatter, so no sort and no scratch copy of the entries.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use rayon::prelude::*;

use super::prepare::Priority;
use super::radix::Destination;
use crate::{alloc, Result};

/// (target vertex, edge position).
pub(crate) type Entry = (u32, u32);

/// Entries grouped by vertex: those of vertex x are `entries[offsets[x]..offsets[x + 1]]`.
pub(crate) struct Grouped<E> {
    pub offsets: Vec<usize>,
    pub entries: Vec<E>,
}

/// Adjacency lists: per vertex, its (target, edge) entries.
pub(crate) type Adjacency = Grouped<Entry>;

impl<E: Copy + Send + Sync + alloc::Zeroable> Grouped<E> {
    /// The entries `visit(item, emit)` emits, as `emit(vertex, entry)`, for every item
    /// in `0..items`, grouped over `n` vertices.
    pub fn build(
        n: usize,
        items: usize,
        visit: impl Fn(usize, &mut dyn FnMut(u32, E)) + Sync,
    ) -> Result<Self> {
        let count: Vec<AtomicU32> = alloc::zeroed(n, "the adjacency lists' counts")?;
        // On one thread nothing runs beside this loop, so a plain load and store do
        // what a read-modify-write does, at a fraction of its cost.
        let alone = rayon::current_num_threads() == 1;
        // Returns the value before; `delta` wraps, so `u32::MAX` counts down by one.
        let add = |counter: &AtomicU32, delta: u32| {
            if alone {
                let value = counter.load(Relaxed);
                counter.store(value.wrapping_add(delta), Relaxed);
                value
            } else {
                counter.fetch_add(delta, Relaxed)
            }
        };
        (0..items).into_par_iter().for_each(|item| {
            visit(item, &mut |vertex, _| {
                add(&count[vertex as usize], 1);
            })
        });
        let mut offsets = alloc::with_capacity(n + 1, "the adjacency lists' offsets")?;
        let mut total = 0usize;
        offsets.push(0);
        for c in &count {
            total += c.load(Relaxed) as usize;
            offsets.push(total);
        }
        let mut entries: Vec<E> = alloc::zeroed(total, "the adjacency lists' entries")?;
        let out = Destination(entries.as_mut_ptr());
        let out = &out;
        (0..items).into_par_iter().for_each(|item| {
            visit(item, &mut |vertex, entry| {
                // Counting down from the vertex's count gives every entry its own slot
                // inside the vertex's range (in no particular order: every use picks
                // entries by their unique priority).
                let left = add(&count[vertex as usize], u32::MAX) as usize;
                // SAFETY: `offsets[vertex] + left - 1` is unique (countdown within the
                // vertex's range, atomic unless one thread runs) and below `total`,
                // the array's length; nothing reads `entries` until every write is done.
                unsafe { out.write(offsets[vertex as usize] + left - 1, entry) };
            })
        });
        Ok(Grouped { offsets, entries })
    }

    pub fn num_vertices(&self) -> usize {
        self.offsets.len() - 1
    }

    pub fn of(&self, x: usize) -> &[E] {
        &self.entries[self.offsets[x]..self.offsets[x + 1]]
    }
}

impl Adjacency {
    /// Both directions of every edge `e` with `u[e] != v[e]`, over `n` vertices.
    pub fn of_edges(n: usize, u: &[u32], v: &[u32]) -> Result<Self> {
        Self::build(n, u.len(), |e, emit| {
            if u[e] != v[e] {
                emit(u[e], (v[e], e as u32));
                emit(v[e], (u[e], e as u32));
            }
        })
    }

    /// Keeps, for each (vertex, target) pair, only the entry of smallest priority.
    /// Works on groups of vertices in parallel (no per-vertex bookkeeping beyond the
    /// kept counts), then closes the gaps in place.
    pub fn merge_parallel_edges<P: Priority>(mut self, priority: &[P]) -> Result<Self> {
        const GROUP: usize = 4096;
        let n = self.num_vertices();
        let mut groups = alloc::with_capacity(n.div_ceil(GROUP), "the adjacency lists' groups")?;
        let mut rest = &mut self.entries[..];
        for first in (0..n).step_by(GROUP) {
            let last = (first + GROUP).min(n);
            let (group, tail) = rest.split_at_mut(self.offsets[last] - self.offsets[first]);
            groups.push((first, last, group));
            rest = tail;
        }
        let offsets = &self.offsets;
        // Per vertex, how many entries it keeps (groups and chunks line up: both GROUP).
        let mut kept: Vec<u32> = alloc::zeroed(n, "the adjacency lists' kept counts")?;
        groups
            .into_par_iter()
            .zip(kept.par_chunks_mut(GROUP))
            .for_each(|((first, last, group), kept)| {
                let base = offsets[first];
                for x in first..last {
                    let segment = &mut group[offsets[x] - base..offsets[x + 1] - base];
                    segment.sort_unstable_by_key(|&(t, e)| (t, priority[e as usize]));
                    let mut count = 0;
                    for i in 0..segment.len() {
                        if i == 0 || segment[i].0 != segment[i - 1].0 {
                            segment[count] = segment[i];
                            count += 1;
                        }
                    }
                    kept[x - first] = count as u32;
                }
            });
        // Close the gaps, front to back, rewriting the offsets as we go.
        let mut write = 0;
        for (x, &k) in kept.iter().enumerate() {
            let (start, k) = (self.offsets[x], k as usize);
            self.entries.copy_within(start..start + k, write);
            self.offsets[x] = write;
            write += k;
        }
        self.offsets[n] = write;
        self.entries.truncate(write);
        Ok(self)
    }
}
