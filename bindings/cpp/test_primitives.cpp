// Scans, segmented scans and (segmented) arg-reductions for all six element types,
// against sequential references computed here; then the size checks and errors.
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "test_support.hpp"

using gpumst::Op;
using gpumst::ScanKind;
using gpumst::Span;
using gpumst::Status;
using gpumst_test::Rng;
using gpumst_test::throws_error;

namespace {

const Op all_ops[] = {Op::Sum, Op::Min, Op::Max};
const ScanKind all_kinds[] = {gpumst::Inclusive, gpumst::Exclusive};

const char *name(Op op) { return op == Op::Sum ? "sum" : op == Op::Min ? "min" : "max"; }
const char *name(ScanKind kind) { return kind == gpumst::Inclusive ? "inclusive" : "exclusive"; }

template <class T>
bool is_nan(T x)
{
    if constexpr (std::is_floating_point_v<T>)
        return std::isnan(x);
    else
        return false;
}

// The identity each exclusive segment starts with.
template <class T>
T identity(Op op)
{
    using limits = std::numeric_limits<T>;
    if (op == Op::Sum)
        return T(0);
    if constexpr (std::is_floating_point_v<T>)
        return op == Op::Min ? limits::infinity() : -limits::infinity();
    else
        return op == Op::Min ? limits::max() : limits::lowest();
}

// a op b: integer sums wrap; NaN wins min and max; equal values keep the earlier one.
template <class T>
T combine(Op op, T a, T b)
{
    if (op == Op::Sum) {
        if constexpr (std::is_integral_v<T>) {
            using U = std::make_unsigned_t<T>;
            return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
        } else {
            return a + b;
        }
    }
    if (is_nan(a))
        return a;
    if (is_nan(b))
        return b;
    return op == Op::Min ? (b < a ? b : a) : (a < b ? b : a);
}

// Scan of `in` where starts[i] != 0 begins a segment (index 0 always does; no starts: one segment).
template <class T>
std::vector<T> reference_scan(const std::vector<T> &in, const std::vector<std::uint8_t> &starts, Op op, ScanKind kind)
{
    std::vector<T> out(in.size());
    T acc = identity<T>(op);
    for (std::size_t i = 0; i < in.size(); i++) {
        if (i == 0 || (!starts.empty() && starts[i] != 0))
            acc = identity<T>(op);
        const T next = combine(op, acc, in[i]);
        out[i] = kind == gpumst::Inclusive ? next : acc;
        acc = next;
    }
    return out;
}

std::vector<std::uint8_t> starts_of(const std::vector<std::uint64_t> &offsets, std::size_t n)
{
    std::vector<std::uint8_t> starts(n, 0);
    for (std::uint64_t o : offsets)
        if (o < n)
            starts[o] = 1;
    return starts;
}

// Equal element by element, NaN equal to NaN; names the first difference.
template <class T>
::testing::AssertionResult same(const std::vector<T> &got, const std::vector<T> &want)
{
    if (got.size() != want.size())
        return ::testing::AssertionFailure() << "size " << got.size() << ", expected " << want.size();
    for (std::size_t i = 0; i < got.size(); i++)
        if (!(got[i] == want[i] || (is_nan(got[i]) && is_nan(want[i]))))
            return ::testing::AssertionFailure()
                   << "element " << i << " of " << got.size() << " is " << +got[i] << ", expected " << +want[i];
    return ::testing::AssertionSuccess();
}

// Integers over their whole range (sums wrap); floats in exact quarter steps small enough
// that every partial sum is exact in any association order, so results compare exactly.
template <class T>
std::vector<T> random_input(std::uint64_t seed, std::size_t n)
{
    Rng rng(seed);
    std::vector<T> in(n);
    for (T &x : in) {
        if constexpr (std::is_integral_v<T>)
            x = static_cast<T>(rng.next());
        else
            x = gpumst_test::small_value<T>(rng, 16);
    }
    return in;
}

// CSR offsets over n elements with many empty segments (including a leading and a trailing one).
std::vector<std::uint64_t> random_offsets(std::uint64_t seed, std::size_t n)
{
    Rng rng(seed);
    std::vector<std::uint64_t> offsets = {0, 0};
    while (offsets.back() < n) {
        const std::uint64_t length = rng.below(4) == 0 ? 0 : 1 + rng.below(40);
        offsets.push_back(std::min<std::uint64_t>(n, offsets.back() + length));
    }
    offsets.push_back(n);
    return offsets;
}

const std::size_t sizes[] = {0, 1, 2, 7, 1000, 100003};

template <class T>
class Primitives : public gpumst_test::ContextTest {};

TYPED_TEST_SUITE(Primitives, gpumst_test::ElementTypes);

}  // namespace

