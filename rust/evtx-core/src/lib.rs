//! EVTX parsing and rendering. See `../shared/docs/evtx-format.md` for the contract.
