// Must not compile: int16_t is not an element type of the library.
// expect: gpumst: unsupported element type; use int32_t, uint32_t, int64_t, uint64_t, float or double
#include <gpumst.hpp>

#include <vector>

void f(gpumst::Context &ctx)
{
    std::vector<std::int16_t> in(4), out(4);
    gpumst::scan<std::int16_t>(ctx, in, out, gpumst::Op::Sum, gpumst::Inclusive);
}
