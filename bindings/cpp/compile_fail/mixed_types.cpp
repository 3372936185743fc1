// Must not compile: a scan from int32_t into float (the library does not convert).
// expect: gpumst: the input and output element types differ
#include <gpumst.hpp>

#include <vector>

void f(gpumst::Context &ctx, const std::vector<std::int32_t> &in, std::vector<float> &out)
{
    gpumst::scan(ctx, in, out, gpumst::Op::Sum, gpumst::Inclusive);
}
