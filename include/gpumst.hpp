// gpumst.hpp: a header-only C++17 interface over the C API of gpumst.h.
//
//     #include <gpumst.hpp>
//
//     gpumst::Context ctx;  // CUDA, else an OpenCL GPU, else all CPU cores
//     std::vector<std::uint32_t> u = {0, 1, 2}, v = {1, 2, 0};
//     std::vector<double> w = {1.5, 0.5, 2.0};
//     gpumst::Forest forest = gpumst::minimum_spanning_forest(ctx, 3, u, v, w);
//     for (std::uint64_t id : forest.edges()) ...  // edge ids 0 and 1
//
//     std::vector<float> x = {3, 1, 2}, prefix(x.size());
//     gpumst::scan<float>(ctx, x, prefix, gpumst::Op::Sum, gpumst::Exclusive);  // 0 3 4
//
// - Failures throw gpumst::Error: status() and the library's message.
// - Arrays are passed as gpumst::Span<T> (pointer + size). std::vector, std::array,
//   C arrays and any contiguous container with data() and size() convert to it.
//   Results go into caller-owned spans whose sizes are checked before the call.
// - Element types: int32_t, uint32_t, int64_t, uint64_t, float, double (and the other
//   spellings of 32- and 64-bit integers, such as long long). The element type is
//   deduced from the output (or the weights), or given explicitly: scan<float>(...).
// - Thread safety: one Context may be used by many threads at once. Forest and
//   GraphFile are immutable once made; their const members may be called concurrently.
// - Lifetimes: the library keeps no caller pointer after a call. The spans returned by
//   Forest and GraphFile point into memory those objects own (it moves with them).
//
// Build: find_package(gpumst) and link gpumst::gpumst, or pkg-config --cflags --libs gpumst.

#ifndef GPUMST_HPP
#define GPUMST_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpumst.h"

namespace gpumst {

// ---- enumerations -------------------------------------------------------------------

enum class Status : std::int32_t {
    Ok = GPUMST_OK,
    InvalidArgument = GPUMST_INVALID_ARGUMENT,
    InvalidGraph = GPUMST_INVALID_GRAPH,
    BackendUnavailable = GPUMST_BACKEND_UNAVAILABLE,
    OutOfMemory = GPUMST_OUT_OF_MEMORY,
    DeviceError = GPUMST_DEVICE_ERROR,
    Internal = GPUMST_INTERNAL,
};

enum class Tier : std::int32_t {
    Auto = GPUMST_TIER_AUTO,  // CUDA, then an OpenCL GPU, then the CPU; honours GPUMST_BACKEND
    Cpu = GPUMST_TIER_CPU,
    OpenCL = GPUMST_TIER_OPENCL,
    Cuda = GPUMST_TIER_CUDA,
};

enum class DType : std::int32_t {
    I32 = GPUMST_I32,
    U32 = GPUMST_U32,
    I64 = GPUMST_I64,
    U64 = GPUMST_U64,
    F32 = GPUMST_F32,
    F64 = GPUMST_F64,
};

// Integer sums wrap; MIN and MAX let NaN win and keep the earlier of equal values.
enum class Op : std::int32_t { Sum = GPUMST_SUM, Min = GPUMST_MIN, Max = GPUMST_MAX };

// Inclusive: out[i] covers in[0..i]. Exclusive: out[i] covers in[0..i-1], and each
// segment starts with the identity (0, the type's max or +inf, its min or -inf).
enum class ScanKind : std::int32_t { Inclusive = GPUMST_INCLUSIVE, Exclusive = GPUMST_EXCLUSIVE };
inline constexpr ScanKind Inclusive = ScanKind::Inclusive;
inline constexpr ScanKind Exclusive = ScanKind::Exclusive;

// Every algorithm returns the identical forest; they differ in speed only.
enum class Algorithm : std::int32_t {
    Auto = GPUMST_ALGORITHM_AUTO,
    Boruvka = GPUMST_ALGORITHM_BORUVKA,
    Prim = GPUMST_ALGORITHM_PRIM,
    Strut = GPUMST_ALGORITHM_STRUT,
    Kruskal = GPUMST_ALGORITHM_KRUSKAL,
};

enum class FileFormat : std::int32_t {
    Auto = GPUMST_FORMAT_AUTO,  // from the file name (.gr, .mtx, .egr, .gmst, else an edge list)
    Dimacs = GPUMST_FORMAT_DIMACS,
    MatrixMarket = GPUMST_FORMAT_MTX,
    EdgeList = GPUMST_FORMAT_EDGELIST,
    Egr = GPUMST_FORMAT_EGR,
    Gmst = GPUMST_FORMAT_GMST,
};

// The index reported for an empty input or segment by the arg-reductions.
inline constexpr std::uint64_t empty_index = GPUMST_EMPTY_SEGMENT;

inline const char *to_string(Status status) noexcept
{
    return gpumst_status_string(static_cast<gpumst_status>(status));
}

inline const char *to_string(Tier tier) noexcept { return gpumst_tier_name(static_cast<gpumst_tier>(tier)); }

inline const char *to_string(DType dtype) noexcept
{
    switch (dtype) {
    case DType::I32: return "i32";
    case DType::U32: return "u32";
    case DType::I64: return "i64";
    case DType::U64: return "u64";
    case DType::F32: return "f32";
    case DType::F64: return "f64";
    }
    return "unknown dtype";
}

// "MAJOR.MINOR.PATCH" of the library linked at run time (the header's own version is
// GPUMST_VERSION_MAJOR/MINOR/PATCH).
inline std::string version() { return gpumst_version(); }

// ---- errors -------------------------------------------------------------------------

// Every failure of the library, and every size mismatch the wrapper catches before
// calling it. what() is "<status name>: <message>"; message() is the message alone.
class Error : public std::runtime_error {
public:
    Error(Status status, const std::string &message)
        : std::runtime_error(std::string(to_string(status)) + ": " + message),
          status_(status),
          prefix_(std::strlen(to_string(status)) + 2)
    {
    }

