//! Scans and arg-reductions on a GPU tier (kernels in `kernels/opencl/primitives.cl`,
//! built for CUDA through `kernels/cuda/primitives.cu`), on resident buffers and from
//! host slices.

use super::{Arg, Device, DeviceBuffer, Gpu, ProgramKind};
use crate::context::Segments;
use crate::types::{Element, Extreme, ScanKind, ScanOp, EMPTY_SEGMENT};
use crate::{alloc, Result};

/// Segmented arg-reductions: segments at least this long on average get 4 to 32
/// work-items each (`segmented_arg_lanes`), shorter ones a work-item each.
pub(super) const ITEMS_PER_SEGMENT_FOR_LANES: usize = 64;
/// Segments at least this long on average get a work-group each.
const ITEMS_PER_SEGMENT_FOR_GROUPS: usize = 2048;
/// The most work-items per segment in `segmented_arg_lanes` (a warp on NVIDIA, where
/// they reduce by shuffles).
const MAX_LANES: usize = 32;
/// Elements each lane of `segmented_arg_lanes` should fold (four batches of ARG_UNROLL
/// loads in primitives.cl): on the H200, segments of 256 took 0.41 ms with 16 lanes of
/// 16 and 0.36 ms with 8 lanes of 32, against 0.54 ms with 32 lanes of 8.
pub(super) const ITEMS_PER_LANE: usize = 32;
/// `arg_partial` launches about this many times the groups a device holds at once, so
/// that a kernel holding fewer groups per unit than `groups_per_unit` does not leave a
/// nearly empty second wave. (On the H200 a 34-register variant fit 7 groups per SM, not
/// 8, and took 0.35 ms for 2^28 u32 in one wave of 8 per SM against 0.28 ms in two; the
/// 28-register kernel takes 0.276 / 0.277 ms with one / two.)
pub(super) const ARG_WAVES: usize = 2;
/// Where the single-pass scan's tile states start in its buffer, in 64-bit words after
/// the ticket (STATE_OFFSET in primitives.cl: the ticket has a 128-byte line of its own).
const SCAN_STATE_OFFSET: usize = 16;
/// The single-pass scan's epochs run 1..SCAN_EPOCHS (29 bits of each state word,
/// EPOCH_OF in primitives.cl); then the states are zeroed and the count starts again.
pub(super) const SCAN_EPOCHS: u32 = 1 << 29;

impl<D: Device> Gpu<D> {
    fn tile_len<T: Element>(&self) -> usize {
        self.settings.group_size * self.settings.tile_items(T::DTYPE)
    }

    /// Splits `n` elements into at most `max_groups` contiguous ranges of whole tiles:
    /// (groups, elements per group).
    fn partition(&self, n: usize, unit: usize, max_groups: usize) -> (usize, usize) {
        let units = n.div_ceil(unit).max(1);
        let per_group = units.div_ceil(max_groups.clamp(1, units));
        let groups = units.div_ceil(per_group);
        (groups, per_group * unit)
    }

    /// Scans `data` in place on the device; `flags` (one byte per element, nonzero
    /// starts a segment) makes it a segmented scan.
    pub(crate) fn scan_resident<T: Element>(
        &self,
        data: &mut DeviceBuffer<D, T>,
        flags: Option<&DeviceBuffer<D, u8>>,
        op: ScanOp,
        kind: ScanKind,
    ) -> Result<()> {
        self.scan_queued(data, flags, op, kind)?;
        self.finish()
    }

    /// [`Gpu::scan_resident`] without waiting for it: the scan is issued to the queue,
    /// and later work on the queue sees its result.
    pub(crate) fn scan_queued<T: Element>(
        &self,
        data: &mut DeviceBuffer<D, T>,
        flags: Option<&DeviceBuffer<D, u8>>,
        op: ScanOp,
        kind: ScanKind,
    ) -> Result<()> {
        let n = data.len();
        if n == 0 {
            return Ok(());
        }
        let program = self.program(ProgramKind::Primitives(T::DTYPE, op, flags.is_some()))?;
        if self.settings.single_pass_scan {
            return self.scan_single_pass(&program, data, flags, kind);
        }
        let (groups, group_len) = self.partition(n, self.tile_len::<T>(), self.resident_groups());
        let part_v = self.alloc::<T>(groups)?;
        let part_f = self.alloc::<u8>(groups)?;
        // Without segments the flag argument is never read; any buffer will do.
        let (flag_arg, segmented) = match flags {
            Some(f) => (f.arg(), 1),
            None => (part_f.arg(), 0),
        };
        let common = [
            data.arg(),
            flag_arg,
            Arg::U32(segmented),
            Arg::U64(n as u64),
            Arg::U64(group_len as u64),
        ];
        let group = self.settings.group_size;
        let mut args = common.to_vec();
        args.extend([part_v.arg(), part_f.arg()]);
        self.launch(&program, "scan_upsweep", groups * group, group, &args)?;
        self.launch(
            &program,
            "scan_spine",
            group,
            group,
            &[part_v.arg(), part_f.arg(), Arg::U32(groups as u32)],
        )?;
        let mut args = common.to_vec();
        args.extend([
            part_v.arg(),
            Arg::U32((kind == ScanKind::Exclusive) as u32),
            data.arg(),
        ]);
        self.launch(&program, "scan_downsweep", groups * group, group, &args)
    }

