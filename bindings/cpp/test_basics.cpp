// Version, probe report, enumerations, Error, Span, and Context (tiers, options, moves).
#include <array>
#if __cplusplus >= 202002L && __has_include(<span>)
#include <span>
#endif
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "test_support.hpp"

using gpumst::Span;
using gpumst::Status;
using gpumst::Tier;
using gpumst_test::throws_error;

// ---- compile-time properties -------------------------------------------------------

static_assert(gpumst::dtype_v<std::int32_t> == gpumst::DType::I32);
static_assert(gpumst::dtype_v<std::uint32_t> == gpumst::DType::U32);
static_assert(gpumst::dtype_v<std::int64_t> == gpumst::DType::I64);
static_assert(gpumst::dtype_v<std::uint64_t> == gpumst::DType::U64);
static_assert(gpumst::dtype_v<float> == gpumst::DType::F32);
static_assert(gpumst::dtype_v<double> == gpumst::DType::F64);
// Other spellings of the same widths map to the same element types.
static_assert(gpumst::dtype_v<long long> == gpumst::DType::I64);
static_assert(gpumst::dtype_v<unsigned long long> == gpumst::DType::U64);
static_assert(gpumst::dtype_v<int> == gpumst::DType::I32);
static_assert(!gpumst::is_element_type_v<std::int16_t> && !gpumst::is_element_type_v<std::uint8_t>);
static_assert(!gpumst::is_element_type_v<bool> && !gpumst::is_element_type_v<long double>);
static_assert(!gpumst::is_element_type_v<char32_t> && !gpumst::is_element_type_v<wchar_t>);

// The owners are move-only, and moving never throws.
static_assert(!std::is_copy_constructible_v<gpumst::Context> && !std::is_copy_assignable_v<gpumst::Context>);
static_assert(std::is_nothrow_move_constructible_v<gpumst::Context> &&
              std::is_nothrow_move_assignable_v<gpumst::Context>);
static_assert(!std::is_copy_constructible_v<gpumst::Forest> && std::is_nothrow_move_assignable_v<gpumst::Forest>);
static_assert(!std::is_copy_constructible_v<gpumst::GraphFile> &&
              std::is_nothrow_move_constructible_v<gpumst::GraphFile>);
// An exception type must copy without throwing.
static_assert(std::is_nothrow_copy_constructible_v<gpumst::Error>);
static_assert(std::is_base_of_v<std::runtime_error, gpumst::Error>);

// Span converts from the usual containers, adds const but never removes it, and never
// views a temporary mutably.
static_assert(std::is_convertible_v<std::vector<int> &, Span<int>>);
static_assert(std::is_convertible_v<std::vector<int> &, Span<const int>>);
static_assert(std::is_convertible_v<const std::vector<int> &, Span<const int>>);
static_assert(!std::is_convertible_v<const std::vector<int> &, Span<int>>);
static_assert(std::is_convertible_v<std::vector<int> &&, Span<const int>>);
static_assert(!std::is_convertible_v<std::vector<int> &&, Span<int>>);
static_assert(std::is_convertible_v<std::array<double, 3> &, Span<double>>);
static_assert(std::is_convertible_v<float (&)[4], Span<float>>);
static_assert(std::is_convertible_v<Span<int>, Span<const int>>);
static_assert(!std::is_convertible_v<Span<const int>, Span<int>>);
static_assert(!std::is_convertible_v<std::vector<unsigned> &, Span<int>>);
static_assert(!std::is_convertible_v<std::vector<std::int64_t> &, Span<const double>>);
static_assert(std::is_trivially_copyable_v<Span<int>>);
#if __cplusplus >= 202002L && __has_include(<span>)
// C++20's own view converts too (scripts/test_cpp.sh compiles these files as C++20 as well).
static_assert(std::is_convertible_v<std::span<int> &, Span<const int>>);
static_assert(std::is_convertible_v<std::span<const int>, Span<const int>>);
static_assert(!std::is_convertible_v<std::span<const int> &, Span<int>>);
#endif

