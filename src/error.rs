//! Status codes and the error type shared by the Rust API and the C ABI.

use std::fmt;

/// Outcome class of a call; the C ABI returns these as `gpumst_status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    Ok = 0,
    /// A pointer, length, option or enum value the caller passed is not acceptable.
    InvalidArgument = 1,
    /// Graph data failed validation (reserved for the MSF calls).
    InvalidGraph = 2,
    /// The requested tier is missing on this machine or does not implement the operation.
    BackendUnavailable = 3,
    /// Host or device memory could not be allocated.
    OutOfMemory = 4,
    /// A GPU driver or runtime call failed.
    DeviceError = 5,
    /// A bug in gpumst (a caught panic, a broken invariant).
    Internal = 6,
}

impl Status {
    /// Every status, in code order.
    pub const ALL: [Status; 7] = [
        Status::Ok,
        Status::InvalidArgument,
        Status::InvalidGraph,
        Status::BackendUnavailable,
        Status::OutOfMemory,
        Status::DeviceError,
        Status::Internal,
    ];

    /// Stable lower-case name, as printed by the command line and `gpumst_status_string`.
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::InvalidArgument => "invalid argument",
            Status::InvalidGraph => "invalid graph",
            Status::BackendUnavailable => "backend unavailable",
            Status::OutOfMemory => "out of memory",
            Status::DeviceError => "device error",
            Status::Internal => "internal error",
        }
    }
}

/// An error with a status and a message that says what was wrong and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    status: Status,
    message: String,
    /// The GPU context that failed cannot be used again (a sticky CUDA error, a lost
    /// OpenCL queue): the tier refuses every later call.
    context_lost: bool,
}

impl Error {
    pub fn new(status: Status, message: impl Into<String>) -> Self {
        debug_assert_ne!(status, Status::Ok, "an Error never carries Status::Ok");
        Error {
            status,
            message: message.into(),
            context_lost: false,
        }
    }

    /// Marks the error as one after which the device context is unusable.
    pub(crate) fn with_context_lost(mut self) -> Self {
        self.context_lost = true;
        self
    }

    pub(crate) fn is_context_lost(&self) -> bool {
        self.context_lost
    }

    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Self::new(Status::InvalidArgument, message)
    }

    pub fn backend_unavailable(message: impl Into<String>) -> Self {
        Self::new(Status::BackendUnavailable, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(Status::Internal, message)
    }

    pub fn status(&self) -> Status {
        self.status
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status.name(), self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
