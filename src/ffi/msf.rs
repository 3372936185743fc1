//! The C ABI of graphs and minimum spanning forests.

use std::ffi::{c_char, c_void};

use super::memory::input_slice;
use super::{
    copy_out_string, dtype_from_c, gpumst_context, gpumst_dtype, gpumst_status, gpumst_tier,
    tier_to_c, with_context, without_context, GPUMST_TIER_AUTO,
};
use super::{GPUMST_INVALID_ARGUMENT, GPUMST_OK};
use crate::graph::{Graph, Weights};
use crate::msf::{Algorithm, Forest, MsfOptions, TotalWeight};
use crate::types::DType;
use crate::{Error, Result};

/// How a gpumst_graph is laid out.
pub type gpumst_graph_kind = i32;
/// Edge i joins u[i] and v[i]; its id is i.
pub const GPUMST_GRAPH_EDGE_LIST: gpumst_graph_kind = 0;
/// Symmetric CSR: the neighbours of x are targets[offsets[x] .. offsets[x+1]-1]; every
/// edge is listed in both directions with the same weight; its id is the CSR position
/// of its u < v entry.
pub const GPUMST_GRAPH_CSR: gpumst_graph_kind = 1;

/// MSF algorithm. All return the identical forest.
pub type gpumst_algorithm = i32;
/// The fastest for the tier and graph.
pub const GPUMST_ALGORITHM_AUTO: gpumst_algorithm = 0;
/// Vineet et al.'s recursive Borůvka.
pub const GPUMST_ALGORITHM_BORUVKA: gpumst_algorithm = 1;
/// Wang et al.'s Prim on the min-reduction.
pub const GPUMST_ALGORITHM_PRIM: gpumst_algorithm = 2;
/// Vasconcellos, Cáceres et al.'s strut algorithm.
pub const GPUMST_ALGORITHM_STRUT: gpumst_algorithm = 3;
/// Sequential Kruskal (the reference).
pub const GPUMST_ALGORITHM_KRUSKAL: gpumst_algorithm = 4;

/// gpumst_msf flag: also compute a component label per vertex.
pub const GPUMST_MSF_LABELS: u32 = 1;
/// gpumst_msf flag: ignore the weights (the spanning forest of lowest edge ids).
pub const GPUMST_MSF_UNWEIGHTED: u32 = 2;
/// gpumst_msf flag: the maximum spanning forest, under the (weight descending, edge id
/// ascending) order (equal weights still fall to the lower id).
pub const GPUMST_MSF_MAXIMUM: u32 = 4;

/// A graph viewed over caller memory (read during the call only). Fill it with
/// gpumst_graph_init_edge_list or gpumst_graph_init_csr.
#[repr(C)]
pub struct gpumst_graph {
    /// sizeof(gpumst_graph) as the caller was compiled with.
    pub struct_size: usize,
    pub kind: gpumst_graph_kind,
    /// Type of `weights` (ignored when `weights` is NULL).
    pub weight_type: gpumst_dtype,
    pub num_vertices: u64,
    /// Edge list: entries of u, v and weights. CSR: entries of targets and weights.
    pub num_edges: u64,
    /// Edge list endpoints (NULL for CSR).
    pub u: *const u32,
    pub v: *const u32,
    /// CSR offsets (num_vertices + 1 entries) and targets (NULL for edge lists).
    pub offsets: *const u64,
    pub targets: *const u32,
    /// One weight per edge (edge list) or per CSR entry; NULL for an unweighted graph.
    pub weights: *const c_void,
}

/// Exact total weight of a forest.
#[repr(C)]
pub struct gpumst_total_weight {
    /// 1 when the weights are f32/f64 (then `value` is exact), 0 for integer weights.
    pub is_float: i32,
    /// The total as a double (rounded for integer totals beyond 2^53).
    pub value: f64,
    /// For integer weights, the exact total as a 128-bit two's complement number
    /// (exact_high * 2^64 + exact_low).
    pub exact_high: i64,
    pub exact_low: u64,
}

/// A computed forest (opaque); release it with gpumst_forest_free.
pub struct gpumst_forest {
    forest: Forest,
}

/// Fills `graph` as an edge-list view: edge i joins u[i] and v[i] (vertex ids below
/// num_vertices) with weight ((weight_type*)weights)[i]; `weights` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn gpumst_graph_init_edge_list(
    graph: *mut gpumst_graph,
    num_vertices: u64,
    num_edges: u64,
    u: *const u32,
    v: *const u32,
    weight_type: gpumst_dtype,
    weights: *const c_void,
) -> gpumst_status {
    // SAFETY: the caller passes NULL or a writable gpumst_graph.
    init_graph(
        unsafe { graph.as_mut() },
        gpumst_graph {
            u,
            v,
            ..graph_base(
                GPUMST_GRAPH_EDGE_LIST,
                num_vertices,
                num_edges,
                weight_type,
                weights,
            )
        },
    )
}

