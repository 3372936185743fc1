//! The live edges of a round of `auto`: every edge at first, each priority computed
//! from the caller's weights when it is looked at, then the edges a round kept.

use rayon::prelude::*;

use super::prepare::{Priority, PrioritySource};
use crate::{alloc, Result};

/// The live edges of a round with their priorities.
pub(crate) enum Live<'a, P> {
    /// Every edge, each priority computed when looked at. Stored, the priorities of a
    /// dense graph would be the largest array of the call, written once to be read
    /// twice (by the split and by the heavy filter).
    Every {
        len: usize,
        source: PrioritySource<'a>,
    },
    /// The edges that survived a round.
    Listed(Vec<P>),
}

impl<P: Priority> Live<'_, P> {
    pub(crate) fn len(&self) -> usize {
        match self {
            Live::Every { len, .. } => *len,
            Live::Listed(edges) => edges.len(),
        }
    }

    #[inline]
    pub(crate) fn at(&self, i: usize) -> P {
        match self {
            Live::Every { source, .. } => source.at(i),
            Live::Listed(edges) => edges[i],
        }
    }

    /// The priorities that satisfy `keep`, in order (`keep` runs once per edge: the
    /// heavy filter's looks up both ends' trees).
    /// The position of edge `i` (without computing its priority).
    #[inline]
    pub(crate) fn position(&self, i: usize) -> usize {
        match self {
            Live::Every { .. } => i,
            Live::Listed(edges) => edges[i].position(),
        }
    }

    pub(crate) fn filter(&self, keep: impl Fn(P) -> bool + Sync) -> Result<Vec<P>> {
        const WHAT: &str = "the live edges";
        match self {
            Live::Every { len, source } => {
                alloc::par_filter_indices(*len, WHAT, |i| keep(source.at(i)), |i| source.at(i))
            }
            Live::Listed(edges) => {
                alloc::par_filter_indices(edges.len(), WHAT, |i| keep(edges[i]), |i| edges[i])
            }
        }
    }

    pub(crate) fn into_listed(self) -> Result<Vec<P>> {
        match self {
            Live::Every { len, source } => alloc::par_collect(
                (0..len).into_par_iter().map(|i| source.at(i)),
                "the live edges",
            ),
            Live::Listed(edges) => Ok(edges),
        }
    }
}