TYPED_TEST(Primitives, ScanMatchesTheSequentialReference)
{
    using T = TypeParam;
    for (std::size_t n : sizes) {
        const std::vector<T> in = random_input<T>(n + 1, n);
        for (Op op : all_ops)
            for (ScanKind kind : all_kinds) {
                std::vector<T> out(n, T(42));
                gpumst::scan<T>(this->ctx(), in, out, op, kind);
                EXPECT_TRUE(same(out, reference_scan(in, {}, op, kind)))
                    << "n = " << n << ", " << name(op) << ", " << name(kind);
            }
    }
}

TYPED_TEST(Primitives, ScanInPlace)
{
    using T = TypeParam;
    const std::vector<T> in = random_input<T>(7, 5000);
    for (Op op : all_ops)
        for (ScanKind kind : all_kinds) {
            std::vector<T> data = in;
            gpumst::scan<T>(this->ctx(), data, data, op, kind);
            EXPECT_TRUE(same(data, reference_scan(in, {}, op, kind))) << name(op) << ", " << name(kind);
        }
}

TYPED_TEST(Primitives, SegmentedScanWithFlags)
{
    using T = TypeParam;
    for (std::size_t n : sizes) {
        const std::vector<T> in = random_input<T>(3 * n + 1, n);
        Rng rng(n);
        std::vector<std::uint8_t> flags(n);
        for (std::uint8_t &f : flags)
            f = rng.below(8) == 0 ? static_cast<std::uint8_t>(1 + rng.below(255)) : 0;  // any nonzero byte starts one
        for (Op op : all_ops)
            for (ScanKind kind : all_kinds) {
                std::vector<T> out(n);
                gpumst::segmented_scan<T>(this->ctx(), in, out, flags, op, kind);
                EXPECT_TRUE(same(out, reference_scan(in, flags, op, kind)))
                    << "n = " << n << ", " << name(op) << ", " << name(kind);
            }
    }
}

TYPED_TEST(Primitives, SegmentedScanWithOffsetsAndEmptySegments)
{
    using T = TypeParam;
    for (std::size_t n : sizes) {
        const std::vector<T> in = random_input<T>(5 * n + 2, n);
        const std::vector<std::uint64_t> offsets = random_offsets(n, n);
        const std::vector<std::uint8_t> starts = starts_of(offsets, n);
        for (Op op : all_ops)
            for (ScanKind kind : all_kinds) {
                std::vector<T> out(n);
                gpumst::segmented_scan<T>(this->ctx(), in, out, offsets, op, kind);
                EXPECT_TRUE(same(out, reference_scan(in, starts, op, kind)))
                    << "n = " << n << ", " << offsets.size() - 1 << " segments, " << name(op) << ", " << name(kind);
                // In place as well.
                std::vector<T> data = in;
                gpumst::segmented_scan<T>(this->ctx(), data, data, offsets, op, kind);
                EXPECT_TRUE(same(data, out)) << "in place, n = " << n << ", " << name(op) << ", " << name(kind);
            }
    }
}

TYPED_TEST(Primitives, ArgminAndArgmaxFindTheFirstExtreme)
{
    using T = TypeParam;
    for (std::size_t n : sizes) {
        if (n == 0)
            continue;
        Rng rng(11 * n);
        std::vector<T> in(n);
        for (T &x : in)
            x = gpumst_test::small_value<T>(rng, 5);  // many repeats of the extremes
        const auto min_at = static_cast<std::uint64_t>(std::min_element(in.begin(), in.end()) - in.begin());
        const auto max_at = static_cast<std::uint64_t>(std::max_element(in.begin(), in.end()) - in.begin());
        const gpumst::ArgResult<T> lo = gpumst::argmin<T>(this->ctx(), in);
        const gpumst::ArgResult<T> hi = gpumst::argmax<T>(this->ctx(), in);
        EXPECT_EQ(lo.index, min_at) << "n = " << n;
        EXPECT_EQ(lo.value, in[min_at]) << "n = " << n;
        EXPECT_EQ(hi.index, max_at) << "n = " << n;
        EXPECT_EQ(hi.value, in[max_at]) << "n = " << n;
        EXPECT_FALSE(lo.empty());
    }
}