/// Fills `graph` as a symmetric CSR view: offsets has num_vertices + 1 entries,
/// targets and weights (may be NULL) have num_entries = offsets[num_vertices].
#[no_mangle]
pub unsafe extern "C" fn gpumst_graph_init_csr(
    graph: *mut gpumst_graph,
    num_vertices: u64,
    num_entries: u64,
    offsets: *const u64,
    targets: *const u32,
    weight_type: gpumst_dtype,
    weights: *const c_void,
) -> gpumst_status {
    // SAFETY: the caller passes NULL or a writable gpumst_graph.
    init_graph(
        unsafe { graph.as_mut() },
        gpumst_graph {
            offsets,
            targets,
            ..graph_base(
                GPUMST_GRAPH_CSR,
                num_vertices,
                num_entries,
                weight_type,
                weights,
            )
        },
    )
}

/// A graph of `kind` with every array pointer NULL except the weights.
fn graph_base(
    kind: gpumst_graph_kind,
    num_vertices: u64,
    num_edges: u64,
    weight_type: gpumst_dtype,
    weights: *const c_void,
) -> gpumst_graph {
    gpumst_graph {
        struct_size: std::mem::size_of::<gpumst_graph>(),
        kind,
        weight_type,
        num_vertices,
        num_edges,
        u: std::ptr::null(),
        v: std::ptr::null(),
        offsets: std::ptr::null(),
        targets: std::ptr::null(),
        weights,
    }
}

fn init_graph(graph: Option<&mut gpumst_graph>, value: gpumst_graph) -> gpumst_status {
    match graph {
        Some(slot) => {
            *slot = value;
            GPUMST_OK
        }
        None => GPUMST_INVALID_ARGUMENT,
    }
}

/// # Safety
/// The pointers in `raw` must hold the element counts its fields declare.
unsafe fn graph_view<'a>(raw: &'a gpumst_graph) -> Result<Graph<'a>> {
    if raw.struct_size < std::mem::size_of::<gpumst_graph>() {
        return Err(Error::invalid_argument(format!(
            "graph.struct_size = {} is smaller than sizeof(gpumst_graph) = {}: fill the graph with gpumst_graph_init_edge_list or gpumst_graph_init_csr",
            raw.struct_size,
            std::mem::size_of::<gpumst_graph>()
        )));
    }
    let num_vertices = usize::try_from(raw.num_vertices)
        .map_err(|_| Error::invalid_argument("graph.num_vertices is too large"))?;
    let m = raw.num_edges;
    // SAFETY (every slice below): the caller's contract on the declared counts.
    let weights = if raw.weights.is_null() {
        None
    } else {
        let w = raw.weights;
        Some(match dtype_from_c(raw.weight_type)? {
            DType::I32 => Weights::I32(unsafe { input_slice(w.cast(), m, "graph.weights") }?),
            DType::U32 => Weights::U32(unsafe { input_slice(w.cast(), m, "graph.weights") }?),
            DType::I64 => Weights::I64(unsafe { input_slice(w.cast(), m, "graph.weights") }?),
            DType::U64 => Weights::U64(unsafe { input_slice(w.cast(), m, "graph.weights") }?),
            DType::F32 => Weights::F32(unsafe { input_slice(w.cast(), m, "graph.weights") }?),
            DType::F64 => Weights::F64(unsafe { input_slice(w.cast(), m, "graph.weights") }?),
        })
    };
    match raw.kind {
        GPUMST_GRAPH_EDGE_LIST => Ok(Graph::EdgeList {
            num_vertices,
            u: unsafe { input_slice(raw.u, m, "graph.u") }?,
            v: unsafe { input_slice(raw.v, m, "graph.v") }?,
            weights,
        }),
        GPUMST_GRAPH_CSR => {
            let entries = raw
                .num_vertices
                .checked_add(1)
                .ok_or_else(|| Error::invalid_argument("graph.num_vertices is too large"))?;
            Ok(Graph::Csr {
                offsets: unsafe { input_slice(raw.offsets, entries, "graph.offsets") }?,
                targets: unsafe { input_slice(raw.targets, m, "graph.targets") }?,
                weights,
            })
        }
        other => Err(Error::invalid_argument(format!(
            "graph.kind = {other} is not a gpumst_graph_kind (0 edge list, 1 CSR)"
        ))),
    }
}

