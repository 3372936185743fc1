//! The C ABI of graph files: reading one with the library's own readers (the same
//! formats, compressions and error messages as the command line) into arrays the
//! library owns, and viewing them as a gpumst_graph.

use std::ffi::{c_char, CStr};
use std::path::PathBuf;

use super::msf::{gpumst_graph, GPUMST_GRAPH_EDGE_LIST};
use super::{gpumst_dtype, gpumst_status, reporting_to_buffer, without_context};
use crate::graph::io::{self, Format, LoadedGraph};
use crate::graph::WeightVec;
use crate::{Error, Result};

/// Graph file format for gpumst_graph_file_read.
pub type gpumst_file_format = i32;
/// From the file name: .gr DIMACS, .mtx Matrix Market, .egr ECL binary, .gmst gpumst
/// binary, anything else an edge list (a trailing .gz or .xz is looked through).
pub const GPUMST_FORMAT_AUTO: gpumst_file_format = 0;
/// 9th DIMACS challenge shortest-path format (`p sp N M`, `a U V W`), 1-based ids.
pub const GPUMST_FORMAT_DIMACS: gpumst_file_format = 1;
/// Matrix Market coordinate (general or symmetric; integer, real or pattern), 1-based.
pub const GPUMST_FORMAT_MTX: gpumst_file_format = 2;
/// Plain edge list: `u v [w]` lines, 0-based, `#` and `%` comments.
pub const GPUMST_FORMAT_EDGELIST: gpumst_file_format = 3;
/// ECL's binary CSR (int32 n, m, offsets[n+1], targets[m], optional weights[m]).
pub const GPUMST_FORMAT_EGR: gpumst_file_format = 4;
/// gpumst's binary edge list (header, u32 u[m] and v[m], optional weights[m] of any of
/// the six types): read at the speed of a copy.
pub const GPUMST_FORMAT_GMST: gpumst_file_format = 5;

/// A graph read from a file (opaque). Its arrays belong to the library and stay valid
/// until gpumst_graph_file_free.
pub struct gpumst_graph_file {
    loaded: LoadedGraph,
}

fn format_from_c(format: gpumst_file_format) -> Result<Format> {
    Ok(match format {
        GPUMST_FORMAT_AUTO => Format::Auto,
        GPUMST_FORMAT_DIMACS => Format::Dimacs,
        GPUMST_FORMAT_MTX => Format::MatrixMarket,
        GPUMST_FORMAT_EDGELIST => Format::EdgeList,
        GPUMST_FORMAT_EGR => Format::Egr,
        GPUMST_FORMAT_GMST => Format::Gmst,
        other => {
            return Err(Error::invalid_argument(format!(
                "format {other} is not a gpumst_file_format (0..=5)"
            )))
        }
    })
}

fn format_to_c(format: Format) -> gpumst_file_format {
    match format {
        Format::Auto => GPUMST_FORMAT_AUTO,
        Format::Dimacs => GPUMST_FORMAT_DIMACS,
        Format::MatrixMarket => GPUMST_FORMAT_MTX,
        Format::EdgeList => GPUMST_FORMAT_EDGELIST,
        Format::Egr => GPUMST_FORMAT_EGR,
        Format::Gmst => GPUMST_FORMAT_GMST,
    }
}

/// The file name as a path: any bytes on Unix, UTF-8 elsewhere.
fn path_from_c(path: &CStr) -> Result<PathBuf> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(PathBuf::from(std::ffi::OsStr::from_bytes(path.to_bytes())))
    }
    #[cfg(not(unix))]
    {
        path.to_str()
            .map(PathBuf::from)
            .map_err(|_| Error::invalid_argument("path is not UTF-8"))
    }
}

