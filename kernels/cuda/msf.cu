// The CUDA build of kernels/opencl/msf.cl: one source for both GPU tiers.
#include "opencl.cuh"
#include "../opencl/types.cl"
#include "../opencl/msf.cl"