pub(super) fn algorithm_from_c(algorithm: gpumst_algorithm) -> Result<Algorithm> {
    Algorithm::ALL
        .into_iter()
        .find(|a| *a as i32 == algorithm)
        .ok_or_else(|| {
            Error::invalid_argument(format!(
                "algorithm {algorithm} is not a gpumst_algorithm (0..=4)"
            ))
        })
}

/// Computes the minimum spanning forest of `graph` under the (weight, edge id) order:
/// the same edges on every tier and with every algorithm. The graph is validated
/// first (ids in range, CSR offsets and symmetry, no NaN weight); a violation is
/// GPUMST_INVALID_GRAPH with a message naming the first offending index. Self-loops
/// are ignored; parallel edges are allowed. On success `*forest` owns the result.
/// `flags`: GPUMST_MSF_LABELS, GPUMST_MSF_UNWEIGHTED, GPUMST_MSF_MAXIMUM.
#[no_mangle]
pub unsafe extern "C" fn gpumst_msf(
    ctx: *mut gpumst_context,
    graph: *const gpumst_graph,
    algorithm: gpumst_algorithm,
    flags: u32,
    forest: *mut *mut gpumst_forest,
) -> gpumst_status {
    with_context(ctx, "gpumst_msf", |c| {
        // SAFETY: the caller passes NULL or a writable pointer slot.
        unsafe { reset_forest_slot(forest) }?;
        // SAFETY: the caller passes NULL or a readable gpumst_graph.
        let raw =
            unsafe { graph.as_ref() }.ok_or_else(|| Error::invalid_argument("graph is NULL"))?;
        check_msf_flags(flags)?;
        // SAFETY: the caller's contract on the graph's arrays.
        let view = unsafe { graph_view(raw) }?;
        let options = msf_options(algorithm, flags)?;
        let result = c.msf(&view, &options)?;
        // SAFETY: as above.
        unsafe { *forest = Box::into_raw(Box::new(gpumst_forest { forest: result })) };
        Ok(())
    })
}

/// Sets `*forest` to NULL, so that a failed call leaves no forest; NULL `forest` is an
/// error.
///
/// # Safety
/// `forest` is NULL or a writable pointer slot.
unsafe fn reset_forest_slot(forest: *mut *mut gpumst_forest) -> Result<()> {
    if forest.is_null() {
        return Err(Error::invalid_argument("forest is NULL"));
    }
    // SAFETY: checked non-NULL; writable by the caller's contract.
    unsafe { *forest = std::ptr::null_mut() };
    Ok(())
}

/// An error for flag bits the MSF calls do not know.
fn check_msf_flags(flags: u32) -> Result<()> {
    if flags & !(GPUMST_MSF_LABELS | GPUMST_MSF_UNWEIGHTED | GPUMST_MSF_MAXIMUM) != 0 {
        return Err(Error::invalid_argument(format!(
            "flags = {flags:#x} has unknown bits"
        )));
    }
    Ok(())
}

/// The MSF options an algorithm code and (checked) flags ask for.
fn msf_options(algorithm: gpumst_algorithm, flags: u32) -> Result<MsfOptions> {
    Ok(MsfOptions {
        algorithm: algorithm_from_c(algorithm)?,
        labels: flags & GPUMST_MSF_LABELS != 0,
        unweighted: flags & GPUMST_MSF_UNWEIGHTED != 0,
        maximum: flags & GPUMST_MSF_MAXIMUM != 0,
    })
}