    /// The chained scan: one launch, one tile per work-group.
    fn scan_single_pass<T: Element>(
        &self,
        program: &D::Program,
        data: &mut DeviceBuffer<D, T>,
        flags: Option<&DeviceBuffer<D, u8>>,
        kind: ScanKind,
    ) -> Result<()> {
        let n = data.len();
        let tiles = n.div_ceil(self.tile_len::<T>());
        if tiles >= u32::MAX as usize {
            return Err(crate::Error::invalid_argument(format!(
                "{n} elements are more tiles than the single-pass scan numbers"
            )));
        }
        // The ticket in a 128-byte line of its own, then one 64-bit state word per tile
        // (two for 8-byte elements).
        let words = SCAN_STATE_OFFSET + tiles * std::mem::size_of::<T>().div_ceil(4);
        let mut kept = super::locked(&self.scan_words, "scan's kept words")?;
        let wrapped = kept.epoch + 1 >= super::knobs().scan_epochs;
        if self.keep_zeroed(&mut kept.words, words, wrapped)? {
            kept.epoch = 0;
        }
        kept.epoch += 1;
        let state = kept.words.as_ref().expect("kept above");
        let group = self.settings.group_size;
        // Without segments the flag argument is never read; any buffer will do.
        let (flag_arg, segmented) = match flags {
            Some(f) => (f.arg(), 1),
            None => (state.arg(), 0),
        };
        self.launch(
            program,
            "scan_single_pass",
            tiles * group,
            group,
            &[
                data.arg(),
                flag_arg,
                Arg::U32(segmented),
                Arg::U64(n as u64),
                Arg::U32((kind == ScanKind::Exclusive) as u32),
                data.arg(),
                state.arg(),
                Arg::U32(kept.epoch),
            ],
        )?;
        drop(kept);
        Ok(())
    }

    /// Head flags on the device from CSR offsets (validated by the caller).
    fn flags_from_offsets(&self, offsets: &[u64], n: usize) -> Result<DeviceBuffer<D, u8>> {
        let device_offsets = self.upload(offsets)?;
        self.flags_from_resident_offsets(&device_offsets, n)
    }

    /// [`Gpu::flags_from_offsets`] from offsets already on the device.
    fn flags_from_resident_offsets(
        &self,
        offsets: &DeviceBuffer<D, u64>,
        n: usize,
    ) -> Result<DeviceBuffer<D, u8>> {
        let mut flags = self.alloc::<u8>(n)?;
        self.fill(&mut flags, 0, n)?;
        let segments = offsets.len().saturating_sub(1);
        if segments > 0 {
            // Any element type's program carries the kernel; u32 sum is the smallest.
            let program = self.program(ProgramKind::Primitives(
                crate::DType::U32,
                ScanOp::Sum,
                false,
            ))?;
            self.launch(
                &program,
                "offsets_to_flags",
                segments,
                0,
                &[
                    offsets.arg(),
                    Arg::U64(segments as u64),
                    Arg::U64(n as u64),
                    flags.arg(),
                ],
            )?;
        }
        Ok(flags)
    }

    /// Scans each segment `offsets[s]..offsets[s + 1]` of resident `data` in place, the
    /// offsets resident too (validated on the device, as the host call validates them).
    pub(crate) fn segmented_scan_resident<T: Element>(
        &self,
        data: &mut DeviceBuffer<D, T>,
        offsets: &DeviceBuffer<D, u64>,
        op: ScanOp,
        kind: ScanKind,
    ) -> Result<()> {
        self.validate_resident_offsets(offsets, data.len())?;
        let flags = self.flags_from_resident_offsets(offsets, data.len())?;
        self.scan_resident(data, Some(&flags), op, kind)
    }

    /// Host-to-host scan: uploads, scans on the device, downloads into `dst`.
    pub(crate) fn scan<T: Element>(
        &self,
        src: Option<&[T]>,
        dst: &mut [T],
        segments: Segments<'_>,
        op: ScanOp,
        kind: ScanKind,
    ) -> Result<()> {
        let n = dst.len();
        if n == 0 {
            return Ok(());
        }
        let mut data = self.upload(src.unwrap_or(dst))?;
        let flags = match segments {
            Segments::None => None,
            Segments::Flags(flags) => Some(self.upload(flags)?),
            Segments::Offsets(offsets) => Some(self.flags_from_offsets(offsets, n)?),
        };
        self.scan_resident(&mut data, flags.as_ref(), op, kind)?;
        self.read(&data, dst)
    }