    Status status() const noexcept { return status_; }
    // Kept inside what()'s storage, so that copying an Error cannot throw.
    const char *message() const noexcept { return what() + prefix_; }

private:
    Status status_;
    std::size_t prefix_;
};

// ---- element types ------------------------------------------------------------------

namespace detail {

template <class T>
inline constexpr bool is_integer_v =
    std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, wchar_t> &&
    !std::is_same_v<T, char16_t> && !std::is_same_v<T, char32_t> && (sizeof(T) == 4 || sizeof(T) == 8);

template <class T>
constexpr DType dtype_for() noexcept
{
    if constexpr (std::is_same_v<T, float>)
        return DType::F32;
    else if constexpr (std::is_same_v<T, double>)
        return DType::F64;
    else if constexpr (std::is_signed_v<T>)
        return sizeof(T) == 4 ? DType::I32 : DType::I64;
    else
        return sizeof(T) == 4 ? DType::U32 : DType::U64;
}

}  // namespace detail

// Whether T is an element type of the library.
template <class T>
inline constexpr bool is_element_type_v =
    detail::is_integer_v<T> || std::is_same_v<T, float> || std::is_same_v<T, double>;

template <class T>
constexpr DType dtype_of() noexcept
{
    static_assert(!std::is_const_v<T> && !std::is_volatile_v<T>,
                  "gpumst: the element type must not be const; is an output span or container const?");
    static_assert(std::is_const_v<T> || std::is_volatile_v<T> || is_element_type_v<T>,
                  "gpumst: unsupported element type; use int32_t, uint32_t, int64_t, uint64_t, float or double");
    return detail::dtype_for<T>();
}

template <class T>
inline constexpr DType dtype_v = dtype_of<T>();

// ---- Span ---------------------------------------------------------------------------

template <class T>
class Span;

namespace detail {

template <class T>
struct is_span : std::false_type {};
template <class T>
struct is_span<Span<T>> : std::true_type {};
template <class T>
inline constexpr bool is_span_v = is_span<std::remove_cv_t<std::remove_reference_t<T>>>::value;

// Span<const X>: the type the explicit-type overloads take, and deduce X from.
template <class T>
struct is_const_span : std::false_type {};
template <class T>
struct is_const_span<Span<const T>> : std::true_type {};
template <class T>
inline constexpr bool is_const_span_v = is_const_span<std::remove_cv_t<std::remove_reference_t<T>>>::value;

// The element type of a contiguous range R (with std::data and std::size); none otherwise.
template <class R, class = void>
struct range_element {};
template <class R>
struct range_element<R, std::void_t<decltype(std::data(std::declval<R &>())),
                                    decltype(std::size(std::declval<R &>()))>> {
    using type = std::remove_pointer_t<decltype(std::data(std::declval<R &>()))>;
};
template <class R>
using range_element_t = typename range_element<std::remove_reference_t<R>>::type;

template <class R, class = void>
inline constexpr bool is_range_v = false;
template <class R>
inline constexpr bool is_range_v<R, std::void_t<range_element_t<R>>> = true;

// U elements viewed as T elements: the same type, at most adding const (as std::span).
template <class U, class T>
inline constexpr bool is_qualification_v = std::is_convertible_v<U (*)[], T (*)[]>;

template <class C, class T, class = void>
inline constexpr bool is_container_for_v = false;
template <class C, class T>
inline constexpr bool is_container_for_v<C, T, std::void_t<range_element_t<C>>> =
    !is_span_v<C> && !std::is_array_v<std::remove_reference_t<C>> && is_qualification_v<range_element_t<C>, T> &&
    // A temporary container outlives only the full expression: const views of it are
    // fine as arguments, mutable ones would write into something about to vanish.
    (std::is_lvalue_reference_v<C> || std::is_const_v<T>);

// Why a call failed, as "function: message".
[[noreturn]] inline void fail(Status status, const char *function, const std::string &message)
{
    throw Error(status, std::string(function) + ": " + message);
}

}  // namespace detail

// A view of `size()` contiguous T (pointer + size), as C++20's std::span<T>. Span<T>
// converts to Span<const T>. Copying a Span copies the view, not the elements.
template <class T>
class Span {
public:
    using element_type = T;
    using value_type = std::remove_cv_t<T>;
    using size_type = std::size_t;
    using pointer = T *;
    using reference = T &;
    using iterator = T *;

    constexpr Span() noexcept = default;
    constexpr Span(T *data, std::size_t size) noexcept : data_(data), size_(size) {}
    template <std::size_t N>
    constexpr Span(T (&array)[N]) noexcept : data_(array), size_(N)
    {
    }
    // std::vector, std::array, std::string, std::span, ...: anything with data() and size().
    template <class C, std::enable_if_t<detail::is_container_for_v<C, T>, int> = 0>
    constexpr Span(C &&container) noexcept(noexcept(std::data(container)) && noexcept(std::size(container)))
        : data_(std::data(container)), size_(std::size(container))
    {
    }
    template <class U, std::enable_if_t<!std::is_same_v<U, T> && detail::is_qualification_v<U, T>, int> = 0>
    constexpr Span(const Span<U> &other) noexcept : data_(other.data()), size_(other.size())
    {
    }

    constexpr T *data() const noexcept { return data_; }
    constexpr std::size_t size() const noexcept { return size_; }
    constexpr std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
    constexpr bool empty() const noexcept { return size_ == 0; }
    constexpr T *begin() const noexcept { return data_; }
    constexpr T *end() const noexcept { return data_ + size_; }
    // Unchecked, as operator[] of std::vector and std::span.
    constexpr T &operator[](std::size_t i) const noexcept { return data_[i]; }
    constexpr T &front() const noexcept { return data_[0]; }
    constexpr T &back() const noexcept { return data_[size_ - 1]; }

    // Elements [offset, offset + count); count defaults to the rest. Checked.
    Span subspan(std::size_t offset, std::size_t count = static_cast<std::size_t>(-1)) const
    {
        if (offset > size_)
            throw std::out_of_range("gpumst::Span::subspan: offset " + std::to_string(offset) +
                                    " is past the end of a span of " + std::to_string(size_));
        if (count == static_cast<std::size_t>(-1))
            count = size_ - offset;
        if (count > size_ - offset)
            throw std::out_of_range("gpumst::Span::subspan: " + std::to_string(count) + " elements from offset " +
                                    std::to_string(offset) + " overrun a span of " + std::to_string(size_));
        return Span(data_ + offset, count);
    }
    Span first(std::size_t count) const { return subspan(0, count); }

private:
    T *data_ = nullptr;
    std::size_t size_ = 0;
};

template <class T>
Span(T *, std::size_t) -> Span<T>;
template <class T, std::size_t N>
Span(T (&)[N]) -> Span<T>;
template <class C, class = detail::range_element_t<C>>
Span(C &) -> Span<detail::range_element_t<C>>;

// ---- Context ------------------------------------------------------------------------

struct ContextOptions {
    Tier tier = Tier::Auto;
    std::uint32_t device = 0;       // device index of a GPU tier (the CPU tier ignores it)
    std::uint32_t cpu_threads = 0;  // CPU worker threads; 0 means all cores
    void *cuda_context = nullptr;   // a CUcontext to use instead of the device's primary one
    // The most device memory (bytes) a GPU tier may use for one call; 0: the device's.
    // A forest larger than it is computed a partition of the edges at a time. On the
    // CPU tier: the most memory a forest's working arrays may take (0: no cap).
    std::uint64_t device_memory_limit = 0;
    // Several devices of the GPU tier (the first replaces `device`; everything runs
    // on it, and a forest is split across them where GPUMST_SPLIT_MIN_EDGES asks for
    // it). Empty: `device` alone; see also all_devices.
    std::vector<std::uint32_t> devices;
    // Every usable device of the tier like `device`'s (overrides `devices`).
    bool all_devices = false;
};

namespace detail {
// Messages of context_create and graph_file_read are written into a caller buffer
// with no length returned; this holds any realistic one (paths and driver errors).
inline constexpr std::size_t error_capacity = 4096;

// Reads a string through a "buffer, capacity, &length" function, retrying if it grew
// between the length query and the copy.
template <class Read>
std::string read_string(Read &&read)
{
    std::size_t length = 0;
    read(nullptr, 0, &length);
    for (;;) {
        std::string text(length + 1, '\0');
        std::size_t full = 0;
        read(&text[0], text.size(), &full);
        if (full <= length) {
            text.resize(std::strlen(text.c_str()));
            return text;
        }
        length = full;
    }
}
}  // namespace detail

// An opened library context: the tier and device every call on it runs on. Move-only;
// one Context may serve many threads at once.
class Context {
public:
    // Opens a context; a forced tier that cannot be used throws
    // Error(Status::BackendUnavailable) rather than falling back to another tier.
    explicit Context(const ContextOptions &options = ContextOptions())
    {
        gpumst_options raw;
        gpumst_options_init(&raw);
        raw.tier = static_cast<gpumst_tier>(options.tier);
        raw.device_index = options.device;
        raw.cpu_threads = options.cpu_threads;
        raw.cuda_context = options.cuda_context;
        raw.device_memory_limit = options.device_memory_limit;
        raw.devices = options.devices.data();
        raw.device_count = options.all_devices ? GPUMST_ALL_DEVICES
                                               : static_cast<std::uint32_t>(options.devices.size());
        char error[detail::error_capacity] = "";
        const gpumst_status status = gpumst_context_create(&raw, &ctx_, error, sizeof error);
        if (status != GPUMST_OK)
            throw Error(static_cast<Status>(status), error[0] != '\0' ? error : "gpumst_context_create failed");
    }
    explicit Context(Tier tier) : Context(options_for(tier)) {}