/// The minimum spanning forest of a graph whose edges are spread over the ranks of an
/// MPI communicator: every rank of `comm` calls it with its share of the edges
/// (`local`, an edge list over the whole graph's num_vertices, the same on every rank,
/// as are the weight type, `algorithm`, `flags` and `root`). `comm` is the
/// communicator's Fortran handle, MPI_Comm_c2f(comm) in C (mpi4py: comm.py2f()), so
/// that this header needs no MPI header; MPI must be initialised. `edge_ids`: the
/// global id of each local edge, unique across the ranks; NULL numbers the edges in
/// rank order as if the shares were concatenated. `root` >= 0: that rank gets the
/// forest and the others *forest = NULL; -1: every rank gets it. The forest is the one
/// gpumst_msf gives for all the edges (ids as given). Every rank returns the same
/// status: a failure on any rank is reported on all of them, its message naming the
/// rank. A library built without the Cargo feature `mpi` returns
/// GPUMST_BACKEND_UNAVAILABLE.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn gpumst_msf_mpi(
    ctx: *mut gpumst_context,
    comm: i64,
    local: *const gpumst_graph,
    edge_ids: *const u64,
    algorithm: gpumst_algorithm,
    flags: u32,
    root: i32,
    forest: *mut *mut gpumst_forest,
) -> gpumst_status {
    with_context(ctx, "gpumst_msf_mpi", |c| {
        // SAFETY: the caller passes NULL or a writable pointer slot.
        unsafe { reset_forest_slot(forest) }?;
        // SAFETY: the caller passes NULL or a readable gpumst_graph.
        let raw =
            unsafe { local.as_ref() }.ok_or_else(|| Error::invalid_argument("local is NULL"))?;
        check_msf_flags(flags)?;
        let options = msf_options(algorithm, flags)?;
        if root < -1 {
            return Err(Error::invalid_argument(format!(
                "root = {root}: a rank, or -1 for every rank"
            )));
        }
        // SAFETY: the caller's contract on the graph's arrays.
        let Graph::EdgeList {
            num_vertices,
            u,
            v,
            weights,
        } = (unsafe { graph_view(raw) })?
        else {
            return Err(Error::invalid_argument(
                "local is a CSR graph: a rank's share is an edge list",
            ));
        };
        let ids = if edge_ids.is_null() {
            None
        } else {
            // SAFETY: the caller passes one id per local edge.
            Some(unsafe { input_slice(edge_ids, u.len() as u64, "edge_ids") }?)
        };
        let result = mpi_forest(c, comm, num_vertices, u, v, weights, ids, &options, root)?;
        if let Some(result) = result {
            // SAFETY: as above.
            unsafe { *forest = Box::into_raw(Box::new(gpumst_forest { forest: result })) };
        }
        Ok(())
    })
}

/// [`gpumst_msf_mpi`]'s work: the forest on the ranks that get it.
#[cfg(feature = "mpi")]
#[allow(clippy::too_many_arguments)]
fn mpi_forest(
    ctx: &crate::Context,
    comm: i64,
    num_vertices: usize,
    u: &[u32],
    v: &[u32],
    weights: Option<Weights<'_>>,
    ids: Option<&[u64]>,
    options: &MsfOptions,
    root: i32,
) -> Result<Option<Forest>> {
    use mpi::raw::FromRaw;
    use mpi::topology::SimpleCommunicator;
    if !mpi::environment::is_initialized() || mpi::environment::is_finalized() {
        return Err(Error::invalid_argument(
            "MPI is not initialised (or already finalised): call MPI_Init first",
        ));
    }
    // MPI_Fint is a C int.
    let handle = std::ffi::c_int::try_from(comm).map_err(|_| {
        Error::invalid_argument(format!(
            "comm = {comm} is not a Fortran communicator handle"
        ))
    })?;
    // SAFETY: MPI is initialised; f2c maps any handle value (an invalid one to an
    // invalid communicator, which is checked below before use).
    let raw = unsafe { mpi::ffi::MPI_Comm_f2c(handle) };
    // SAFETY: reading an MPI-provided constant.
    if raw == unsafe { mpi::ffi::RSMPI_COMM_NULL } {
        return Err(Error::invalid_argument("comm is MPI_COMM_NULL"));
    }
    let mut inter = 0;
    // SAFETY: `raw` is a communicator handle of this process; `inter` receives a flag.
    if unsafe { mpi::ffi::MPI_Comm_test_inter(raw, &mut inter) } != 0 || inter != 0 {
        return Err(Error::invalid_argument(
            "comm is an intercommunicator (or not a communicator): pass an intracommunicator",
        ));
    }
    // The library's messages travel on its own duplicate of the caller's communicator,
    // so they can never match the caller's pending receives.
    let mut own = raw;
    // SAFETY: `raw` is a communicator handle of this process; `own` receives the new one.
    if unsafe { mpi::ffi::MPI_Comm_dup(raw, &mut own) } != 0 {
        return Err(Error::invalid_argument(
            "MPI_Comm_dup failed on comm: is it a valid communicator?",
        ));
    }
    // SAFETY: `own` is a fresh intracommunicator (neither MPI_COMM_WORLD nor
    // MPI_COMM_SELF), owned by this value alone, which frees it on drop.
    let own = unsafe { SimpleCommunicator::from_raw(own) };
    let local = crate::distributed::LocalEdges {
        num_vertices,
        u,
        v,
        weights,
        ids,
    };
    let root = (root >= 0).then_some(root);
    Ok(ctx.msf_mpi(&own, &local, options, root)?.forest)
}