TYPED_TEST(Primitives, ArgReductionsOfNothingAreEmpty)
{
    using T = TypeParam;
    const std::vector<T> none;
    const gpumst::ArgResult<T> lo = gpumst::argmin<T>(this->ctx(), none);
    const gpumst::ArgResult<T> hi = gpumst::argmax(this->ctx(), none);  // T deduced
    EXPECT_TRUE(lo.empty());
    EXPECT_EQ(lo.index, gpumst::empty_index);
    EXPECT_EQ(lo.value, identity<T>(Op::Min));
    EXPECT_TRUE(hi.empty());
    EXPECT_EQ(hi.value, identity<T>(Op::Max));
}

TYPED_TEST(Primitives, SegmentedArgReductionsWithEmptySegments)
{
    using T = TypeParam;
    for (std::size_t n : sizes) {
        Rng rng(13 * n + 1);
        std::vector<T> in(n);
        for (T &x : in)
            x = gpumst_test::small_value<T>(rng, 3);
        const std::vector<std::uint64_t> offsets = random_offsets(n + 99, n);
        const std::size_t segments = offsets.size() - 1;
        std::vector<T> min_values(segments), max_values(segments);
        std::vector<std::uint64_t> min_indices(segments), max_indices(segments);
        gpumst::segmented_argmin<T>(this->ctx(), in, offsets, min_values, min_indices);
        gpumst::segmented_argmax(this->ctx(), in, offsets, max_values, max_indices);  // T deduced
        for (std::size_t s = 0; s < segments; s++) {
            const auto begin = in.begin() + static_cast<std::ptrdiff_t>(offsets[s]);
            const auto end = in.begin() + static_cast<std::ptrdiff_t>(offsets[s + 1]);
            if (begin == end) {
                EXPECT_EQ(min_indices[s], gpumst::empty_index) << "empty segment " << s;
                EXPECT_EQ(max_indices[s], gpumst::empty_index) << "empty segment " << s;
                EXPECT_EQ(min_values[s], identity<T>(Op::Min)) << "empty segment " << s;
                EXPECT_EQ(max_values[s], identity<T>(Op::Max)) << "empty segment " << s;
                continue;
            }
            const auto min_at = static_cast<std::uint64_t>(std::min_element(begin, end) - in.begin());
            const auto max_at = static_cast<std::uint64_t>(std::max_element(begin, end) - in.begin());
            EXPECT_EQ(min_indices[s], min_at) << "segment " << s << " of n = " << n;
            EXPECT_EQ(min_values[s], in[min_at]) << "segment " << s << " of n = " << n;
            EXPECT_EQ(max_indices[s], max_at) << "segment " << s << " of n = " << n;
            EXPECT_EQ(max_values[s], in[max_at]) << "segment " << s << " of n = " << n;
        }
    }
}

// ---- element-type specifics -------------------------------------------------------

class ScanDetails : public gpumst_test::ContextTest {};

TEST_F(ScanDetails, IntegerSumsWrap)
{
    const std::vector<std::int32_t> in = {std::numeric_limits<std::int32_t>::max(), 1, -1};
    std::vector<std::int32_t> out(3);
    gpumst::scan(ctx(), in, out, Op::Sum, gpumst::Inclusive);
    EXPECT_EQ(out, (std::vector<std::int32_t>{std::numeric_limits<std::int32_t>::max(),
                                              std::numeric_limits<std::int32_t>::min(),
                                              std::numeric_limits<std::int32_t>::max()}));
    const std::vector<std::uint64_t> big = {~0ull, 2};
    std::vector<std::uint64_t> sums(2);
    gpumst::scan(ctx(), big, sums, Op::Sum, gpumst::Exclusive);
    EXPECT_EQ(sums, (std::vector<std::uint64_t>{0, ~0ull}));
}

TEST_F(ScanDetails, ExclusiveScansStartWithTheIdentity)
{
    const std::vector<double> in = {2.5, -1.0, 4.0};
    std::vector<double> out(3);
    gpumst::scan(ctx(), in, out, Op::Min, gpumst::Exclusive);
    EXPECT_EQ(out, (std::vector<double>{INFINITY, 2.5, -1.0}));
    gpumst::scan(ctx(), in, out, Op::Max, gpumst::Exclusive);
    EXPECT_EQ(out, (std::vector<double>{-INFINITY, 2.5, 2.5}));
    const std::vector<std::uint32_t> ints = {5, 3, 9};
    std::vector<std::uint32_t> mins(3);
    gpumst::scan(ctx(), ints, mins, Op::Min, gpumst::Exclusive);
    EXPECT_EQ(mins, (std::vector<std::uint32_t>{std::numeric_limits<std::uint32_t>::max(), 5, 3}));
}