    Context(const Context &) = delete;
    Context &operator=(const Context &) = delete;
    Context(Context &&other) noexcept : ctx_(std::exchange(other.ctx_, nullptr)) {}
    Context &operator=(Context &&other) noexcept
    {
        if (this != &other) {
            gpumst_context_destroy(ctx_);
            ctx_ = std::exchange(other.ctx_, nullptr);
        }
        return *this;
    }
    ~Context() { gpumst_context_destroy(ctx_); }

    // The tier it runs on (never Tier::Auto).
    Tier tier() const
    {
        gpumst_tier tier = GPUMST_TIER_AUTO;
        check(gpumst_context_tier(handle("gpumst::Context::tier"), &tier), "gpumst_context_tier");
        return static_cast<Tier>(tier);
    }

    std::string device_name() const
    {
        gpumst_context *ctx = handle("gpumst::Context::device_name");
        return detail::read_string([&](char *buffer, std::size_t capacity, std::size_t *length) {
            check(gpumst_context_device_name(ctx, buffer, capacity, length), "gpumst_context_device_name");
        });
    }

    // Bytes of device memory (system memory for the CPU tier).
    std::uint64_t device_memory() const
    {
        std::uint64_t bytes = 0;
        check(gpumst_context_device_memory(handle("gpumst::Context::device_memory"), &bytes),
              "gpumst_context_device_memory");
        return bytes;
    }

    // How many devices of its GPU tier it uses (1 on the CPU tier).
    std::uint32_t device_count() const
    {
        std::uint32_t count = 0;
        check(gpumst_context_device_count(handle("gpumst::Context::device_count"), &count),
              "gpumst_context_device_count");
        return count;
    }

    // The message of the most recent failed call on this context ("" if none).
    std::string last_error() const
    {
        if (ctx_ == nullptr)
            return std::string();
        std::size_t length = gpumst_context_last_error(ctx_, nullptr, 0);
        for (;;) {
            std::string text(length + 1, '\0');
            const std::size_t full = gpumst_context_last_error(ctx_, &text[0], text.size());
            if (full <= length) {
                text.resize(std::strlen(text.c_str()));
                return text;
            }
            length = full;  // another thread failed with a longer message meanwhile
        }
    }

    // The C handle, for calls this header does not wrap; null once moved from.
    gpumst_context *native() const noexcept { return ctx_; }
    explicit operator bool() const noexcept { return ctx_ != nullptr; }

    // Throws Error for a failed status of a call on this context. With several threads
    // failing at once on one context, the message may be another call's (the C API
    // keeps one last error per context); the status is always this call's.
    void check(gpumst_status status, const char *function) const
    {
        if (status == GPUMST_OK)
            return;
        std::string message = last_error();
        if (message.empty())
            message = std::string(function) + " failed";
        throw Error(static_cast<Status>(status), message);
    }

    // The handle for a call; a moved-from Context throws instead of passing null.
    gpumst_context *handle(const char *function) const
    {
        if (ctx_ == nullptr)
            detail::fail(Status::InvalidArgument, function, "the gpumst::Context was moved from");
        return ctx_;
    }

private:
    static ContextOptions options_for(Tier tier)
    {
        ContextOptions options;
        options.tier = tier;
        return options;
    }

