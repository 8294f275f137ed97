//! Host page-cache model. TODO(helper E)