TEST(Library, VersionMatchesTheHeader)
{
    const std::string expected = std::to_string(GPUMST_VERSION_MAJOR) + "." + std::to_string(GPUMST_VERSION_MINOR) +
                                 "." + std::to_string(GPUMST_VERSION_PATCH);
    EXPECT_EQ(gpumst::version(), expected) << "the linked library is not the version of the installed header";
}

TEST(Library, ProbeReportIsAJsonObjectNamingBothGpuTiers)
{
    const std::string report = gpumst::probe_report();
    ASSERT_GE(report.size(), 2u);
    EXPECT_EQ(report.front(), '{') << report;
    EXPECT_EQ(report.back(), '}') << report;
    EXPECT_NE(report.find("\"cuda\""), std::string::npos) << report;
    EXPECT_NE(report.find("\"opencl\""), std::string::npos) << report;
    EXPECT_EQ(report.find('\0'), std::string::npos) << "the report carries a NUL byte";
}

TEST(Library, NamesOfStatusesTiersAndTypes)
{
    EXPECT_STREQ(to_string(Status::Ok), "ok");
    EXPECT_STREQ(to_string(Status::InvalidArgument), "invalid argument");
    const Status all[] = {Status::Ok,          Status::InvalidArgument, Status::InvalidGraph,
                          Status::BackendUnavailable, Status::OutOfMemory, Status::DeviceError,
                          Status::Internal};
    for (Status s : all)
        EXPECT_STRNE(to_string(s), "unknown status") << static_cast<int>(s);
    EXPECT_STREQ(to_string(static_cast<Status>(77)), "unknown status");
    EXPECT_STREQ(to_string(Tier::Cpu), "cpu");
    EXPECT_STREQ(to_string(Tier::Cuda), "cuda");
    EXPECT_STREQ(to_string(Tier::OpenCL), "opencl");
    EXPECT_STREQ(to_string(gpumst::DType::U64), "u64");
    EXPECT_STREQ(to_string(gpumst::DType::F32), "f32");
}

TEST(Error, CarriesStatusAndMessage)
{
    const gpumst::Error error(Status::InvalidGraph, "edge 3 has a NaN weight");
    EXPECT_EQ(error.status(), Status::InvalidGraph);
    EXPECT_STREQ(error.message(), "edge 3 has a NaN weight");
    EXPECT_STREQ(error.what(), "invalid graph: edge 3 has a NaN weight");
    const gpumst::Error copy = error;  // message() points into the copy's own storage
    EXPECT_STREQ(copy.message(), "edge 3 has a NaN weight");
    EXPECT_EQ(copy.status(), Status::InvalidGraph);
}

// ---- Span ---------------------------------------------------------------------------

TEST(Span, ViewsContainersArraysAndPointers)
{
    std::vector<int> vector = {1, 2, 3};
    std::array<int, 2> array = {4, 5};
    int c_array[4] = {6, 7, 8, 9};

    Span<int> of_vector = vector;
    EXPECT_EQ(of_vector.data(), vector.data());
    EXPECT_EQ(of_vector.size(), 3u);
    Span<const int> of_array = array;
    EXPECT_EQ(of_array.data(), array.data());
    EXPECT_EQ(of_array.size(), 2u);
    Span<int> of_c_array = c_array;
    EXPECT_EQ(of_c_array.size(), 4u);
    Span<int> of_pointer(c_array + 1, 2);
    EXPECT_EQ(of_pointer[0], 7);
    EXPECT_EQ(of_pointer.back(), 8);

    of_vector[1] = 20;  // a view: writes reach the vector
    EXPECT_EQ(vector[1], 20);
    int sum = 0;
    for (int x : Span<const int>(of_vector))
        sum += x;
    EXPECT_EQ(sum, 24);

    const Span<int> empty;
    EXPECT_TRUE(empty.empty());
    EXPECT_EQ(empty.data(), nullptr);
    EXPECT_EQ(empty.begin(), empty.end());
    EXPECT_EQ(of_c_array.size_bytes(), 4 * sizeof(int));
}

