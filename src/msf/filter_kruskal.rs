//! `auto` on the CPU: filter-Kruskal's partitioning (Osipov, Sanders and Singler's
//! idea), with the light part linked in parallel where threads are many.
//!
//! Rather than looking at every edge, each round picks a pivot priority (from a sample)
//! below which about as many edges lie as the forest can still take, and takes the MSF
//! edges among the light part: every light edge is lighter than every edge left, so
//! those are exactly the edges Kruskal would take from it. They are found by one of
//! three methods ([`light_link`]): sorting and linking in order on one thread (least
//! work), sorting and linking by windows of deterministic reservations on every thread
//! (`reserving_kruskal`), or Borůvka rounds with no sort (each tree's lightest light
//! edge out of it is an MSF edge, so all trees join along theirs at once, and the light
//! edges now inside one tree drop out). The heavy part is then filtered in parallel: an
//! edge whose ends are already in one tree can never join the forest. What survives is
//! the next round's input. On most graphs one or two rounds see every useful edge and
//! most edges are never looked at twice.

use rayon::prelude::*;

use super::light_boruvka;
use super::live::Live;
use super::prepare::{Priority, PrioritySource};
use super::radix::sort_by_weight;
use super::reserving_kruskal::kruskal_reserving;
use super::union_find::{find_shared, UnionFind};
use crate::{alloc, profile, Result};

/// Live edge sets at most this large are simply sorted whole.
const SORT_WHOLE: usize = 1 << 17;
/// Sorted edges checked per parallel pre-filter block in the Kruskal pass.
const BLOCK: usize = 1 << 14;

/// The positions of the forest's edges, for `source` the priorities of the edges.
/// (`source` is one type for every weight type: generic over a closure, this function
/// and all it inlines were compiled once per weight type, 1 MB of library.)
pub(crate) fn filter_kruskal<P: Priority>(
    num_vertices: usize,
    u: &[u32],
    v: &[u32],
    source: PrioritySource<'_>,
) -> Result<Vec<usize>> {
    let mut sets = UnionFind::new(num_vertices, u.len())?;
    // At most n - 1 edges: pushes below never grow it.
    let mut forest = super::new_forest(num_vertices, u.len())?;
    let wanted = num_vertices.saturating_sub(1);
    let mut live = Live::Every {
        len: u.len(),
        source,
    };
    let mut round = 0u64;
    while live.len() > 0 && forest.len() < wanted {
        // The light part: everything when small, else the edges at or below a pivot.
        // Aim for twice as many light edges as the forest still lacks.
        let target = (2 * (wanted - forest.len())).max(SORT_WHOLE);
        let pivot = if target >= live.len() {
            P::NONE
        } else {
            sample_pivot(&live, target, round)
        };
        if pivot == P::NONE {
            let all = live.len();
            light_msf(live, all, u, v, &mut sets, &mut forest)?;
            break;
        }
        let light = profile::span("auto: split off the light edges", || {
            live.filter(|p| p <= pivot)
        })?;
        light_msf(
            Live::Listed(light),
            live.len(),
            u,
            v,
            &mut sets,
            &mut forest,
        )?;
        // The heavy part, less every edge that now lies inside one tree.
        live = Live::Listed(profile::span("auto: filter the heavy edges", || {
            let roots = sets.flatten()?;
            live.filter(|p| {
                let e = p.position();
                p > pivot && roots[u[e] as usize] != roots[v[e] as usize]
            })
        })?);
        round += 1;
    }
    Ok(forest)
}

/// Light edge sets smaller than this are sorted and linked in order: parallel rounds
/// would cost more than the sort.
const LINK_SORTED_BELOW: usize = light_boruvka::ROUNDS_DOWN_TO;

/// How the MSF edges among a light part are found.
#[derive(Debug, PartialEq, Eq)]
enum LightLink {
    /// Sorted, then linked in order by one thread (with a parallel pre-filter): the
    /// least work in total, so the choice on few threads.
    Sorted,
    /// Sorted, then linked by windows of deterministic reservations on every thread.
    Reserving,
    /// Parallel Borůvka rounds, with no sort.
    Boruvka,
}

/// The light link for this call's threads, from the crossovers measured with
/// `benches/cpu/cpu_vs_pbbs.sh` on a 16-core Xeon (docs/performance-log.md). A sparse
/// graph's edges are all light at once (road networks, grids): there Borůvka's rounds
/// win from 4 threads, and beat reservations (whose sort they avoid). On a dense
/// graph's light part (random, RMAT) Borůvka visits each edge once per round, about
/// ten times, and reservations win from 8 threads.
fn light_link(light_len: usize, all_edges_light: bool) -> LightLink {
    let threads = rayon::current_num_threads();
    if light_len < LINK_SORTED_BELOW {
        LightLink::Sorted
    } else if all_edges_light && threads >= 4 {
        LightLink::Boruvka
    } else if !all_edges_light && threads >= 8 {
        LightLink::Reserving
    } else {
        LightLink::Sorted
    }
}