    gpumst_context *ctx_ = nullptr;
};

// What CUDA and OpenCL drivers were found and why each tier is or is not usable, as
// JSON (as `gpumst info --json`).
inline std::string probe_report()
{
    return detail::read_string([](char *buffer, std::size_t capacity, std::size_t *length) {
        const gpumst_status status = gpumst_probe_report(buffer, capacity, length);
        if (status != GPUMST_OK)
            throw Error(static_cast<Status>(status), "gpumst_probe_report failed");
    });
}

// ---- scans and arg-reductions -------------------------------------------------------

namespace detail {

inline std::string elements(std::size_t n) { return std::to_string(n) + (n == 1 ? " element" : " elements"); }

inline void expect_size(const char *function, const char *what, std::size_t got, const char *of,
                        std::size_t want)
{
    if (got != want)
        fail(Status::InvalidArgument, function,
             std::string(what) + " has " + elements(got) + " but " + of + " has " + std::to_string(want));
}

// Offsets of num_segments + 1 entries; their values are checked by the library.
inline std::uint64_t segment_count(const char *function, Span<const std::uint64_t> offsets)
{
    if (offsets.empty())
        fail(Status::InvalidArgument, function,
             "offsets is empty; it needs num_segments + 1 entries (at least {0})");
    return offsets.size() - 1;
}

template <class T>
gpumst_dtype code() noexcept
{
    return static_cast<gpumst_dtype>(dtype_of<T>());
}

// Whether the explicit-type overload below deduces T from these argument types (the
// deducing overloads step aside for it).
template <class In, class Out>
inline constexpr bool spans_deduce_v = false;
template <class T>
inline constexpr bool spans_deduce_v<Span<const T>, Span<T>> = true;

template <class In, class Out>
inline constexpr bool deducible_v =
    is_range_v<const In> && is_range_v<Out> &&
    !spans_deduce_v<std::remove_cv_t<In>, std::remove_cv_t<std::remove_reference_t<Out>>>;

template <class Out>
using output_t = range_element_t<Out>;

template <class In, class Out>
inline constexpr bool same_element_v =
    std::is_same_v<std::remove_const_t<range_element_t<const In>>, std::remove_const_t<output_t<Out>>>;

// The deducing overloads assert these, then call only `if constexpr (usable_v<In, Out>)`,
// so that a mistake gives one clear message instead of a cascade.
template <class In, class Out>
inline constexpr bool usable_v = !std::is_const_v<output_t<Out>> && same_element_v<In, Out>;

template <class In, class Out>
constexpr void assert_usable() noexcept
{
    static_assert(!std::is_const_v<output_t<Out>>,
                  "gpumst: an output must be writable: a non-const container or a Span<T> of non-const T");
    static_assert(same_element_v<In, Out>,
                  "gpumst: the input and output element types differ; convert the input first");
}

}  // namespace detail

// out = scan of in. `out` may be `in` itself (same data()) for an in-place scan;
// otherwise the two must not overlap. Sizes must be equal.
template <class T>
void scan(Context &ctx, Span<const T> in, Span<T> out, Op op, ScanKind kind)
{
    const gpumst_dtype dtype = detail::code<T>();
    detail::expect_size("gpumst::scan", "output", out.size(), "input", in.size());
    ctx.check(gpumst_scan(ctx.handle("gpumst::scan"), dtype, static_cast<gpumst_scan_op>(op),
                          static_cast<gpumst_scan_kind>(kind), in.data(), out.data(), in.size()),
              "gpumst_scan");
}

// Segmented scan: flags[i] != 0 starts a segment at i (index 0 always does). One flag
// per element.
template <class T>
void segmented_scan(Context &ctx, Span<const T> in, Span<T> out, Span<const std::uint8_t> flags, Op op,
                    ScanKind kind)
{
    const gpumst_dtype dtype = detail::code<T>();
    detail::expect_size("gpumst::segmented_scan", "output", out.size(), "input", in.size());
    detail::expect_size("gpumst::segmented_scan", "flags", flags.size(), "input", in.size());
    ctx.check(gpumst_segmented_scan_flags(ctx.handle("gpumst::segmented_scan"), dtype,
                                          static_cast<gpumst_scan_op>(op), static_cast<gpumst_scan_kind>(kind),
                                          in.data(), out.data(), flags.data(), in.size()),
              "gpumst_segmented_scan_flags");
}

// Segmented scan over CSR offsets: segment s is [offsets[s], offsets[s+1]). Offsets
// start at 0, never decrease and end at in.size(); empty segments are allowed.
template <class T>
void segmented_scan(Context &ctx, Span<const T> in, Span<T> out, Span<const std::uint64_t> offsets, Op op,
                    ScanKind kind)
{
    const gpumst_dtype dtype = detail::code<T>();
    detail::expect_size("gpumst::segmented_scan", "output", out.size(), "input", in.size());
    const std::uint64_t segments = detail::segment_count("gpumst::segmented_scan", offsets);
    ctx.check(gpumst_segmented_scan_offsets(ctx.handle("gpumst::segmented_scan"), dtype,
                                            static_cast<gpumst_scan_op>(op), static_cast<gpumst_scan_kind>(kind),
                                            in.data(), out.data(), in.size(), offsets.data(), segments),
              "gpumst_segmented_scan_offsets");
}

// The same, with T deduced from the output: scan(ctx, in, out, Op::Sum, Inclusive).
template <class In, class Out, std::enable_if_t<detail::deducible_v<In, Out>, int> = 0>
void scan(Context &ctx, const In &in, Out &&out, Op op, ScanKind kind)
{
    detail::assert_usable<In, Out>();
    if constexpr (detail::usable_v<In, Out>) {
        using T = detail::output_t<Out>;
        scan<T>(ctx, Span<const T>(in), Span<T>(out), op, kind);
    }
}

template <class In, class Out, std::enable_if_t<detail::deducible_v<In, Out>, int> = 0>
void segmented_scan(Context &ctx, const In &in, Out &&out, Span<const std::uint8_t> flags, Op op, ScanKind kind)
{
    detail::assert_usable<In, Out>();
    if constexpr (detail::usable_v<In, Out>) {
        using T = detail::output_t<Out>;
        segmented_scan<T>(ctx, Span<const T>(in), Span<T>(out), flags, op, kind);
    }
}

template <class In, class Out, std::enable_if_t<detail::deducible_v<In, Out>, int> = 0>
void segmented_scan(Context &ctx, const In &in, Out &&out, Span<const std::uint64_t> offsets, Op op,
                    ScanKind kind)
{
    detail::assert_usable<In, Out>();
    if constexpr (detail::usable_v<In, Out>) {
        using T = detail::output_t<Out>;
        segmented_scan<T>(ctx, Span<const T>(in), Span<T>(out), offsets, op, kind);
    }
}

// The extreme value and the first index holding it. For an empty input: index ==
// empty_index and value the identity (the type's max or +inf for argmin, its min or
// -inf for argmax). NaN counts as the extreme, so the first NaN wins.
template <class T>
struct ArgResult {
    T value;
    std::uint64_t index;