TEST_F(ScanDetails, NanWinsMinMaxAndArgReductions)
{
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> in = {3.0f, nan, -7.0f, nan};
    std::vector<float> out(4);
    gpumst::scan(ctx(), in, out, Op::Min, gpumst::Inclusive);
    EXPECT_EQ(out[0], 3.0f);
    EXPECT_TRUE(std::isnan(out[1]) && std::isnan(out[2]) && std::isnan(out[3])) << "NaN propagates through min";
    const gpumst::ArgResult<float> lo = gpumst::argmin(ctx(), in);
    const gpumst::ArgResult<float> hi = gpumst::argmax(ctx(), in);
    EXPECT_EQ(lo.index, 1u) << "the first NaN is the minimum";
    EXPECT_TRUE(std::isnan(lo.value));
    EXPECT_EQ(hi.index, 1u) << "the first NaN is the maximum";
}

TEST_F(ScanDetails, ContainersOtherThanVectorAndDeducedTypes)
{
    const std::array<std::int64_t, 4> in = {4, -1, 6, 2};
    std::int64_t out[4] = {};
    gpumst::scan(ctx(), in, out, Op::Max, gpumst::Inclusive);  // std::array in, C array out
    EXPECT_EQ(std::vector<std::int64_t>(out, out + 4), (std::vector<std::int64_t>{4, 4, 6, 6}));

    std::vector<double> data = {1.0, 2.0, 3.0, 4.0};
    Span<double> whole = data;
    gpumst::scan(ctx(), whole.subspan(1, 2), whole.subspan(1, 2), Op::Sum, gpumst::Inclusive);  // part, in place
    EXPECT_EQ(data, (std::vector<double>{1.0, 2.0, 5.0, 4.0}));

    const std::vector<std::uint32_t> values = {5, 1, 4, 1};
    const std::vector<std::uint8_t> flags = {1, 0, 1, 0};
    std::vector<std::uint32_t> sums(4);
    gpumst::segmented_scan(ctx(), values, sums, flags, Op::Sum, gpumst::Inclusive);
    EXPECT_EQ(sums, (std::vector<std::uint32_t>{5, 6, 4, 5}));
    const gpumst::ArgResult<std::uint32_t> lo = gpumst::argmin(ctx(), values);
    EXPECT_EQ(lo.index, 1u);
    EXPECT_EQ(lo.value, 1u);

    // Every kind of view picks an overload: a mutable Span as input, Spans on both sides,
    // a Span<const T> argument with T deduced.
    std::vector<float> x = {2, 1, 3}, y(3);
    gpumst::scan(ctx(), Span<float>(x), y, Op::Sum, gpumst::Inclusive);
    EXPECT_EQ(y, (std::vector<float>{2, 3, 6}));
    gpumst::scan(ctx(), Span<const float>(x), Span<float>(y), Op::Min, gpumst::Inclusive);
    EXPECT_EQ(y, (std::vector<float>{2, 1, 1}));
    EXPECT_EQ(gpumst::argmax(ctx(), Span<float>(x)).index, 2u);
    EXPECT_EQ(gpumst::argmax(ctx(), Span<const float>(x)).index, 2u);
}

// ---- sizes and errors ---------------------------------------------------------------

class PrimitiveErrors : public gpumst_test::ContextTest {};

TEST_F(PrimitiveErrors, OutputOfTheWrongSizeIsRefusedBeforeTheCall)
{
    const std::vector<std::int32_t> in = {1, 2, 3};
    std::vector<std::int32_t> shorter(2, -9), longer(4, -9);
    EXPECT_TRUE(throws_error([&] { gpumst::scan(ctx(), in, shorter, Op::Sum, gpumst::Inclusive); },
                             Status::InvalidArgument, {"gpumst::scan", "output has 2 elements but input has 3"}));
    EXPECT_EQ(shorter, (std::vector<std::int32_t>{-9, -9})) << "nothing may be written";
    EXPECT_TRUE(throws_error([&] { gpumst::scan(ctx(), in, longer, Op::Sum, gpumst::Inclusive); },
                             Status::InvalidArgument, {"output has 4 elements"}));
    const std::vector<std::uint8_t> flags = {1, 0};
    std::vector<std::int32_t> out(3);
    EXPECT_TRUE(throws_error([&] { gpumst::segmented_scan(ctx(), in, out, flags, Op::Sum, gpumst::Inclusive); },
                             Status::InvalidArgument, {"gpumst::segmented_scan", "flags has 2 elements"}));
    EXPECT_TRUE(throws_error([&] { gpumst::segmented_scan(ctx(), in, shorter, flags, Op::Min, gpumst::Exclusive); },
                             Status::InvalidArgument, {"output has 2 elements"}));
}

