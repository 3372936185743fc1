//! Borůvka rounds over filter-Kruskal's light edges, run by a team (the pool's threads
//! at once, in step, `tier::cpu::team`): each tree's lightest light edge out of
//! it is an MSF edge, so all trees join along theirs at once, and the edges now inside
//! one tree drop out. At least half the trees with light edges join each round.
//!
//! A round is four phases between barriers: offers (each edge to both its trees'
//! cells, which keep the lightest), hooks (each tree picks the tree across its
//! lightest edge), links (the hooks applied), and shortcuts with the filter (hooked
//! trees pointed at their roots, the edges inside one tree dropped). A road graph
//! takes about five rounds; as rayon passes (one per phase and more) each cost a wake
//! of the pool, much of a road graph's time at 16 threads.
//!
//! The edges are cut into blocks (about eight per member), which members claim one at
//! a time in the offers and the filters, so that a member on a slower core takes fewer
//! (cores of a virtual machine do not all run at one speed). After the first round a
//! block holds the edges of its part of the input that still join two trees, with
//! those trees, in order. An edge's index is its block's start plus its place in the
//! block, so indices grow with positions and break ties between equal weights as
//! positions do. The trees a member's offers listed are its own for the hooks, links
//! and shortcuts.

use std::cell::UnsafeCell;
use std::ops::Range;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

use super::live::Live;
use super::prepare::Priority;
use super::reserving_kruskal::Linked;
use super::union_find::{find_halving, find_shared, hook, point_at_root};
use crate::tier::cpu::team::{self, Member};
use crate::{alloc, kept, Result};

/// The rounds stop when fewer light edges than this are left (sorting and linking the
/// rest on one thread is then cheaper than another round).
pub(crate) const ROUNDS_DOWN_TO: usize = 1 << 13;

/// About how long the rounds take per light edge on one thread, which sets how long
/// the team waits for late threads (the benchmarks' VM, 16 members: NY's 365K edges in
/// 4.3 ms, 190 ns an edge; a 2048² grid's 8.4M in 74 ms, 140 ns).
const LIGHT_EDGE_NS: u64 = 150;

/// Blocks per thread: enough that members on faster cores can take more of them.
const BLOCKS_PER_THREAD: usize = 8;
/// Fewer edges per block would cost more in claims than they balance.
const MIN_BLOCK: usize = 1 << 10;
/// Elements a member handles between checks that its buffers have room.
const STEP: usize = 1 << 12;

/// Borůvka rounds over `light` (in position order) while at least [`ROUNDS_DOWN_TO`]
/// of its edges join two trees; adds the rounds' MSF edges to `forest` and returns the
/// light edges left, in order. `parents` are the trees so far (nothing else links them
/// meanwhile). `light` is read only until the first round's filter (the blocks hold
/// the edges after it).
pub(crate) fn boruvka_rounds<P: Priority>(
    light: &Live<'_, P>,
    u: &[u32],
    v: &[u32],
    parents: &[AtomicU32],
    forest: &mut Vec<usize>,
) -> Result<Vec<P>> {
    let least: Vec<P::Least> = kept::zeroed(parents.len(), "each tree's lightest edge")?;
    let threads = rayon::current_num_threads().max(1);
    let block_len = light
        .len()
        .div_ceil(threads * BLOCKS_PER_THREAD)
        .max(MIN_BLOCK);
    let blocks: Vec<Block<P>> = (0..light.len().div_ceil(block_len))
        .map(|_| Block::default())
        .collect();
    let hooks_made: Vec<AtomicUsize> = (0..threads).map(|_| AtomicUsize::new(0)).collect();
    let room = forest.spare_capacity_mut();
    let rounds = Rounds {
        light,
        u,
        v,
        parents,
        least: &least,
        block_len,
        blocks: &blocks,
        tickets: AtomicUsize::new(0),
        hooks_made: &hooks_made,
        room: Room {
            at: room.as_mut_ptr().cast(),
            len: room.len(),
        },
    };
    let work = Duration::from_nanos(light.len() as u64 * LIGHT_EDGE_NS);
    let outcomes = team::run(work, |me| rounds.member(me));
    let mut joined = 0;
    for outcome in outcomes {
        // Every member that did not fail counts every edge written.
        joined = outcome?;
    }
    // Every round's shortcuts emptied the cells its offers filled.
    debug_assert!(least.iter().all(|c| c.least().is_none()));
    kept::keep_zeroed(least);
    // SAFETY: the members wrote the first `joined` slots of the room (each round's
    // hooks at their own offsets, `Rounds::join`), and the room is the forest's
    // capacity past its length.
    unsafe { forest.set_len(forest.len() + joined) };
    let left: usize = blocks.iter().map(|b| b.len.load(Relaxed)).sum();
    let mut rest = alloc::with_capacity(left, "the light edges")?;
    for block in blocks {
        rest.extend(block.edges.into_inner().iter().map(|l| l.0));
    }
    Ok(rest)
}