    bool empty() const noexcept { return index == empty_index; }
};

template <class T>
ArgResult<T> argmin(Context &ctx, Span<const T> in)
{
    ArgResult<T> result{T(), empty_index};
    ctx.check(gpumst_argmin(ctx.handle("gpumst::argmin"), detail::code<T>(), in.data(), in.size(), &result.value,
                            &result.index),
              "gpumst_argmin");
    return result;
}

template <class T>
ArgResult<T> argmax(Context &ctx, Span<const T> in)
{
    ArgResult<T> result{T(), empty_index};
    ctx.check(gpumst_argmax(ctx.handle("gpumst::argmax"), detail::code<T>(), in.data(), in.size(), &result.value,
                            &result.index),
              "gpumst_argmax");
    return result;
}

template <class In, std::enable_if_t<detail::is_range_v<const In> && !detail::is_const_span_v<In>, int> = 0>
auto argmin(Context &ctx, const In &in)
{
    using T = std::remove_const_t<detail::range_element_t<const In>>;
    return argmin<T>(ctx, Span<const T>(in));
}

template <class In, std::enable_if_t<detail::is_range_v<const In> && !detail::is_const_span_v<In>, int> = 0>
auto argmax(Context &ctx, const In &in)
{
    using T = std::remove_const_t<detail::range_element_t<const In>>;
    return argmax<T>(ctx, Span<const T>(in));
}

namespace detail {
template <class T, class Call>
void segmented_arg(Context &ctx, const char *function, const char *c_function, Span<const T> in,
                   Span<const std::uint64_t> offsets, Span<T> values, Span<std::uint64_t> indices, Call call)
{
    const gpumst_dtype dtype = code<T>();
    const std::uint64_t segments = segment_count(function, offsets);
    const auto expect_one_per_segment = [&](const char *what, std::size_t size) {
        if (size != segments)
            fail(Status::InvalidArgument, function,
                 std::string(what) + " has " + elements(size) + " but offsets has " + std::to_string(segments) +
                     " segments; it needs one per segment");
    };
    expect_one_per_segment("values", values.size());
    expect_one_per_segment("indices", indices.size());
    ctx.check(call(ctx.handle(function), dtype, in.data(), in.size(), offsets.data(), segments, values.data(),
                   indices.data()),
              c_function);
}
}  // namespace detail

// Per segment s = [offsets[s], offsets[s+1]) of `in`: its minimum into values[s] and
// the first index (into `in`) holding it into indices[s]. Empty segments get the
// type's max (+inf) and empty_index. values and indices have offsets.size() - 1 entries.
template <class T>
void segmented_argmin(Context &ctx, Span<const T> in, Span<const std::uint64_t> offsets, Span<T> values,
                      Span<std::uint64_t> indices)
{
    detail::segmented_arg<T>(ctx, "gpumst::segmented_argmin", "gpumst_segmented_argmin", in, offsets, values,
                             indices, gpumst_segmented_argmin);
}

// As segmented_argmin, for the maximum; empty segments get the type's min (-inf).
template <class T>
void segmented_argmax(Context &ctx, Span<const T> in, Span<const std::uint64_t> offsets, Span<T> values,
                      Span<std::uint64_t> indices)
{
    detail::segmented_arg<T>(ctx, "gpumst::segmented_argmax", "gpumst_segmented_argmax", in, offsets, values,
                             indices, gpumst_segmented_argmax);
}

template <class In, class Values, std::enable_if_t<detail::deducible_v<In, Values>, int> = 0>
void segmented_argmin(Context &ctx, const In &in, Span<const std::uint64_t> offsets, Values &&values,
                      Span<std::uint64_t> indices)
{
    detail::assert_usable<In, Values>();
    if constexpr (detail::usable_v<In, Values>) {
        using T = detail::output_t<Values>;
        segmented_argmin<T>(ctx, Span<const T>(in), offsets, Span<T>(values), indices);
    }
}

template <class In, class Values, std::enable_if_t<detail::deducible_v<In, Values>, int> = 0>
void segmented_argmax(Context &ctx, const In &in, Span<const std::uint64_t> offsets, Values &&values,
                      Span<std::uint64_t> indices)
{
    detail::assert_usable<In, Values>();
    if constexpr (detail::usable_v<In, Values>) {
        using T = detail::output_t<Values>;
        segmented_argmax<T>(ctx, Span<const T>(in), offsets, Span<T>(values), indices);
    }
}

// ---- forests ------------------------------------------------------------------------

// A forest's exact total weight.
struct TotalWeight {
    bool is_float = false;          // f32/f64 weights: `value` is the exact sum
    double value = 0.0;             // integer weights: rounded beyond 2^53
    std::int64_t exact_high = 0;    // integer weights: the exact total as a 128-bit two's
    std::uint64_t exact_low = 0;    // complement number, exact_high * 2^64 + exact_low

    // The exact integer total, if it fits (integer weights only).
    std::optional<std::int64_t> as_int64() const noexcept
    {
        constexpr std::uint64_t int64_max = static_cast<std::uint64_t>(INT64_MAX);
        if (is_float)
            return std::nullopt;
        if (exact_high == 0 && exact_low <= int64_max)
            return static_cast<std::int64_t>(exact_low);
        if (exact_high == -1 && exact_low > int64_max)
            return -static_cast<std::int64_t>(~exact_low) - 1;  // without an out-of-range cast
        return std::nullopt;
    }
    std::optional<std::uint64_t> as_uint64() const noexcept
    {
        if (is_float || exact_high != 0)
            return std::nullopt;
        return exact_low;
    }
};

// A computed minimum (or maximum) spanning forest; move-only. Its edges are ids into
// the input graph, ascending.
class Forest {
public:
    Forest() noexcept = default;  // an empty forest: no edges, no vertices
    // Takes ownership of a forest from gpumst_msf.
    explicit Forest(gpumst_forest *owned) noexcept : forest_(owned) {}

    Forest(const Forest &) = delete;
    Forest &operator=(const Forest &) = delete;
    Forest(Forest &&other) noexcept : forest_(std::exchange(other.forest_, nullptr)) {}
    Forest &operator=(Forest &&other) noexcept
    {
        if (this != &other) {
            gpumst_forest_free(forest_);
            forest_ = std::exchange(other.forest_, nullptr);
        }
        return *this;
    }
    ~Forest() { gpumst_forest_free(forest_); }

    // The edge ids, ascending; a view into the forest (no copy).
    Span<const std::uint64_t> edges() const noexcept
    {
        return Span<const std::uint64_t>(gpumst_forest_edges(forest_), gpumst_forest_num_edges(forest_));
    }
    std::uint64_t num_edges() const noexcept { return gpumst_forest_num_edges(forest_); }
    std::uint64_t num_vertices() const noexcept { return gpumst_forest_num_vertices(forest_); }
    // Connected components, isolated vertices included.
    std::uint64_t num_components() const noexcept { return gpumst_forest_num_components(forest_); }
    // Per vertex, the smallest vertex id of its component; empty unless MsfOptions::labels.
    Span<const std::uint32_t> labels() const noexcept
    {
        const std::uint32_t *labels = gpumst_forest_labels(forest_);
        return Span<const std::uint32_t>(labels, labels != nullptr ? num_vertices() : 0);
    }
    // The tier that computed it (Tier::Auto for an empty Forest).
    Tier tier() const noexcept { return static_cast<Tier>(gpumst_forest_tier(forest_)); }

    // Summed in ascending edge-id order; an unweighted forest weighs its edge count.
    TotalWeight total_weight() const
    {
        gpumst_total_weight raw{};
        const gpumst_status status = gpumst_forest_total_weight(valid("total_weight"), &raw);
        if (status != GPUMST_OK)
            throw Error(static_cast<Status>(status), "gpumst_forest_total_weight failed");
        TotalWeight total;
        total.is_float = raw.is_float != 0;
        total.value = raw.value;
        total.exact_high = raw.exact_high;
        total.exact_low = raw.exact_low;
        return total;
    }
    // Exact decimal text for integers; the shortest round-trip form for floats.
    std::string total_weight_string() const
    {
        const gpumst_forest *forest = valid("total_weight_string");
        return detail::read_string([&](char *buffer, std::size_t capacity, std::size_t *length) {
            const gpumst_status status = gpumst_forest_total_weight_string(forest, buffer, capacity, length);
            if (status != GPUMST_OK)
                throw Error(static_cast<Status>(status), "gpumst_forest_total_weight_string failed");
        });
    }

    gpumst_forest *native() const noexcept { return forest_; }
    // Gives up ownership: the caller frees the result with gpumst_forest_free.
    gpumst_forest *release() noexcept { return std::exchange(forest_, nullptr); }
    explicit operator bool() const noexcept { return forest_ != nullptr; }

private:
    const gpumst_forest *valid(const char *what) const
    {
        if (forest_ == nullptr)
            detail::fail(Status::InvalidArgument, "gpumst::Forest",
                         std::string(what) + " of an empty (moved-from) forest");
        return forest_;
    }