/// Adds to `forest` the MSF edges among `light`, given the trees in `sets`, where every
/// edge of `light` is lighter than every live edge outside it (so these are the edges
/// Kruskal would take from it), by the [`light_link`] for `light` among `live_len`
/// live edges.
fn light_msf<P: Priority>(
    light: Live<'_, P>,
    live_len: usize,
    u: &[u32],
    v: &[u32],
    sets: &mut UnionFind,
    forest: &mut Vec<usize>,
) -> Result<()> {
    match light_link(light.len(), light.len() == live_len) {
        LightLink::Sorted => profile::span("auto: sort and link", || {
            kruskal_sorted(light.into_listed()?, u, v, sets, forest)
        }),
        LightLink::Reserving => {
            let mut light = light.into_listed()?;
            profile::span("auto: sort", || sort_by_weight(&mut light))?;
            profile::span("auto: link by reservations", || {
                kruskal_reserving(&light, u, v, sets, forest)
            })
        }
        LightLink::Boruvka => {
            // The rounds read the priorities where they are: every edge's computed
            // from the weights, never stored (a list of them would be the largest
            // array of a sparse graph's call).
            let rest = profile::span("auto: Borůvka rounds", || {
                light_boruvka::boruvka_rounds(&light, u, v, sets.parents(), forest)
            })?;
            drop(light);
            profile::span("auto: sort and link", || {
                kruskal_sorted(rest, u, v, sets, forest)
            })
        }
    }
}

/// Sorts `edges` and adds each that joins two trees. Blocks of sorted edges are
/// pre-filtered (edges already inside one tree dropped) on other threads while this
/// one links the survivors of the previous block, so the sequential unions only see
/// candidates and overlap the lookups of the next block.
fn kruskal_sorted<P: Priority>(
    mut edges: Vec<P>,
    u: &[u32],
    v: &[u32],
    sets: &mut UnionFind,
    forest: &mut Vec<usize>,
) -> Result<()> {
    if edges.len() <= BLOCK {
        // One block: no pipeline to overlap, and waking the pool for the pre-filter and
        // the sort's passes costs more than this whole call on one thread. Priorities
        // are unique, so an unstable sort gives their (weight, position) order.
        edges.sort_unstable();
        for p in edges {
            let e = p.position();
            if sets.union(u[e], v[e]) {
                forest.push(e);
            }
        }
        return Ok(());
    }
    sort_by_weight(&mut edges)?;
    let (parents, mut linker) = sets.split();
    // The survivors of a block; room for all of it is made first (blocks are small).
    let crossing = |block: &[P]| -> Result<Vec<usize>> {
        let mut out = alloc::with_capacity(block.len(), "a block of sorted edges")?;
        out.par_extend(block.par_iter().with_min_len(1024).filter_map(|p| {
            let e = p.position();
            (find_shared(parents, u[e]) != find_shared(parents, v[e])).then_some(e)
        }));
        Ok(out)
    };
    let mut blocks = edges.chunks(BLOCK);
    let mut candidates = blocks.next().map(crossing).transpose()?.unwrap_or_default();
    loop {
        let next = blocks.next();
        let link_all = |linker: &mut super::union_find::Linker<'_>, forest: &mut Vec<usize>| {
            for &e in &candidates {
                if linker.union(u[e], v[e]) {
                    forest.push(e);
                }
            }
        };
        match next {
            Some(block) => {
                let ((), following) =
                    rayon::join(|| link_all(&mut linker, forest), || crossing(block));
                candidates = following?;
            }
            None => {
                link_all(&mut linker, forest);
                break;
            }
        }
    }
    Ok(())
}

/// A priority with about `target` of `live` at or below it, estimated from a sample.
fn sample_pivot<P: Priority>(live: &Live<'_, P>, target: usize, round: u64) -> P {
    const SAMPLES: usize = 4096;
    let mut state = 0x9E37_79B9_7F4A_7C15u64 ^ round.wrapping_mul(0xD1B5_4A32_D192_ED03);
    let mut sample: Vec<P> = (0..SAMPLES)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            live.at((state % live.len() as u64) as usize)
        })
        .collect();
    sample.sort_unstable();
    let rank = ((target as f64 / live.len() as f64) * SAMPLES as f64) as usize;
    sample[rank.min(SAMPLES - 1)]
}
