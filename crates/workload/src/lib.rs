//! workload — TODO