    gpumst_forest *forest_ = nullptr;
};

struct MsfOptions {
    Algorithm algorithm = Algorithm::Auto;
    bool labels = false;      // also compute Forest::labels()
    bool maximum = false;     // the maximum spanning forest (equal weights still prefer the lower id)
    bool unweighted = false;  // ignore the weights: the spanning forest of the lowest edge ids
};

namespace detail {

inline std::uint32_t msf_flags(const MsfOptions &options) noexcept
{
    return (options.labels ? GPUMST_MSF_LABELS : 0u) | (options.maximum ? GPUMST_MSF_MAXIMUM : 0u) |
           (options.unweighted ? GPUMST_MSF_UNWEIGHTED : 0u);
}

inline Forest run_msf(Context &ctx, const gpumst_graph &graph, const MsfOptions &options)
{
    gpumst_forest *forest = nullptr;
    ctx.check(gpumst_msf(ctx.handle("gpumst::minimum_spanning_forest"), &graph,
                         static_cast<gpumst_algorithm>(options.algorithm), msf_flags(options), &forest),
              "gpumst_msf");
    return Forest(forest);
}

inline Forest edge_list_msf(Context &ctx, std::uint64_t num_vertices, Span<const std::uint32_t> u,
                            Span<const std::uint32_t> v, gpumst_dtype weight_type, const void *weights,
                            const MsfOptions &options)
{
    expect_size("gpumst::minimum_spanning_forest", "v", v.size(), "u", u.size());
    gpumst_graph graph;
    gpumst_graph_init_edge_list(&graph, num_vertices, u.size(), u.data(), v.data(), weight_type, weights);
    return run_msf(ctx, graph, options);
}

inline Forest csr_msf(Context &ctx, Span<const std::uint64_t> offsets, Span<const std::uint32_t> targets,
                      gpumst_dtype weight_type, const void *weights, const MsfOptions &options)
{
    if (offsets.empty())
        fail(Status::InvalidArgument, "gpumst::minimum_spanning_forest_csr",
             "offsets is empty; it needs num_vertices + 1 entries (at least {0})");
    gpumst_graph graph;
    gpumst_graph_init_csr(&graph, offsets.size() - 1, targets.size(), offsets.data(), targets.data(), weight_type,
                          weights);
    return run_msf(ctx, graph, options);
}

template <class Weights>
inline constexpr bool is_weight_range_v = is_range_v<const Weights> && !is_const_span_v<Weights>;

}  // namespace detail

// The minimum spanning forest of an edge list: edge i joins u[i] and v[i] (ids below
// num_vertices) with weight w[i], and has id i. Ties go to the lower id; self-loops
// are ignored; parallel edges are fine. An invalid graph (an id out of range, a NaN
// weight) throws Error(Status::InvalidGraph) naming the first offending edge.
template <class W>
Forest minimum_spanning_forest(Context &ctx, std::uint64_t num_vertices, Span<const std::uint32_t> u,
                               Span<const std::uint32_t> v, Span<const W> w, const MsfOptions &options = {})
{
    const gpumst_dtype dtype = detail::code<W>();
    detail::expect_size("gpumst::minimum_spanning_forest", "w", w.size(), "u", u.size());
    return detail::edge_list_msf(ctx, num_vertices, u, v, dtype, w.data(), options);
}

// With W deduced from the weights container: minimum_spanning_forest(ctx, n, u, v, w).
template <class Weights, std::enable_if_t<detail::is_weight_range_v<Weights>, int> = 0>
Forest minimum_spanning_forest(Context &ctx, std::uint64_t num_vertices, Span<const std::uint32_t> u,
                               Span<const std::uint32_t> v, const Weights &w, const MsfOptions &options = {})
{
    using W = std::remove_const_t<detail::range_element_t<const Weights>>;
    return minimum_spanning_forest<W>(ctx, num_vertices, u, v, Span<const W>(w), options);
}

// Unweighted: the spanning forest of the lowest edge ids.
inline Forest minimum_spanning_forest(Context &ctx, std::uint64_t num_vertices, Span<const std::uint32_t> u,
                                      Span<const std::uint32_t> v, const MsfOptions &options = {})
{
    return detail::edge_list_msf(ctx, num_vertices, u, v, GPUMST_U32, nullptr, options);
}

// The minimum spanning forest of a symmetric CSR graph: the neighbours of x are
// targets[offsets[x] .. offsets[x+1]), each edge listed in both directions with the same
// weight, w[k] belonging to targets[k]. An edge's id is the position k of its entry from
// the lower vertex id. offsets has num_vertices + 1 entries.
template <class W>
Forest minimum_spanning_forest_csr(Context &ctx, Span<const std::uint64_t> offsets,
                                   Span<const std::uint32_t> targets, Span<const W> w,
                                   const MsfOptions &options = {})
{
    const gpumst_dtype dtype = detail::code<W>();
    detail::expect_size("gpumst::minimum_spanning_forest_csr", "w", w.size(), "targets", targets.size());
    return detail::csr_msf(ctx, offsets, targets, dtype, w.data(), options);
}

template <class Weights, std::enable_if_t<detail::is_weight_range_v<Weights>, int> = 0>
Forest minimum_spanning_forest_csr(Context &ctx, Span<const std::uint64_t> offsets,
                                   Span<const std::uint32_t> targets, const Weights &w,
                                   const MsfOptions &options = {})
{
    using W = std::remove_const_t<detail::range_element_t<const Weights>>;
    return minimum_spanning_forest_csr<W>(ctx, offsets, targets, Span<const W>(w), options);
}

inline Forest minimum_spanning_forest_csr(Context &ctx, Span<const std::uint64_t> offsets,
                                          Span<const std::uint32_t> targets, const MsfOptions &options = {})
{
    return detail::csr_msf(ctx, offsets, targets, GPUMST_U32, nullptr, options);
}

// ---- graph files --------------------------------------------------------------------

// A graph read with the library's readers: DIMACS .gr, Matrix Market .mtx, plain edge
// lists, ECL .egr and gpumst .gmst, each optionally .gz or .xz compressed. Edge i is the i-th edge of
// the file (both arcs of an edge give one edge); vertex ids are 0-based (add
// vertex_base() for the file's own ids). Move-only; the arrays belong to it.
class GraphFile {
public:
    // A file that cannot be opened throws Error(Status::InvalidArgument), malformed
    // contents Error(Status::InvalidGraph) with "FILE:LINE: what was wrong".
    explicit GraphFile(const std::string &path, FileFormat format = FileFormat::Auto)
    {
        char error[detail::error_capacity] = "";
        const gpumst_status status = gpumst_graph_file_read(path.c_str(), static_cast<gpumst_file_format>(format),
                                                            &file_, error, sizeof error);
        if (status != GPUMST_OK)
            throw Error(static_cast<Status>(status),
                        error[0] != '\0' ? std::string(error) : "gpumst_graph_file_read failed for " + path);
        const gpumst_status viewed = gpumst_graph_file_view(file_, &graph_);
        if (viewed != GPUMST_OK) {
            gpumst_graph_file_free(file_);
            throw Error(static_cast<Status>(viewed), "gpumst_graph_file_view failed for " + path);
        }
    }
    static GraphFile read(const std::string &path, FileFormat format = FileFormat::Auto)
    {
        return GraphFile(path, format);
    }

