//! Buffers that live where a tier computes.

use crate::tier::cuda::CudaDevice;
use crate::tier::gpu::DeviceBuffer;
use crate::tier::opencl::OpenClDevice;
use crate::tier::Tier;
use crate::types::Stored;

/// Where a buffer's bytes are. GPU tiers add device variants; callers only see
/// [`Buffer`] and move data with [`crate::Context::upload`] / [`crate::Context::download`].
pub(crate) enum Storage<T> {
    Host(Vec<T>),
    OpenCl(DeviceBuffer<OpenClDevice, T>),
    Cuda(DeviceBuffer<CudaDevice, T>),
}

/// An array resident on a tier, made by [`crate::Context::upload`] (or
/// [`crate::Context::upload_flags`] for head flags).
pub struct Buffer<T: Stored> {
    tier: Tier,
    pub(crate) storage: Storage<T>,
}

impl<T: Stored> Buffer<T> {
    pub(crate) fn from_storage(tier: Tier, storage: Storage<T>) -> Self {
        Buffer { tier, storage }
    }

    pub fn len(&self) -> usize {
        match &self.storage {
            Storage::Host(data) => data.len(),
            Storage::OpenCl(device) => device.len(),
            Storage::Cuda(device) => device.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The buffer's device address (a CUDA device pointer, an OpenCL `cl_mem`), to
    /// hand to calls that take device memory; None for a host buffer.
    pub fn device_address(&self) -> Option<usize> {
        match &self.storage {
            Storage::Host(_) => None,
            Storage::OpenCl(device) => Some(device.address()),
            Storage::Cuda(device) => Some(device.address()),
        }
    }

    /// The tier whose memory holds the buffer.
    pub fn tier(&self) -> Tier {
        self.tier
    }
}

impl<T: Stored> std::fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Buffer<{}>({} elements on the {} tier)",
            T::NAME,
            self.len(),
            self.tier
        )
    }
}
