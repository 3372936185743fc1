// Must not compile: the output of a scan is a const container.
// expect: gpumst: an output must be writable
#include <gpumst.hpp>

#include <vector>

void f(gpumst::Context &ctx, const std::vector<float> &in, const std::vector<float> &out)
{
    gpumst::scan(ctx, in, out, gpumst::Op::Sum, gpumst::Inclusive);
}