/// Without the `mpi` feature there is no MPI to call.
#[cfg(not(feature = "mpi"))]
#[allow(clippy::too_many_arguments)]
fn mpi_forest(
    _: &crate::Context,
    _: i64,
    _: usize,
    _: &[u32],
    _: &[u32],
    _: Option<Weights<'_>>,
    _: Option<&[u64]>,
    _: &MsfOptions,
    _: i32,
) -> Result<Option<Forest>> {
    Err(Error::new(
        crate::Status::BackendUnavailable,
        "this libgpumst was built without MPI (Cargo feature `mpi`)",
    ))
}

/// Releases a forest. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn gpumst_forest_free(forest: *mut gpumst_forest) {
    if !forest.is_null() {
        // SAFETY: `forest` came from gpumst_msf (Box::into_raw) and is freed once.
        drop(unsafe { Box::from_raw(forest) });
    }
}

fn forest_ref<'a>(forest: *const gpumst_forest) -> Option<&'a Forest> {
    // SAFETY: the caller passes NULL or a live forest from gpumst_msf.
    unsafe { forest.as_ref() }.map(|f| &f.forest)
}

/// Number of edges in the forest (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn gpumst_forest_num_edges(forest: *const gpumst_forest) -> u64 {
    forest_ref(forest).map_or(0, |f| f.edges.len() as u64)
}

/// The forest's edge ids, ascending (gpumst_forest_num_edges of them), valid until
/// gpumst_forest_free. NULL for a NULL forest.
#[no_mangle]
pub unsafe extern "C" fn gpumst_forest_edges(forest: *const gpumst_forest) -> *const u64 {
    forest_ref(forest).map_or(std::ptr::null(), |f| f.edges.as_ptr())
}

/// The tier that computed the forest (GPUMST_TIER_AUTO for NULL).
#[no_mangle]
pub unsafe extern "C" fn gpumst_forest_tier(forest: *const gpumst_forest) -> gpumst_tier {
    forest_ref(forest).map_or(GPUMST_TIER_AUTO, |f| tier_to_c(f.tier))
}

/// Number of vertices of the graph the forest spans (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn gpumst_forest_num_vertices(forest: *const gpumst_forest) -> u64 {
    forest_ref(forest).map_or(0, |f| f.num_vertices as u64)
}

/// Number of connected components, isolated vertices included (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn gpumst_forest_num_components(forest: *const gpumst_forest) -> u64 {
    forest_ref(forest).map_or(0, |f| f.num_components as u64)
}

/// Per vertex, the smallest vertex id of its component (num_vertices entries), when
/// GPUMST_MSF_LABELS was given; otherwise (or for NULL) NULL.
#[no_mangle]
pub unsafe extern "C" fn gpumst_forest_labels(forest: *const gpumst_forest) -> *const u32 {
    forest_ref(forest)
        .and_then(|f| f.labels.as_ref())
        .map_or(std::ptr::null(), |l| l.as_ptr())
}

/// The forest's total weight, summed in ascending edge-id order (exact for integers;
/// an unweighted forest weighs its edge count).
#[no_mangle]
pub unsafe extern "C" fn gpumst_forest_total_weight(
    forest: *const gpumst_forest,
    total: *mut gpumst_total_weight,
) -> gpumst_status {
    without_context(|| {
        let f = forest_ref(forest).ok_or_else(|| Error::invalid_argument("forest is NULL"))?;
        // SAFETY: the caller passes NULL or a writable gpumst_total_weight.
        let out =
            unsafe { total.as_mut() }.ok_or_else(|| Error::invalid_argument("total is NULL"))?;
        *out = total_weight_to_c(f.total_weight);
        Ok(())
    })
}

pub(super) fn total_weight_to_c(total: TotalWeight) -> gpumst_total_weight {
    match total {
        TotalWeight::Float(x) => gpumst_total_weight {
            is_float: 1,
            value: x,
            exact_high: 0,
            exact_low: 0,
        },
        TotalWeight::Int(x) => gpumst_total_weight {
            is_float: 0,
            value: x as f64,
            exact_high: (x >> 64) as i64,
            exact_low: x as u64,
        },
    }
}

/// The total weight as decimal text (exact for integers; shortest round-trip form for
/// floats). Buffer rules as for gpumst_context_device_name.
#[no_mangle]
pub unsafe extern "C" fn gpumst_forest_total_weight_string(
    forest: *const gpumst_forest,
    buffer: *mut c_char,
    capacity: usize,
    length: *mut usize,
) -> gpumst_status {
    without_context(|| {
        let f = forest_ref(forest).ok_or_else(|| Error::invalid_argument("forest is NULL"))?;
        copy_out_string(&f.total_weight.to_string(), buffer, capacity, length)
    })
}