    fn extreme_op(extreme: Extreme) -> ScanOp {
        match extreme {
            Extreme::Min => ScanOp::Min,
            Extreme::Max => ScanOp::Max,
        }
    }

    /// The extreme of a resident buffer and its first index (one launch or two).
    pub(crate) fn arg_extreme_resident<T: Element>(
        &self,
        data: &DeviceBuffer<D, T>,
        extreme: Extreme,
    ) -> Result<Option<(T, usize)>> {
        let n = data.len();
        if n == 0 {
            return Ok(None);
        }
        let program = self.program(ProgramKind::Primitives(
            T::DTYPE,
            Self::extreme_op(extreme),
            false,
        ))?;
        let group = self.settings.group_size;
        let waves = super::knobs().arg_waves;
        let (groups, group_len) =
            self.partition(n, self.tile_len::<T>(), self.resident_groups() * waves);
        // One scratch buffer: the result's two words, the groups' indices and their
        // values (layout in primitives.cl).
        let value_words = (groups * std::mem::size_of::<T>()).div_ceil(8);
        let scratch_words = 2 + groups + value_words;
        let mut kept = super::locked(&self.arg_words, "argmin's kept words")?;
        // Both zeroed once, when new: the count must start at zero.
        self.keep_zeroed(&mut kept.done, 1, false)?;
        self.keep_zeroed(&mut kept.scratch, scratch_words, false)?;
        let done = kept.done.as_ref().expect("kept above");
        let scratch = kept.scratch.as_ref().expect("kept above");
        // The answer goes straight to host memory where the tier has some the kernel
        // can write, else to the scratch's first two words.
        let host_words = self.device.host_words();
        let answer = match &host_words {
            Some(words) => Arg::Mem(D::host_words_handle(words)),
            None => scratch.arg(),
        };
        self.launch(
            &program,
            "arg_partial",
            groups * group,
            group,
            &[
                data.arg(),
                Arg::U64(n as u64),
                Arg::U64(group_len as u64),
                Arg::U32(groups as u32),
                scratch.arg(),
                done.arg(),
                answer,
            ],
        )?;
        if D::built_with(&program, "ARG_LAST_GROUP") != Some(1) {
            self.launch(
                &program,
                "arg_final",
                group,
                group,
                &[Arg::U32(groups as u32), scratch.arg(), answer],
            )?;
        }
        let words = match &host_words {
            Some(words) => {
                self.finish()?;
                D::host_words_read(words)
            }
            None => {
                let mut words = [0u64; 2];
                self.read(scratch, &mut words)?;
                words
            }
        };
        drop(kept);
        let mut value = T::default();
        let size = std::mem::size_of::<T>();
        super::bytes_of_mut(std::slice::from_mut(&mut value))
            .copy_from_slice(&super::bytes_of(&words[..1])[..size]);
        Ok(Some((value, words[1] as usize)))
    }

    pub(crate) fn arg_extreme<T: Element>(
        &self,
        data: &[T],
        extreme: Extreme,
    ) -> Result<Option<(T, usize)>> {
        if data.is_empty() {
            return Ok(None);
        }
        let device = self.upload(data)?;
        self.arg_extreme_resident(&device, extreme)
    }

    /// Per CSR segment, the extreme and its first index (validated offsets).
    pub(crate) fn segmented_arg_extreme<T: Element>(
        &self,
        data: &[T],
        offsets: &[u64],
        extreme: Extreme,
        values: &mut [T],
        indices: &mut [u64],
    ) -> Result<()> {
        if offsets.len() == 1 {
            return Ok(());
        }
        let device_data = self.upload(data)?;
        let device_offsets = self.upload(offsets)?;
        let mut out_v = self.alloc::<T>(values.len())?;
        let mut out_i = self.alloc::<u64>(indices.len())?;
        self.segmented_arg_extreme_resident(
            &device_data,
            &device_offsets,
            extreme,
            &mut out_v,
            &mut out_i,
        )?;
        self.read(&out_v, values)?;
        self.read(&out_i, indices)
    }