/// What the members share.
struct Rounds<'a, P: Priority> {
    light: &'a Live<'a, P>,
    u: &'a [u32],
    v: &'a [u32],
    parents: &'a [AtomicU32],
    least: &'a [P::Least],
    /// Light edges per block (the last may have fewer).
    block_len: usize,
    blocks: &'a [Block<P>],
    /// Claims on blocks, phase after phase (see [`Rounds::claims`]).
    tickets: AtomicUsize,
    /// How many hooks each member made in the round.
    hooks_made: &'a [AtomicUsize],
    /// Where the rounds' MSF edges go.
    room: Room,
}

/// A block's edges after the first round, and how many (readable at any time).
struct Block<P> {
    edges: UnsafeCell<Vec<Linked<P>>>,
    len: AtomicUsize,
}

impl<P> Default for Block<P> {
    fn default() -> Self {
        Block {
            edges: UnsafeCell::new(Vec::new()),
            len: AtomicUsize::new(0),
        }
    }
}

// SAFETY: a block's edges are replaced or filtered only in a filter phase, by the one
// member that claimed the block there, and read only in the other phases; a barrier
// separates every filter phase from the phases around it (`Rounds::member`).
unsafe impl<P: Send + Sync> Sync for Block<P> {}

impl<P> Block<P> {
    /// # Safety
    /// No member changes this block meanwhile (not a filter phase).
    unsafe fn edges(&self) -> &[Linked<P>] {
        // SAFETY: no writer meanwhile (the caller's contract).
        unsafe { &*self.edges.get() }
    }

    /// # Safety
    /// The caller claimed this block in the current filter phase: nobody else reads or
    /// writes it meanwhile.
    #[allow(clippy::mut_from_ref)]
    unsafe fn edges_mut(&self) -> &mut Vec<Linked<P>> {
        // SAFETY: exclusive for the phase (the caller's contract).
        unsafe { &mut *self.edges.get() }
    }
}

/// The forest's room past its edges, where the members write each round's MSF edges
/// side by side.
struct Room {
    at: *mut usize,
    len: usize,
}

// SAFETY: the members write disjoint slots (`Room::write`'s contract), and nothing reads
// the room until the team has ended.
unsafe impl Sync for Room {}

impl Room {
    /// Writes slot `i`.
    ///
    /// # Safety
    /// No other thread writes or reads slot `i` meanwhile.
    unsafe fn write(&self, i: usize, position: usize) {
        assert!(i < self.len, "the forest has room for every tree's join");
        // SAFETY: in bounds (checked), and the caller has the slot to itself.
        unsafe { self.at.add(i).write(position) }
    }
}