TEST(Span, DeducesItsElementType)
{
    std::vector<double> vector = {1.0, 2.0};
    const std::vector<double> &const_vector = vector;
    float c_array[3] = {};
    auto a = Span(vector);
    auto b = Span(const_vector);
    auto c = Span(c_array);
    auto d = Span(vector.data(), vector.size());
    static_assert(std::is_same_v<decltype(a), Span<double>>);
    static_assert(std::is_same_v<decltype(b), Span<const double>>);
    static_assert(std::is_same_v<decltype(c), Span<float>>);
    static_assert(std::is_same_v<decltype(d), Span<double>>);
    EXPECT_EQ(a.data(), b.data());
    EXPECT_EQ(c.size(), 3u);
    EXPECT_EQ(d.size(), 2u);
}

TEST(Span, SubspanIsBoundsChecked)
{
    std::vector<int> vector = {0, 1, 2, 3, 4};
    Span<int> all = vector;
    Span<int> middle = all.subspan(1, 3);
    EXPECT_EQ(middle.data(), vector.data() + 1);
    EXPECT_EQ(middle.size(), 3u);
    EXPECT_EQ(all.subspan(2).size(), 3u);
    EXPECT_EQ(all.subspan(5).size(), 0u);
    EXPECT_EQ(all.first(2).back(), 1);
    EXPECT_THROW(all.subspan(6), std::out_of_range);
    EXPECT_THROW(all.subspan(2, 4), std::out_of_range);
    EXPECT_THROW(all.first(6), std::out_of_range);
}

// ---- Context ------------------------------------------------------------------------

TEST(Context, CpuTierOpensWithItsDevice)
{
    gpumst::Context ctx(Tier::Cpu);
    EXPECT_EQ(ctx.tier(), Tier::Cpu);
    EXPECT_FALSE(ctx.device_name().empty());
    EXPECT_GT(ctx.device_memory(), 0u);
    EXPECT_NE(ctx.native(), nullptr);
    EXPECT_TRUE(static_cast<bool>(ctx));
    EXPECT_EQ(ctx.last_error(), "") << "a fresh context has no error";
    EXPECT_EQ(ctx.device_count(), 1u);
}

TEST(Context, TheCpuTierIgnoresDeviceLists)
{
    gpumst::ContextOptions options;
    options.tier = Tier::Cpu;
    options.devices = {0, 4, 7};
    EXPECT_EQ(gpumst::Context(options).device_count(), 1u);
    options.all_devices = true;
    EXPECT_EQ(gpumst::Context(options).device_count(), 1u);
}

TEST(Context, OptionsSetTheThreadCount)
{
    gpumst::ContextOptions options;
    options.tier = Tier::Cpu;
    options.cpu_threads = 1;
    gpumst::Context ctx(options);
    EXPECT_EQ(ctx.tier(), Tier::Cpu);
    // The work still gets done on one thread.
    std::vector<std::int64_t> in(1000, 1), out(1000);
    gpumst::scan(ctx, in, out, gpumst::Op::Sum, gpumst::Inclusive);
    EXPECT_EQ(out.back(), 1000);
}

class TierUnderTest : public gpumst_test::ContextTest {};

TEST_F(TierUnderTest, IsTheTierOpened)
{
    const Tier wanted = gpumst_test::tier_under_test();
    if (wanted == Tier::Auto)
        EXPECT_NE(ctx().tier(), Tier::Auto) << "a context reports the tier it chose";
    else
        EXPECT_EQ(ctx().tier(), wanted);
    EXPECT_FALSE(ctx().device_name().empty());
}

