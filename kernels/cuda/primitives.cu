// The CUDA build of kernels/opencl/primitives.cl: one source for both GPU tiers.
#include "opencl.cuh"
#include "../opencl/types.cl"
#include "../opencl/primitives.cl"
