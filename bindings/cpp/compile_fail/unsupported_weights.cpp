// Must not compile: long double weights are not an element type of the library.
// expect: gpumst: unsupported element type
#include <gpumst.hpp>

#include <vector>

void f(gpumst::Context &ctx, const std::vector<std::uint32_t> &u, const std::vector<long double> &w)
{
    gpumst::minimum_spanning_forest(ctx, 3, u, u, w);
}