TEST(Context, AnUnknownTierValueIsAnInvalidArgument)
{
    EXPECT_TRUE(throws_error([] { gpumst::Context ctx(static_cast<Tier>(99)); }, Status::InvalidArgument, {"99"}));
}

class ForcedGpuTier : public ::testing::TestWithParam<Tier> {};

// A forced tier that cannot open is an error, never a fallback to another tier.
TEST_P(ForcedGpuTier, IsBackendUnavailableWhereMissing)
{
    const Tier tier = GetParam();
    std::optional<gpumst::Context> ctx;
    try {
        ctx.emplace(tier);
    } catch (const gpumst::Error &e) {
        EXPECT_EQ(e.status(), Status::BackendUnavailable) << e.what();
        const char *name = tier == Tier::Cuda ? "CUDA" : "OpenCL";
        EXPECT_NE(std::string(e.message()).find(name), std::string::npos)
            << "the message should name the tier: " << e.what();
        return;
    }
    // This machine has the tier: then it must be the tier it runs on.
    EXPECT_EQ(ctx->tier(), tier);
    GTEST_SKIP() << to_string(tier) << " opens on this machine (" << ctx->device_name()
                 << "), so its absence cannot be tested here";
}

INSTANTIATE_TEST_SUITE_P(Tiers, ForcedGpuTier, ::testing::Values(Tier::Cuda, Tier::OpenCL),
                         [](const ::testing::TestParamInfo<Tier> &info) { return std::string(to_string(info.param)); });

TEST(Context, MovesLeaveASafeEmptyContext)
{
    gpumst::Context first(Tier::Cpu);
    gpumst_context *const handle = first.native();

    gpumst::Context second(std::move(first));
    EXPECT_EQ(second.native(), handle);
    EXPECT_EQ(first.native(), nullptr);  // the moved-from state is specified
    EXPECT_FALSE(static_cast<bool>(first));
    EXPECT_TRUE(throws_error([&] { (void)first.tier(); }, Status::InvalidArgument, {"moved from"}));
    std::vector<int> in = {1, 2}, out(2);
    EXPECT_TRUE(throws_error([&] { gpumst::scan(first, in, out, gpumst::Op::Sum, gpumst::Inclusive); },
                             Status::InvalidArgument, {"gpumst::scan", "moved from"}));
    EXPECT_EQ(first.last_error(), "");

    gpumst::Context third(Tier::Cpu);
    third = std::move(second);  // releases third's own context
    EXPECT_EQ(third.native(), handle);
    EXPECT_EQ(second.native(), nullptr);
    EXPECT_EQ(third.tier(), Tier::Cpu);
    first = std::move(third);  // into a moved-from one
    EXPECT_EQ(first.native(), handle);
    gpumst::scan(first, in, out, gpumst::Op::Sum, gpumst::Inclusive);
    EXPECT_EQ(out[1], 3);
}  // destroys three Contexts, two of them empty

class ContextErrors : public gpumst_test::ContextTest {};

TEST_F(ContextErrors, LastErrorKeepsTheMessageOfTheFailedCall)
{
    std::vector<std::uint64_t> in = {1, 2, 3, 4};
    std::vector<std::uint64_t> overlapping(in);
    // Output overlapping the input (but not identical) is refused by the library.
    const Span<const std::uint64_t> input(overlapping.data(), 3);
    const Span<std::uint64_t> output(overlapping.data() + 1, 3);
    EXPECT_TRUE(throws_error(
        [&] { gpumst::scan<std::uint64_t>(ctx(), input, output, gpumst::Op::Sum, gpumst::Inclusive); },
        Status::InvalidArgument, {"gpumst_scan", "overlaps"}));
    EXPECT_NE(ctx().last_error().find("overlaps"), std::string::npos) << ctx().last_error();
    EXPECT_EQ(overlapping, in) << "a refused call wrote its arrays";
}
