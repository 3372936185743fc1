// The header from C++ (extern "C" linkage), a context owned by std::unique_ptr with a
// custom deleter, one scan and one argmin.
#include "gpumst.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "check.h"

namespace {

struct ContextDeleter {
    void operator()(gpumst_context *ctx) const noexcept { gpumst_context_destroy(ctx); }
};
using Context = std::unique_ptr<gpumst_context, ContextDeleter>;

Context open_context(std::string &error)
{
    gpumst_options options;
    if (gpumst_options_init(&options) != GPUMST_OK) {
        error = "gpumst_options_init failed";
        return Context();
    }
    options.tier = GPUMST_TIER_CPU;
    gpumst_context *raw = nullptr;
    char buffer[256] = "";
    gpumst_status status = gpumst_context_create(&options, &raw, buffer, sizeof buffer);
    if (status != GPUMST_OK)
        error = std::string(gpumst_status_string(status)) + ": " + buffer;
    return Context(raw);
}

std::string last_error(const Context &ctx)
{
    std::size_t length = gpumst_context_last_error(ctx.get(), nullptr, 0);
    std::string text(length, '\0');
    gpumst_context_last_error(ctx.get(), &text[0], length + 1);
    return text;
}

}  // namespace

// The C types are usable as plain C++ types.
static_assert(std::is_standard_layout<gpumst_options>::value, "gpumst_options is a C struct");
static_assert(std::is_same<gpumst_status, std::int32_t>::value, "gpumst_status is int32_t");

int main()
{
    std::string error;
    Context ctx = open_context(error);
    CHECK(ctx != nullptr, "context: %s", error.c_str());
    if (!ctx)
        return check_summary("test_cpp") | 1;

    gpumst_tier tier = -1;
    CHECK_STATUS(gpumst_context_tier(ctx.get(), &tier), GPUMST_OK);
    CHECK(tier == GPUMST_TIER_CPU, "tier %d", static_cast<int>(tier));

    // Scan: inclusive sum of 1..n in doubles.
    const std::size_t n = 1000;
    std::vector<double> in(n), out(n, -1.0);
    for (std::size_t i = 0; i < n; i++)
        in[i] = static_cast<double>(i + 1);
    CHECK_STATUS(gpumst_scan(ctx.get(), GPUMST_F64, GPUMST_SUM, GPUMST_INCLUSIVE, in.data(), out.data(), n),
                 GPUMST_OK);
    bool scan_ok = true;
    for (std::size_t i = 0; i < n; i++)
        scan_ok = scan_ok && out[i] == static_cast<double>((i + 1) * (i + 2) / 2);
    CHECK(scan_ok, "inclusive sum wrong (out[999] = %g)", out[n - 1]);

    // Argmin with a tie: the first index wins.
    const std::vector<std::int64_t> values = {7, -3, 12, -3, 0};
    std::int64_t min_value = 0;
    std::uint64_t min_index = 0;
    CHECK_STATUS(gpumst_argmin(ctx.get(), GPUMST_I64, values.data(), values.size(), &min_value, &min_index),
                 GPUMST_OK);
    CHECK(min_index == 1 && min_value == -3, "argmin = %lld at %llu", static_cast<long long>(min_value),
          static_cast<unsigned long long>(min_index));

    // An error through the C++ wrapper.
    CHECK_STATUS(gpumst_scan(ctx.get(), 42, GPUMST_SUM, GPUMST_INCLUSIVE, in.data(), out.data(), n),
                 GPUMST_INVALID_ARGUMENT);
    std::string message = last_error(ctx);
    CHECK(message.find("dtype 42") != std::string::npos, "last error: %s", message.c_str());

    // unique_ptr destroys the context; a null unique_ptr never calls the deleter.
    ctx.reset();
    CHECK(ctx == nullptr, "reset did not release");
    Context empty;
    return check_summary("test_cpp");
}
