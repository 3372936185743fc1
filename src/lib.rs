//! # gpumst
//!
//! Minimum spanning forests and the data-parallel primitives beneath them (scan,
//! segmented scan, arg-reductions) on a CUDA or OpenCL GPU found at run time, or on all
//! CPU cores. This crate is both the safe Rust API and, through [`ffi`], the C ABI
//! declared in `include/gpumst.h`.
//!
//! ```
//! use gpumst::{Context, Options, ScanKind, ScanOp};
//! let ctx = Context::new(&Options::default()).unwrap();
//! let mut out = [0u32; 4];
//! ctx.scan(&[1, 2, 3, 4], &mut out, ScanOp::Sum, ScanKind::Exclusive).unwrap();
//! assert_eq!(out, [0, 1, 3, 6]);
//! assert_eq!(ctx.argmin(&[3.0f32, -1.0, -1.0]).unwrap(), Some((-1.0, 1)));
//! ```

mod alloc;
mod buffer;
mod context;
#[cfg(feature = "mpi")]
pub mod distributed;
mod error;
pub mod ffi;
pub mod graph;
mod kept;
pub mod msf;
/// Time per phase of a call (feature `phase-profile`, for benchmarks).
#[cfg_attr(not(feature = "phase-profile"), doc(hidden))]
pub mod profile;
/// Test hooks of the `fault-injection` feature (empty in other builds).
#[cfg_attr(not(feature = "fault-injection"), doc(hidden))]
pub mod testing;
pub mod tier;
pub mod types;

pub use alloc::wait_for_background_frees;
pub use buffer::Buffer;
pub use context::{Context, Devices, Options, BACKEND_ENV};
pub use error::{Error, Result, Status};
pub use graph::{EdgeListGraph, Graph, WeightVec, Weights};
pub use msf::{Algorithm, DeviceTimings, Forest, MsfOptions, TotalWeight};
pub use tier::{probe, Operation, Tier};
pub use types::{DType, Element, ScanKind, ScanOp, Stored, EMPTY_SEGMENT};

/// The library version, from Cargo.toml.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