impl<P: Priority> Rounds<'_, P> {
    /// The blocks this member claims in the team's `phase`-th claiming phase (counting
    /// from 0): each block goes to exactly one member. Every member runs every claiming
    /// phase, in the same order, to the end: each then draws one ticket past the blocks,
    /// so phase `k` starts at ticket `k * (blocks + members)`. (Phase 0 asks no size:
    /// members start it as they join, before the team has formed.)
    fn claims<'s>(&'s self, me: &Member<'_>, phase: usize) -> impl Iterator<Item = usize> + 's {
        let count = self.blocks.len();
        let first = if phase == 0 {
            0
        } else {
            phase * (count + me.size())
        };
        std::iter::from_fn(move || {
            let block = self.tickets.fetch_add(1, Relaxed).wrapping_sub(first);
            (block < count).then_some(block)
        })
    }

    /// Block `b`'s range of light edges.
    fn light_range(&self, b: usize) -> Range<usize> {
        let start = b * self.block_len;
        start..(start + self.block_len).min(self.light.len())
    }

    /// One member's part of every round: how many MSF edges the team wrote (the
    /// failing member returns its error; the others stop with it).
    fn member(&self, me: &Member<'_>) -> Result<usize> {
        let mut joined = 0;
        let mut phase = 0;
        let (parents, u, v, light) = (self.parents, self.u, self.v, self.light);
        // The first round looks each edge's trees up (halving paths: nothing links
        // during a phase).
        let trees = |p: P| {
            let e = p.position();
            (find_halving(parents, u[e]), find_halving(parents, v[e]))
        };
        let priority = |i: usize| light.at(i);
        let edge = |i: usize| {
            let p = light.at(i);
            let (a, b) = trees(p);
            (p, a, b)
        };
        let mine = self.claims(me, phase).map(|b| self.light_range(b));
        phase += 1;
        let Some((active, hooks)) = self.choose(me, mine, priority, edge)? else {
            return Ok(joined);
        };
        self.join(me, &active, &hooks, |i| light.position(i), &mut joined);
        drop((active, hooks));
        // The edges still joining two trees, with their trees, become the blocks.
        let mut kept = Ok(());
        for b in self.claims(me, phase) {
            if kept.is_ok() {
                kept = self.first_filter(b, trees);
            }
        }
        phase += 1;
        if !me.agree(kept.is_ok()) {
            return kept.map(|_| joined);
        }
        loop {
            let left: usize = self.blocks.iter().map(|b| b.len.load(Relaxed)).sum();
            if left < ROUNDS_DOWN_TO {
                return Ok(joined);
            }
            let at = |i: usize| {
                let block = &self.blocks[i / self.block_len];
                // SAFETY: not a filter phase (offers and hooks).
                let edges = unsafe { block.edges() };
                edges[i % self.block_len]
            };
            let mine = self.claims(me, phase).map(|b| {
                let start = b * self.block_len;
                start..start + self.blocks[b].len.load(Relaxed)
            });
            phase += 1;
            let Some((active, hooks)) = self.choose(me, mine, |i| at(i).0, at)? else {
                return Ok(joined);
            };
            self.join(me, &active, &hooks, |i| at(i).0.position(), &mut joined);
            // Every tree of the round's start now points straight at its root: one
            // step relabels an edge's ends. The filter phase starts after `join`'s
            // barriers, so no member still reads the blocks.
            for b in self.claims(me, phase) {
                let block = &self.blocks[b];
                // SAFETY: claimed by this member in this filter phase.
                let edges = unsafe { block.edges_mut() };
                edges.retain_mut(|(_, a, b)| {
                    (*a, *b) = (find_shared(parents, *a), find_shared(parents, *b));
                    a != b
                });
                block.len.store(edges.len(), Relaxed);
            }
            phase += 1;
            me.sync();
        }
    }

    /// The choosing half of a round over `mine`, the index ranges this member claims,
    /// `priority(i)` any edge's priority and `edge(i)` any edge's priority and trees:
    /// each tree's cell gets its lightest edge (offers), and each tree with an edge
    /// picks the tree it joins (hooks). Returns the trees this member listed and its
    /// hooks, or `None` when a member failed (this one's error is returned).
    #[allow(clippy::type_complexity)]
    fn choose(
        &self,
        me: &Member<'_>,
        mine: impl Iterator<Item = Range<usize>>,
        priority: impl Fn(usize) -> P,
        edge: impl Fn(usize) -> Linked<P>,
    ) -> Result<Option<(Vec<u32>, Vec<Hook>)>> {
        let least = self.least;
        // Offers. The trees with an edge are listed once each, by the offer that found
        // their cell empty. Every claim is drawn, even after a failure (see `claims`).
        let mut active: Vec<u32> = Vec::new();
        let mut offered = Ok(());
        for step in mine.flat_map(steps) {
            if offered.is_err() {
                continue;
            }
            offered = alloc::reserve(&mut active, 2 * step.len(), "the trees with light edges");
            if offered.is_err() {
                continue;
            }
            for i in step {
                let (p, a, b) = edge(i);
                // Self-loops and edges inside one tree join nothing.
                if a != b {
                    if least[a as usize].offer(i, p, &priority) {
                        active.push(a);
                    }
                    if least[b as usize].offer(i, p, &priority) {
                        active.push(b);
                    }
                }
            }
        }
        let hooks = offered.and_then(|()| alloc::with_capacity(active.len(), "the joins"));
        if !me.agree(hooks.is_ok()) {
            return hooks.map(|_| None);
        }
        let mut hooks: Vec<Hook> = hooks?;
        // Hooks. Two trees that chose the same edge would join each other: the larger
        // joins the smaller, and the edge counts once. With unique priorities no other
        // cycle can form.
        for &t in &active {
            let i = least[t as usize]
                .least()
                .expect("an active tree has an edge");
            let (_, a, b) = edge(i);
            let joins = if a == t { b } else { a };
            if t > joins || least[joins as usize].least() != Some(i) {
                hooks.push((t, joins));
            }
        }
        Ok(Some((active, hooks)))
    }

    /// The joining half of a round, once every member has chosen: the hooks applied
    /// and their edges written to the room after the `joined` edges of earlier rounds
    /// (each member after those of the members before it), then, once every hook is in
    /// place, the round's cells emptied and every hooked tree (no longer a root)
    /// pointed straight at its new root, so that lookups from its vertices and edges
    /// take one step. A hooked tree's edge is the one its cell still holds, edge `i`
    /// at `position(i)`.
    fn join(
        &self,
        me: &Member<'_>,
        active: &[u32],
        hooks: &[Hook],
        position: impl Fn(usize) -> usize,
        joined: &mut usize,
    ) {
        self.hooks_made[me.index()].store(hooks.len(), Relaxed);
        // No lookup may see a half-hooked round, and every member's count is in.
        me.sync();
        let made = |k: usize| self.hooks_made[k].load(Relaxed);
        let first = *joined + (0..me.index()).map(made).sum::<usize>();
        *joined += (0..me.size()).map(made).sum::<usize>();
        for (slot, &(t, joins)) in (first..).zip(hooks) {
            hook(self.parents, t, joins);
            let i = self.least[t as usize]
                .least()
                .expect("a hooked tree has an edge");
            // SAFETY: this member's slots follow the earlier rounds' and this round's
            // earlier members' edges, and end where the next member's start.
            unsafe { self.room.write(slot, position(i)) };
        }
        me.sync();
        for &t in active {
            self.least[t as usize].clear();
            point_at_root(self.parents, t);
        }
    }

    /// Block `b` after the first round: the edges of its range still joining two
    /// trees, with their trees, exactly as many as it holds. Called by the member that
    /// claimed `b` in the first filter phase.
    fn first_filter(&self, b: usize, trees: impl Fn(P) -> (u32, u32)) -> Result<()> {
        let range = self.light_range(b);
        let at = |i: usize| self.light.at(range.start + i);
        let list = alloc::filter_indices(
            range.len(),
            "the light edges",
            |i| {
                let (a, b) = trees(at(i));
                a != b
            },
            |i| {
                let p = at(i);
                let (a, b) = trees(p);
                (p, a, b)
            },
        )?;
        let block = &self.blocks[b];
        block.len.store(list.len(), Relaxed);
        // SAFETY: claimed by this member in the first filter phase.
        *unsafe { block.edges_mut() } = list;
        Ok(())
    }
}