/// Reads a graph file with the library's readers: DIMACS .gr, Matrix Market .mtx,
/// plain edge lists and ECL .egr, each optionally .gz or .xz compressed — the formats,
/// edge numbering and errors of `gpumst msf`. Edge i of the result is the i-th edge
/// of the file (a file listing both arcs of an edge gives one edge, numbered by its
/// first arc). On failure `*out` is NULL and the reason (for malformed data,
/// "FILE:LINE: what was wrong") is written to `error` as for gpumst_context_create:
/// GPUMST_INVALID_ARGUMENT when the file cannot be opened, GPUMST_INVALID_GRAPH when
/// its contents are malformed.
#[no_mangle]
pub unsafe extern "C" fn gpumst_graph_file_read(
    path: *const c_char,
    format: gpumst_file_format,
    out: *mut *mut gpumst_graph_file,
    error: *mut c_char,
    error_capacity: usize,
) -> gpumst_status {
    reporting_to_buffer(error, error_capacity, "reading a graph file", || {
        if out.is_null() {
            return Err(Error::invalid_argument("out is NULL"));
        }
        // SAFETY: checked non-NULL; the caller passes a writable pointer slot.
        unsafe { *out = std::ptr::null_mut() };
        if path.is_null() {
            return Err(Error::invalid_argument("path is NULL"));
        }
        // SAFETY: the caller passes a NUL-terminated string.
        let path = path_from_c(unsafe { CStr::from_ptr(path) })?;
        let loaded = io::read_graph(&path, format_from_c(format)?, None)?;
        // SAFETY: as above.
        unsafe { *out = Box::into_raw(Box::new(gpumst_graph_file { loaded })) };
        Ok(())
    })
}

/// Releases a graph file. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn gpumst_graph_file_free(file: *mut gpumst_graph_file) {
    if !file.is_null() {
        // SAFETY: `file` came from gpumst_graph_file_read (Box::into_raw), freed once.
        drop(unsafe { Box::from_raw(file) });
    }
}

fn file_ref<'a>(file: *const gpumst_graph_file) -> Option<&'a LoadedGraph> {
    // SAFETY: the caller passes NULL or a live file from gpumst_graph_file_read.
    unsafe { file.as_ref() }.map(|f| &f.loaded)
}

/// Fills `graph` with an edge-list view of the file's arrays (u, v, and weights of
/// the type the file holds, NULL when it has none), valid until gpumst_graph_file_free.
/// Integer weights come in the narrowest of u32, i64 and u64 that holds them (.egr
/// files: i32); real weights as f64.
#[no_mangle]
pub unsafe extern "C" fn gpumst_graph_file_view(
    file: *const gpumst_graph_file,
    graph: *mut gpumst_graph,
) -> gpumst_status {
    without_context(|| {
        let loaded = file_ref(file).ok_or_else(|| Error::invalid_argument("file is NULL"))?;
        // SAFETY: the caller passes NULL or a writable gpumst_graph.
        let slot =
            unsafe { graph.as_mut() }.ok_or_else(|| Error::invalid_argument("graph is NULL"))?;
        let g = &loaded.graph;
        let (weight_type, weights): (gpumst_dtype, *const std::ffi::c_void) = match &g.weights {
            None => (super::GPUMST_U32, std::ptr::null()),
            Some(w) => (w.as_weights().dtype() as gpumst_dtype, weights_ptr(w)),
        };
        *slot = gpumst_graph {
            struct_size: std::mem::size_of::<gpumst_graph>(),
            kind: GPUMST_GRAPH_EDGE_LIST,
            weight_type,
            num_vertices: g.num_vertices as u64,
            num_edges: g.num_edges() as u64,
            u: g.u.as_ptr(),
            v: g.v.as_ptr(),
            offsets: std::ptr::null(),
            targets: std::ptr::null(),
            weights,
        };
        Ok(())
    })
}

fn weights_ptr(w: &WeightVec) -> *const std::ffi::c_void {
    match w {
        WeightVec::I32(w) => w.as_ptr().cast(),
        WeightVec::U32(w) => w.as_ptr().cast(),
        WeightVec::I64(w) => w.as_ptr().cast(),
        WeightVec::U64(w) => w.as_ptr().cast(),
        WeightVec::F32(w) => w.as_ptr().cast(),
        WeightVec::F64(w) => w.as_ptr().cast(),
    }
}

/// The format the file was read as (never GPUMST_FORMAT_AUTO; GPUMST_FORMAT_AUTO for
/// NULL).
#[no_mangle]
pub unsafe extern "C" fn gpumst_graph_file_format(
    file: *const gpumst_graph_file,
) -> gpumst_file_format {
    file_ref(file).map_or(GPUMST_FORMAT_AUTO, |f| format_to_c(f.format))
}

/// What to add to a 0-based vertex id to get the file's own id: 1 for DIMACS and
/// Matrix Market, 0 for edge lists and .egr (and for NULL).
#[no_mangle]
pub unsafe extern "C" fn gpumst_graph_file_vertex_base(file: *const gpumst_graph_file) -> u32 {
    file_ref(file).map_or(0, |f| f.vertex_base)
}