    GraphFile(const GraphFile &) = delete;
    GraphFile &operator=(const GraphFile &) = delete;
    GraphFile(GraphFile &&other) noexcept : file_(std::exchange(other.file_, nullptr)), graph_(other.graph_)
    {
        other.graph_ = gpumst_graph();
    }
    GraphFile &operator=(GraphFile &&other) noexcept
    {
        if (this != &other) {
            gpumst_graph_file_free(file_);
            file_ = std::exchange(other.file_, nullptr);
            graph_ = std::exchange(other.graph_, gpumst_graph());
        }
        return *this;
    }
    ~GraphFile() { gpumst_graph_file_free(file_); }

    // The format it was read as (never FileFormat::Auto, except once moved from).
    FileFormat format() const noexcept { return static_cast<FileFormat>(gpumst_graph_file_format(file_)); }
    // What to add to a 0-based vertex id to get the file's id: 1 for DIMACS and Matrix
    // Market, 0 for edge lists and .egr.
    std::uint32_t vertex_base() const noexcept { return gpumst_graph_file_vertex_base(file_); }
    std::uint64_t num_vertices() const noexcept { return graph_.num_vertices; }
    std::uint64_t num_edges() const noexcept { return graph_.num_edges; }
    Span<const std::uint32_t> u() const noexcept { return Span<const std::uint32_t>(graph_.u, graph_.num_edges); }
    Span<const std::uint32_t> v() const noexcept { return Span<const std::uint32_t>(graph_.v, graph_.num_edges); }

    // The weights' type: integers come in the narrowest of u32, i64, u64 that holds
    // them (.egr: i32), reals as f64; nullopt for a file without weights.
    std::optional<DType> weight_type() const noexcept
    {
        if (graph_.weights == nullptr)
            return std::nullopt;
        return static_cast<DType>(graph_.weight_type);
    }

    // The weights as W, which must be weight_type()'s type.
    template <class W>
    Span<const W> weights() const
    {
        const DType want = dtype_v<W>;
        const std::optional<DType> have = weight_type();
        if (!have)
            detail::fail(Status::InvalidArgument, "gpumst::GraphFile::weights", "the file has no weights");
        if (*have != want)
            detail::fail(Status::InvalidArgument, "gpumst::GraphFile::weights",
                         std::string("the weights are ") + to_string(*have) + ", not " + to_string(want));
        return Span<const W>(static_cast<const W *>(graph_.weights), graph_.num_edges);
    }

