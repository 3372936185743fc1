//! Reading graph files (placeholder; see the issue for the formats).
