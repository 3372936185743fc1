// Element types and operators, selected by build options, shared by every gpumst
// OpenCL program. The host passes:
//   -DDTYPE=n     0 i32, 1 u32, 2 i64, 3 u64, 4 f32, 5 f64 (DType's discriminant)
//   -DSCAN_OP=n   0 sum, 1 min, 2 max (ScanOp's discriminant)
//   -DWG=n        work-group size (a power of two)
//   -DITEMS=n     elements per work-item in a tile
// Semantics follow src/types.rs exactly, so every tier computes the same bits:
// integer sums wrap, NaN is the extreme of min/max and propagates, ties keep the
// earlier value, and every run starts from the identity.

#ifdef __OPENCL_VERSION__
// Pointers into local memory. (CUDA builds these sources through kernels/cuda/opencl.cuh,
// where declarations say __shared__ but pointers carry no address space.)
#define LOCAL __local
#if DTYPE == 5
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#endif

#if DTYPE == 0
typedef int T;
typedef uint UT;
#define T_HIGHEST INT_MAX
#define T_LOWEST INT_MIN
#define T_FLOAT 0
#elif DTYPE == 1
typedef uint T;
typedef uint UT;
#define T_HIGHEST UINT_MAX
#define T_LOWEST 0u
#define T_FLOAT 0
#elif DTYPE == 2
typedef long T;
typedef ulong UT;
#define T_HIGHEST LONG_MAX
#define T_LOWEST LONG_MIN
#define T_FLOAT 0
#elif DTYPE == 3
typedef ulong T;
typedef ulong UT;
#define T_HIGHEST ULONG_MAX
#define T_LOWEST 0ul
#define T_FLOAT 0
#elif DTYPE == 4
typedef float T;
#define T_HIGHEST INFINITY
#define T_LOWEST (-INFINITY)
#define T_FLOAT 1
#elif DTYPE == 5
typedef double T;
#define T_HIGHEST ((double)INFINITY)
#define T_LOWEST ((double)-INFINITY)
#define T_FLOAT 1
#else
#error "DTYPE must be 0..5"
#endif

// AS_T reinterprets bits of the same width as T; T_WIDE marks the 8-byte types.
#if DTYPE == 0
#define AS_T as_int
#elif DTYPE == 1
#define AS_T as_uint
#elif DTYPE == 2
#define AS_T as_long
#elif DTYPE == 3
#define AS_T as_ulong
#elif DTYPE == 4
#define AS_T as_float
#else
#define AS_T as_double
#endif
#define T_WIDE (DTYPE == 2 || DTYPE == 3 || DTYPE == 5)

#if T_FLOAT
#define IS_NAN(x) isnan(x)
#define ADD(a, b) ((a) + (b))
#else
#define IS_NAN(x) 0
// Signed overflow is undefined in OpenCL C as in C: add as unsigned (wrapping).
#define ADD(a, b) ((T)((UT)(a) + (UT)(b)))
#endif

// `candidate` replaces `current` as the running minimum / maximum.
#define BEATS_MIN(candidate, current) (!IS_NAN(current) && (IS_NAN(candidate) || (candidate) < (current)))
#define BEATS_MAX(candidate, current) (!IS_NAN(current) && (IS_NAN(candidate) || (candidate) > (current)))

#if SCAN_OP == 0
#define IDENTITY ((T)0)
inline T combine(T earlier, T later) { return ADD(earlier, later); }
#elif SCAN_OP == 1
#define IDENTITY T_HIGHEST
inline T combine(T earlier, T later) { return BEATS_MIN(later, earlier) ? later : earlier; }
#elif SCAN_OP == 2
#define IDENTITY T_LOWEST
inline T combine(T earlier, T later) { return BEATS_MAX(later, earlier) ? later : earlier; }
#else
#error "SCAN_OP must be 0..2"
#endif

#define TILE (WG * ITEMS)
// Elements in a 16-byte chunk (the unit of tile loads and stores, primitives.cl).
#define VEC (T_WIDE ? 2 : 4)
// Local-memory index with one pad word per 32, so that work-items reading ITEMS
// consecutive elements do not all hit the same bank.
#define PAD(j) ((j) + ((j) >> 5))
#define TILE_PADDED (TILE + TILE / 32)