/// A tree and the tree it joins (along the edge in its cell: storing the edge here too
/// would double the largest array of a road graph's rounds).
type Hook = (u32, u32);

/// `range` in pieces of at most [`STEP`].
fn steps(range: Range<usize>) -> impl Iterator<Item = Range<usize>> {
    range
        .clone()
        .step_by(STEP)
        .map(move |start| start..(start + STEP).min(range.end))
}

/// A cell that keeps the lightest of the edges offered to it (Borůvka's per-tree
/// minimum) while many threads offer at once. All-zero memory is an empty cell.
/// Edges are offered by index with their priority (`priority(i)` gives any edge's);
/// indices must grow with the edges' positions (so that they break ties as positions
/// do).
pub(crate) trait LeastCell<P>: alloc::Zeroable + Send + Sync {
    /// Offers edge `i`, of priority `p`; true when the cell was empty before.
    fn offer(&self, i: usize, p: P, priority: impl Fn(usize) -> P) -> bool;
    /// The index of the lightest edge offered, if any.
    fn least(&self) -> Option<usize>;
    fn clear(&self);
}

/// For 64-bit priorities (fewer than 2^32 edges): the complement of the least
/// priority with the edge's index in place of its position (0 = empty, as no priority
/// is `u64::MAX`), so the least priority is an atomic maximum and names its index.
pub(crate) struct LeastPriority(AtomicU64);

/// For wider priorities: 1 + the index of the least edge (0 = empty).
pub(crate) struct LeastIndex(AtomicU64);

// SAFETY: both are one atomic integer, for which all-zero bytes are a valid value.
unsafe impl alloc::Zeroable for LeastPriority {}
// SAFETY: as above.
unsafe impl alloc::Zeroable for LeastIndex {}

impl LeastCell<u64> for LeastPriority {
    #[inline]
    fn offer(&self, i: usize, p: u64, _: impl Fn(usize) -> u64) -> bool {
        let mine = !((p & !0xFFFF_FFFF) | i as u64);
        // Most offers lose against a lighter edge already there and write nothing.
        self.0.load(Relaxed) < mine && self.0.fetch_max(mine, Relaxed) == 0
    }
    #[inline]
    fn least(&self) -> Option<usize> {
        let held = self.0.load(Relaxed);
        (held != 0).then_some((!held & 0xFFFF_FFFF) as usize)
    }
    fn clear(&self) {
        self.0.store(0, Relaxed)
    }
}

impl<P: Priority> LeastCell<P> for LeastIndex {
    #[inline]
    fn offer(&self, i: usize, offered: P, priority: impl Fn(usize) -> P) -> bool {
        let mine = i as u64 + 1;
        let mut current = self.0.load(Relaxed);
        while current == 0 || priority(current as usize - 1) > offered {
            match self
                .0
                .compare_exchange_weak(current, mine, Relaxed, Relaxed)
            {
                Ok(_) => return current == 0,
                Err(seen) => current = seen,
            }
        }
        false
    }
    #[inline]
    fn least(&self) -> Option<usize> {
        let held = self.0.load(Relaxed);
        (held != 0).then(|| held as usize - 1)
    }
    fn clear(&self) {
        self.0.store(0, Relaxed)
    }
}
