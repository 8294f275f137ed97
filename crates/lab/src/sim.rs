//! The `flashlab sim` driver. TODO(me)
