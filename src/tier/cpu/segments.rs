//! How a scan is cut into segments: not at all, by head flags, or by CSR offsets.
//!
//! The scan driver only asks one question of a segmentation: split an index range into
//! runs that each lie inside one segment, and say which runs begin a segment.

/// A way of splitting `0..n` into segments.
pub(crate) trait Segmentation: Sync {
    /// Calls `f(start, end, begins_segment)` for consecutive runs covering `start..end`,
    /// each inside one segment. A run that begins a segment resets the running value.
    fn runs(&self, start: usize, end: usize, f: impl FnMut(usize, usize, bool));
}

/// One segment covering everything.
pub(crate) struct Unsegmented;

impl Segmentation for Unsegmented {
    #[inline]
    fn runs(&self, start: usize, end: usize, mut f: impl FnMut(usize, usize, bool)) {
        if start < end {
            f(start, end, start == 0);
        }
    }
}

/// `flags[i] != 0` starts a new segment at `i`; index 0 always starts one.
pub(crate) struct HeadFlags<'a>(pub &'a [u8]);

impl Segmentation for HeadFlags<'_> {
    fn runs(&self, start: usize, end: usize, mut f: impl FnMut(usize, usize, bool)) {
        let flags = self.0;
        let mut run_start = start;
        while run_start < end {
            let next_head = flags[run_start + 1..end]
                .iter()
                .position(|&flag| flag != 0)
                .map_or(end, |offset| run_start + 1 + offset);
            f(
                run_start,
                next_head,
                run_start == 0 || flags[run_start] != 0,
            );
            run_start = next_head;
        }
    }
}

/// Segment `s` covers `offsets[s]..offsets[s + 1]` (validated: starts at 0, monotone, ends at n).
pub(crate) struct Offsets<'a>(pub &'a [u64]);

impl Segmentation for Offsets<'_> {
    fn runs(&self, start: usize, end: usize, mut f: impl FnMut(usize, usize, bool)) {
        let offsets = self.0;
        // First offset strictly beyond `start`: the end of the segment holding `start`.
        let mut next = offsets.partition_point(|&o| o as usize <= start);
        let mut run_start = start;
        let mut begins = start == 0 || offsets[..next].last().is_some_and(|&o| o as usize == start);
        while run_start < end {
            let segment_end = offsets.get(next).map_or(end, |&o| (o as usize).min(end));
            f(run_start, segment_end, begins);
            run_start = segment_end;
            begins = true;
            // Skip empty segments that share this boundary.
            while next < offsets.len() && offsets[next] as usize <= run_start {
                next += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(seg: &impl Segmentation, start: usize, end: usize) -> Vec<(usize, usize, bool)> {
        let mut runs = Vec::new();
        seg.runs(start, end, |a, b, h| runs.push((a, b, h)));
        runs
    }

    #[test]
    fn flags_split_at_heads() {
        let flags = [1, 0, 1, 1, 0, 0, 1];
        assert_eq!(
            collect(&HeadFlags(&flags), 0, 7),
            vec![(0, 2, true), (2, 3, true), (3, 6, true), (6, 7, true)]
        );
        assert_eq!(
            collect(&HeadFlags(&flags), 4, 7),
            vec![(4, 6, false), (6, 7, true)]
        );
        let none = [0u8; 4];
        assert_eq!(collect(&HeadFlags(&none), 0, 4), vec![(0, 4, true)]);
    }

    #[test]
    fn offsets_skip_empty_segments() {
        let offsets = [0, 0, 3, 3, 3, 5, 8];
        assert_eq!(
            collect(&Offsets(&offsets), 0, 8),
            vec![(0, 3, true), (3, 5, true), (5, 8, true)]
        );
        assert_eq!(
            collect(&Offsets(&offsets), 1, 4),
            vec![(1, 3, false), (3, 4, true)]
        );
        assert_eq!(collect(&Offsets(&offsets), 6, 8), vec![(6, 8, false)]);
        assert_eq!(collect(&Offsets(&offsets), 3, 3), vec![]);
    }
}
