//! GC victim selection policies (policy chooses; the FTL's mechanism applies).
//! TODO(helper A)
