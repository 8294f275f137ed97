//! Domain newtypes shared across the SSD model (and by the layers above it).

use serde::{Deserialize, Serialize};

/// Logical page number: the host's address in units of one flash page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Lpn(pub u64);

/// Physical page number: `block * pages_per_block + page_in_block`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Ppn(pub u64);

/// Global physical block number: `die * blocks_per_die + block_in_die`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct BlockId(pub u32);

/// Die number, `0..channels * dies_per_channel`; die `d` sits on channel `d % channels`
/// so that consecutive dies are on different channels (round-robin striping spreads channels first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct DieId(pub u32);

/// Write stream id, `0..streams`. Stream 0 is the default stream.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct StreamId(pub u16);

/// Simulated time in nanoseconds since the device was created.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub fn ns(self) -> u64 {
        self.0
    }
}

/// What a host write carries down to flash: a 64-bit tag (always) and, in payload mode,
/// the page's bytes (exactly `page_bytes` long).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageWrite {
    pub tag: u64,
    pub payload: Option<Box<[u8]>>,
}

impl PageWrite {
    pub fn tag(tag: u64) -> Self {
        PageWrite { tag, payload: None }
    }
}
