//! engine — TODO