    // The edge-list view of the C API (for gpumst_msf), valid while this object lives.
    const gpumst_graph &graph() const noexcept { return graph_; }
    const gpumst_graph_file *native() const noexcept { return file_; }

private:
    gpumst_graph_file *file_ = nullptr;
    gpumst_graph graph_ = gpumst_graph();
};

// The forest of a graph read from a file (its weights, or none if it has none).
inline Forest minimum_spanning_forest(Context &ctx, const GraphFile &file, const MsfOptions &options = {})
{
    if (file.native() == nullptr)
        detail::fail(Status::InvalidArgument, "gpumst::minimum_spanning_forest",
                     "the gpumst::GraphFile was moved from");
    return detail::run_msf(ctx, file.graph(), options);
}

// ---- data in device memory ---------------------------------------------------------
//
// Device memory is what the context's GPU tier calls memory: on CUDA a device pointer
// of the device's primary context (from cudaMalloc, cuMemAlloc, CuPy, PyTorch); on
// OpenCL a cl_mem made in the cl_context of native(ctx), passed as its pointer value.
// `stream` is a CUstream or cl_command_queue: the call's work starts after what was
// issued to it so far (nullptr: none), and is complete when the call returns.

// The native objects of the context's GPU tier (CUcontext and CUstream, or cl_context,
// cl_command_queue and cl_device_id). A context without a GPU tier throws
// Error(Status::BackendUnavailable).
inline gpumst_native native(Context &ctx)
{
    gpumst_native out;
    ctx.check(gpumst_context_native(ctx.handle("gpumst::native"), &out), "gpumst_context_native");
    return out;
}

// What a device forest call returns to the host; the edge ids stay on the device.
struct DeviceForest {
    std::uint64_t num_edges = 0;
    std::uint64_t num_components = 0;
    std::optional<TotalWeight> total_weight;  // when asked for (it brings the forest's weights over)
};

struct DeviceMsfOptions {
    MsfOptions msf;               // msf.labels is refused: labels go to `labels` below
    void *stream = nullptr;       // the caller's CUstream or cl_command_queue
    bool total_weight = true;     // also compute DeviceForest::total_weight
    // Device memory for num_vertices labels: where given, per vertex the smallest vertex
    // id of its component, computed on the device from the forest (as Forest::labels).
    std::uint32_t *labels = nullptr;
};

namespace detail {
inline DeviceForest device_msf(Context &ctx, const gpumst_device_graph &graph, std::uint64_t *edge_ids,
                               const DeviceMsfOptions &options)
{
    DeviceForest forest;
    TotalWeight total;
    gpumst_total_weight raw;
    ctx.check(gpumst_msf_device(ctx.handle("gpumst::minimum_spanning_forest_device"), &graph,
                                static_cast<gpumst_algorithm>(options.msf.algorithm), msf_flags(options.msf),
                                edge_ids, options.stream, &forest.num_edges, &forest.num_components,
                                options.total_weight ? &raw : nullptr),
              "gpumst_msf_device");
    if (options.labels != nullptr)
        ctx.check(gpumst_forest_labels_device(ctx.handle("gpumst::minimum_spanning_forest_device"), &graph, edge_ids,
                                              forest.num_edges, options.labels, nullptr),
                  "gpumst_forest_labels_device");
    if (options.total_weight) {
        total.is_float = raw.is_float != 0;
        total.value = raw.value;
        total.exact_high = raw.exact_high;
        total.exact_low = raw.exact_low;
        forest.total_weight = total;
    }
    return forest;
}

inline DeviceForest device_edge_list_msf(Context &ctx, std::uint64_t num_vertices, std::uint64_t num_edges,
                                         const void *u, const void *v, gpumst_dtype weight_type, const void *w,
                                         std::uint64_t *edge_ids, const DeviceMsfOptions &options)
{
    gpumst_device_graph graph;
    gpumst_device_graph_init(&graph, num_vertices, num_edges, const_cast<void *>(u), const_cast<void *>(v),
                             weight_type, const_cast<void *>(w));
    return device_msf(ctx, graph, edge_ids, options);
}

inline DeviceForest device_csr_msf(Context &ctx, std::uint64_t num_vertices, std::uint64_t num_entries,
                                   const std::uint64_t *offsets, const std::uint32_t *targets, gpumst_dtype weight_type,
                                   const void *w, std::uint64_t *edge_ids, const DeviceMsfOptions &options)
{
    gpumst_device_graph graph;
    gpumst_device_graph_init_csr(&graph, num_vertices, num_entries, const_cast<std::uint64_t *>(offsets),
                                 const_cast<std::uint32_t *>(targets), weight_type, const_cast<void *>(w));
    return device_msf(ctx, graph, edge_ids, options);
}
}  // namespace detail

// The minimum spanning forest of an edge list in device memory (num_edges entries of
// u, v and w each); its edge ids, ascending, go to device memory edge_ids, which holds
// min(num_vertices - 1, num_edges) of them. Validation runs on the device and throws
// Error(Status::InvalidGraph) with the host call's message.
template <class W>
DeviceForest minimum_spanning_forest_device(Context &ctx, std::uint64_t num_vertices, std::uint64_t num_edges,
                                            const std::uint32_t *u, const std::uint32_t *v, const W *w,
                                            std::uint64_t *edge_ids, const DeviceMsfOptions &options = {})
{
    return detail::device_edge_list_msf(ctx, num_vertices, num_edges, u, v, detail::code<W>(), w, edge_ids, options);
}

// Unweighted: the spanning forest of the lowest edge ids.
inline DeviceForest minimum_spanning_forest_device(Context &ctx, std::uint64_t num_vertices,
                                                   std::uint64_t num_edges, const std::uint32_t *u,
                                                   const std::uint32_t *v, std::uint64_t *edge_ids,
                                                   const DeviceMsfOptions &options = {})
{
    return detail::device_edge_list_msf(ctx, num_vertices, num_edges, u, v, GPUMST_U32, nullptr, edge_ids,
                                        options);
}

// The minimum spanning forest of a symmetric CSR in device memory: num_vertices + 1
// offsets, num_entries targets and weights (equal in both directions). Edge ids are the
// CSR positions of the entries with source < target, as for minimum_spanning_forest_csr;
// edge_ids (device memory) holds min(num_vertices - 1, num_entries / 2) of them. The
// offsets, targets and symmetry are checked on the device; a fault throws
// Error(Status::InvalidGraph) with the host call's message.
template <class W>
DeviceForest minimum_spanning_forest_csr_device(Context &ctx, std::uint64_t num_vertices, std::uint64_t num_entries,
                                                const std::uint64_t *offsets, const std::uint32_t *targets,
                                                const W *w, std::uint64_t *edge_ids,
                                                const DeviceMsfOptions &options = {})
{
    return detail::device_csr_msf(ctx, num_vertices, num_entries, offsets, targets, detail::code<W>(), w, edge_ids,
                                  options);
}

// Unweighted CSR: the spanning forest of the lowest edge ids.
inline DeviceForest minimum_spanning_forest_csr_device(Context &ctx, std::uint64_t num_vertices,
                                                       std::uint64_t num_entries, const std::uint64_t *offsets,
                                                       const std::uint32_t *targets, std::uint64_t *edge_ids,
                                                       const DeviceMsfOptions &options = {})
{
    return detail::device_csr_msf(ctx, num_vertices, num_entries, offsets, targets, GPUMST_U32, nullptr, edge_ids,
                                  options);
}

// out = scan of in, n elements in device memory (out may be in).
template <class T>
void scan_device(Context &ctx, const T *in, T *out, std::uint64_t n, Op op, ScanKind kind, void *stream = nullptr)
{
    ctx.check(gpumst_scan_device(ctx.handle("gpumst::scan_device"), detail::code<T>(),
                                 static_cast<gpumst_scan_op>(op), static_cast<gpumst_scan_kind>(kind), in, out, n,
                                 stream),
              "gpumst_scan_device");
}

// Segmented scan of n elements in device memory (out may be in): segment s is
// [offsets[s], offsets[s+1]), with num_segments + 1 offsets in device memory.
template <class T>
void segmented_scan_device(Context &ctx, const T *in, T *out, std::uint64_t n, const std::uint64_t *offsets,
                           std::uint64_t num_segments, Op op, ScanKind kind, void *stream = nullptr)
{
    ctx.check(gpumst_segmented_scan_offsets_device(ctx.handle("gpumst::segmented_scan_device"), detail::code<T>(),
                                                   static_cast<gpumst_scan_op>(op),
                                                   static_cast<gpumst_scan_kind>(kind), in, out, n, offsets,
                                                   num_segments, stream),
              "gpumst_segmented_scan_offsets_device");
}

// Segmented scan of n elements in device memory (out may be in): flags[i] != 0 (n
// bytes in device memory) starts a segment at i; index 0 always does.
template <class T>
void segmented_scan_device(Context &ctx, const T *in, T *out, std::uint64_t n, const std::uint8_t *flags, Op op,
                           ScanKind kind, void *stream = nullptr)
{
    ctx.check(gpumst_segmented_scan_flags_device(ctx.handle("gpumst::segmented_scan_device"), detail::code<T>(),
                                                 static_cast<gpumst_scan_op>(op),
                                                 static_cast<gpumst_scan_kind>(kind), in, out, flags, n, stream),
              "gpumst_segmented_scan_flags_device");
}

// The minimum of n elements in device memory and its first index (n == 0: as argmin).
template <class T>
ArgResult<T> argmin_device(Context &ctx, const T *in, std::uint64_t n, void *stream = nullptr)
{
    ArgResult<T> result{T(), empty_index};
    ctx.check(gpumst_argmin_device(ctx.handle("gpumst::argmin_device"), detail::code<T>(), in, n, stream,
                                   &result.value, &result.index),
              "gpumst_argmin_device");
    return result;
}

// The maximum of n elements in device memory and its first index (n == 0: as argmax).
template <class T>
ArgResult<T> argmax_device(Context &ctx, const T *in, std::uint64_t n, void *stream = nullptr)
{
    ArgResult<T> result{T(), empty_index};
    ctx.check(gpumst_argmax_device(ctx.handle("gpumst::argmax_device"), detail::code<T>(), in, n, stream,
                                   &result.value, &result.index),
              "gpumst_argmax_device");
    return result;
}

// Per segment [offsets[s], offsets[s+1]) of n elements in device memory (num_segments
// + 1 offsets in device memory): the minimum into values[s] and its first index into
// indices[s] (num_segments of each, in device memory; empty segments get the type's
// max and empty_index).
template <class T>
void segmented_argmin_device(Context &ctx, const T *in, std::uint64_t n, const std::uint64_t *offsets,
                             std::uint64_t num_segments, T *values, std::uint64_t *indices,
                             void *stream = nullptr)
{
    ctx.check(gpumst_segmented_argmin_device(ctx.handle("gpumst::segmented_argmin_device"), detail::code<T>(), in,
                                             n, offsets, num_segments, values, indices, stream),
              "gpumst_segmented_argmin_device");
}

// As segmented_argmin_device, for the maximum; empty segments get the type's min.
template <class T>
void segmented_argmax_device(Context &ctx, const T *in, std::uint64_t n, const std::uint64_t *offsets,
                             std::uint64_t num_segments, T *values, std::uint64_t *indices,
                             void *stream = nullptr)
{
    ctx.check(gpumst_segmented_argmax_device(ctx.handle("gpumst::segmented_argmax_device"), detail::code<T>(), in,
                                             n, offsets, num_segments, values, indices, stream),
              "gpumst_segmented_argmax_device");
}

}  // namespace gpumst

#endif  // GPUMST_HPP