    /// [`Self::segmented_arg_extreme`] on resident buffers (validated offsets).
    pub(crate) fn segmented_arg_extreme_resident<T: Element>(
        &self,
        data: &DeviceBuffer<D, T>,
        offsets: &DeviceBuffer<D, u64>,
        extreme: Extreme,
        out_v: &mut DeviceBuffer<D, T>,
        out_i: &mut DeviceBuffer<D, u64>,
    ) -> Result<()> {
        let segments = offsets.len().saturating_sub(1);
        if segments == 0 {
            return Ok(());
        }
        if data.len() == 0 {
            let identity = match extreme {
                Extreme::Min => T::HIGHEST,
                Extreme::Max => T::LOWEST,
            };
            self.fill(out_v, identity, segments)?;
            self.fill(out_i, EMPTY_SEGMENT, segments)?;
            return self.finish();
        }
        let program = self.program(ProgramKind::Primitives(
            T::DTYPE,
            Self::extreme_op(extreme),
            false,
        ))?;
        let args = [
            data.arg(),
            offsets.arg(),
            Arg::U64(segments as u64),
            out_v.arg(),
            out_i.arg(),
        ];
        let average = data.len() / segments;
        let super::Knobs {
            lanes_from,
            items_per_lane,
            ..
        } = *super::knobs();
        if average >= ITEMS_PER_SEGMENT_FOR_GROUPS {
            let group = self.settings.group_size;
            self.launch(
                &program,
                "segmented_arg_groups",
                segments * group,
                group,
                &args,
            )?;
        } else if average >= lanes_from && self.settings.group_size >= MAX_LANES {
            // A power of two from 4 to 32 lanes, each folding about items_per_lane.
            let lanes = (average / items_per_lane)
                .next_power_of_two()
                .clamp(4, MAX_LANES);
            let mut args = args.to_vec();
            args.push(Arg::U32(lanes as u32));
            self.launch(&program, "segmented_arg_lanes", segments * lanes, 0, &args)?;
        } else {
            self.launch(&program, "segmented_arg_items", segments, 0, &args)?;
        }
        self.finish()
    }

    /// [`Self::segmented_arg_extreme_resident`], after checking the
    /// offsets on the device (the kernels trust them).
    pub(crate) fn checked_segmented_arg_extreme_resident<T: Element>(
        &self,
        data: &DeviceBuffer<D, T>,
        offsets: &DeviceBuffer<D, u64>,
        extreme: Extreme,
        values: &mut DeviceBuffer<D, T>,
        indices: &mut DeviceBuffer<D, u64>,
    ) -> Result<()> {
        self.validate_resident_offsets(offsets, data.len())?;
        self.segmented_arg_extreme_resident(data, offsets, extreme, values, indices)
    }

    /// Checks resident CSR offsets for `n` elements on the device; on failure downloads
    /// them to name the first offending index.
    /// Queues `check_offsets`: `segments + 1` offsets in device memory must start at 0,
    /// never decrease and end at `total`; the least index where they do not lands in
    /// `status[0]` (left as it was where they hold). Shared by the segmented primitives
    /// and the CSR graphs in device memory.
    pub(crate) fn launch_check_offsets(
        &self,
        offsets: &DeviceBuffer<D, u64>,
        segments: usize,
        total: usize,
        status: &DeviceBuffer<D, u32>,
    ) -> Result<()> {
        let program = self.program(ProgramKind::Primitives(
            crate::DType::U32,
            ScanOp::Sum,
            false,
        ))?;
        self.launch(
            &program,
            "check_offsets",
            segments + 1,
            0,
            &[
                offsets.arg(),
                Arg::U64(segments as u64),
                Arg::U64(total as u64),
                status.arg(),
            ],
        )
    }

    pub(crate) fn validate_resident_offsets(
        &self,
        offsets: &DeviceBuffer<D, u64>,
        n: usize,
    ) -> Result<()> {
        let segments = offsets.len().saturating_sub(1);
        if offsets.len() == 0 || segments >= u32::MAX as usize {
            let mut host: Vec<u64> = alloc::zeroed(offsets.len(), "the segment offsets")?;
            self.read(offsets, &mut host)?;
            return crate::types::validate_offsets(&host, n);
        }
        let mut bad = self.alloc::<u32>(1)?;
        self.fill(&mut bad, u32::MAX, 1)?;
        self.launch_check_offsets(offsets, segments, n, &bad)?;
        if self.read_one(&bad, 0)? == u32::MAX {
            return Ok(());
        }
        let mut host: Vec<u64> = alloc::zeroed(offsets.len(), "the segment offsets")?;
        self.read(offsets, &mut host)?;
        crate::types::validate_offsets(&host, n)
    }

    /// Copies `source` into `copy` (same length) on the device.
    pub(crate) fn copy_resident<T: Copy>(
        &self,
        source: &DeviceBuffer<D, T>,
        copy: &mut DeviceBuffer<D, T>,
    ) -> Result<()> {
        if source.len() > 0 {
            self.copy_at(source, 0, copy, 0, source.len())?;
            self.finish()?;
        }
        Ok(())
    }
}
