//! TODO(helper E)