TEST_F(PrimitiveErrors, OffsetsAreCheckedByTheWrapperAndTheLibrary)
{
    const std::vector<double> in = {1, 2, 3};
    std::vector<double> out(3);
    const std::vector<std::uint64_t> no_offsets;
    EXPECT_TRUE(throws_error([&] { gpumst::segmented_scan(ctx(), in, out, no_offsets, Op::Sum, gpumst::Inclusive); },
                             Status::InvalidArgument, {"offsets is empty"}));
    // Contents are the library's to check: the last offset must be the element count.
    const std::vector<std::uint64_t> short_of_the_end = {0, 2, 2};
    EXPECT_TRUE(throws_error(
        [&] { gpumst::segmented_scan(ctx(), in, out, short_of_the_end, Op::Sum, gpumst::Inclusive); },
        Status::InvalidArgument, {"gpumst_segmented_scan_offsets", "offsets[2]"}));
    const std::vector<std::uint64_t> decreasing = {0, 3, 1, 3};
    std::vector<double> values(3);
    std::vector<std::uint64_t> indices(3);
    EXPECT_TRUE(throws_error([&] { gpumst::segmented_argmin(ctx(), in, decreasing, values, indices); },
                             Status::InvalidArgument, {"gpumst_segmented_argmin", "offsets[2]"}));
}

TEST_F(PrimitiveErrors, SegmentedArgOutputsMustHoldOneEntryPerSegment)
{
    const std::vector<std::int64_t> in = {4, 2, 8};
    const std::vector<std::uint64_t> offsets = {0, 1, 3};  // two segments
    std::vector<std::int64_t> values(2), three_values(3);
    std::vector<std::uint64_t> indices(2, 77), one_index(1);
    EXPECT_TRUE(throws_error([&] { gpumst::segmented_argmax(ctx(), in, offsets, three_values, indices); },
                             Status::InvalidArgument, {"gpumst::segmented_argmax", "values has 3 elements but offsets has 2 segments"}));
    EXPECT_TRUE(throws_error([&] { gpumst::segmented_argmin(ctx(), in, offsets, values, one_index); },
                             Status::InvalidArgument, {"gpumst::segmented_argmin", "indices has 1 element but offsets has 2 segments"}));
    EXPECT_EQ(indices, (std::vector<std::uint64_t>{77, 77}));
    const std::vector<std::uint64_t> no_offsets;
    EXPECT_TRUE(throws_error([&] { gpumst::segmented_argmin(ctx(), in, no_offsets, values, indices); },
                             Status::InvalidArgument, {"offsets is empty"}));
    // The right sizes work.
    gpumst::segmented_argmin(ctx(), in, offsets, values, indices);
    EXPECT_EQ(values, (std::vector<std::int64_t>{4, 2}));
    EXPECT_EQ(indices, (std::vector<std::uint64_t>{0, 1}));
}

TEST_F(PrimitiveErrors, InvalidEnumValuesReachTheLibraryAndAreRefused)
{
    const std::vector<float> in = {1, 2};
    std::vector<float> out(2);
    EXPECT_TRUE(throws_error([&] { gpumst::scan(ctx(), in, out, static_cast<Op>(7), gpumst::Inclusive); },
                             Status::InvalidArgument, {"op 7"}));
    EXPECT_TRUE(throws_error([&] { gpumst::scan(ctx(), in, out, Op::Sum, static_cast<ScanKind>(5)); },
                             Status::InvalidArgument, {"kind 5"}));
}

TEST_F(PrimitiveErrors, NullWithALengthIsRefusedByTheLibrary)
{
    // A Span may be built from a pointer and a size that do not match a real array; a
    // null pointer is caught by the library instead of being dereferenced.
    std::vector<std::uint32_t> out(4);
    const Span<const std::uint32_t> bogus(nullptr, 4);
    EXPECT_TRUE(throws_error([&] { gpumst::scan<std::uint32_t>(ctx(), bogus, out, Op::Sum, gpumst::Inclusive); },
                             Status::InvalidArgument, {"input is NULL"}));
}
