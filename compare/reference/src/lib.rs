//! The reference crate (evtx 0.15.1) behind include/evtx.h, so it is measured through the same boundary.
