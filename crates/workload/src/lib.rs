//! workload — TODO(helper B)
pub mod page_cache;
