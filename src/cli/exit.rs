//! Exit codes, as documented in the README.

/// Success: valid, approved, no drift.
pub const OK: i32 = 0;
/// The gate says no: denied, approvals missing, drift.
pub const GATE: i32 = 1;
/// Invalid input or usage.
pub const INVALID: i32 = 2;
/// An outside system failed: git, a cluster, GitHub.
pub const EXTERNAL: i32 = 3;
