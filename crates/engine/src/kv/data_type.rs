//! P5's four data types of an append-only store and the write hint each carries.
//!
//! Model: the store tags every write with its [`DataType`]; a [`StreamPolicy`] turns the
//! type into a [`WriteHint`] stream (the simulated SSD places streams apart), and on a real
//! file [`DataType::write_life`] is the Linux write-life hint (`fcntl(F_SET_RW_HINT)`).
//! Stream 0 stays the default (unhinted) stream. The lifetimes P5 measured (ForestDB, mean
//! writes between two writes of the same LBA): superblock 752, header 764,571, index node
//! 848,531, data page 1,457,289 — which orders the write-life hints short < medium < long <
//! extreme.

use blockdev::{WriteHint, WriteLife};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DataType {
    /// The fixed slots rewritten in place on every commit.
    Superblock,
    /// One DB header appended per commit.
    Header,
    /// Copy-on-write B+-tree nodes.
    Index,
    /// Documents (keys and values).
    Data,
}

impl DataType {
    pub const ALL: [DataType; 4] = [
        DataType::Superblock,
        DataType::Header,
        DataType::Index,
        DataType::Data,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DataType::Superblock => "superblock",
            DataType::Header => "header",
            DataType::Index => "index",
            DataType::Data => "data",
        }
    }

    /// The hint of P5's one-stream-per-type policy (streams 1..=4).
    pub fn hint(self) -> WriteHint {
        StreamPolicy::PerType.hint(self)
    }

    /// The type's per-type label: its stream under `per-type` (1..=4, in [`DataType::ALL`]'s
    /// order), which a shared device's [`super::StreamRouter`] reads the type back from.
    pub fn label(self) -> u16 {
        self.index() as u16 + 1
    }

    /// The type whose label is `stream` (`None`: the default stream or an unknown label).
    pub fn from_label(stream: u16) -> Option<DataType> {
        DataType::ALL
            .get((stream as usize).wrapping_sub(1))
            .copied()
    }

    /// Position in [`DataType::ALL`].
    pub fn index(self) -> usize {
        match self {
            DataType::Superblock => 0,
            DataType::Header => 1,
            DataType::Index => 2,
            DataType::Data => 3,
        }
    }

    /// The Linux write-life hint, ordered by P5's measured lifetimes.
    pub fn write_life(self) -> WriteLife {
        match self {
            DataType::Superblock => WriteLife::Short,
            DataType::Header => WriteLife::Medium,
            DataType::Index => WriteLife::Long,
            DataType::Data => WriteLife::Extreme,
        }
    }
}

/// Ways of assigning streams: P5's four (by data type) and two of our own (by DB file; online
/// by measured lifetime). A store applies its own policy to its writes with [`StreamPolicy::hint`];
/// where several stores (DB files) share one device, [`super::StreamMap`] turns a policy into a
/// table from (DB file, data type) to device stream and [`super::StreamRouter`] applies it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StreamPolicy {
    /// (1) Everything on the default stream.
    NoStreams,
    /// (2) One stream per type (+ the default: 5 streams).
    PerType,
    /// (3) Similar lifetimes merged: index and header share a stream; data and superblock apart.
    SimilarMerged,
    /// (4) Different lifetimes merged: data and superblock share a stream; header, index apart.
    DifferentMerged,
    /// One stream per DB file (a single store: its types carry the per-type labels, which the
    /// [`super::StreamMap`] of a shared device maps to the file's stream).
    PerFile,
    /// Streams decided online from each (file, type)'s measured lifetime (a single store: its
    /// types carry the per-type labels, which [`super::StreamRouter`] groups).
    Auto,
}

impl StreamPolicy {
    /// P5's four policies.
    pub const ALL: [StreamPolicy; 4] = [
        StreamPolicy::NoStreams,
        StreamPolicy::PerType,
        StreamPolicy::SimilarMerged,
        StreamPolicy::DifferentMerged,
    ];

    /// Every policy, P5's four first.
    pub const EVERY: [StreamPolicy; 6] = [
        StreamPolicy::NoStreams,
        StreamPolicy::PerType,
        StreamPolicy::SimilarMerged,
        StreamPolicy::DifferentMerged,
        StreamPolicy::PerFile,
        StreamPolicy::Auto,
    ];

    /// The names (`none`, `per-type`, `merge-similar`, `merge-different`, `per-file`,
    /// `auto`).
    pub fn name(self) -> &'static str {
        match self {
            StreamPolicy::NoStreams => "none",
            StreamPolicy::PerType => "per-type",
            StreamPolicy::SimilarMerged => "merge-similar",
            StreamPolicy::DifferentMerged => "merge-different",
            StreamPolicy::PerFile => "per-file",
            StreamPolicy::Auto => "auto",
        }
    }

    /// A policy by name; the older names `similar-merged`, `different-merged` and
    /// `no-streams` are accepted as aliases.
    pub fn parse(name: &str) -> Option<StreamPolicy> {
        match name {
            "similar-merged" => Some(StreamPolicy::SimilarMerged),
            "different-merged" => Some(StreamPolicy::DifferentMerged),
            "no-streams" => Some(StreamPolicy::NoStreams),
            _ => StreamPolicy::EVERY.into_iter().find(|p| p.name() == name),
        }
    }

    /// The stream a store's write of type `t` carries. `PerFile` and `Auto` are decided per
    /// DB file or online by a shared device's [`super::StreamRouter`]: a store under them tags
    /// each type with its per-type label.
    pub fn hint(self, t: DataType) -> WriteHint {
        use DataType::*;
        let stream = match (self, t) {
            (StreamPolicy::NoStreams, _) => 0,
            (StreamPolicy::PerType | StreamPolicy::PerFile | StreamPolicy::Auto, t) => t.label(),
            (StreamPolicy::SimilarMerged, Header | Index) => 1,
            (StreamPolicy::SimilarMerged, Data) => 2,
            (StreamPolicy::SimilarMerged, Superblock) => 3,
            (StreamPolicy::DifferentMerged, Data | Superblock) => 1,
            (StreamPolicy::DifferentMerged, Header) => 2,
            (StreamPolicy::DifferentMerged, Index) => 3,
        };
        WriteHint::stream(stream)
    }

    /// Streams a device needs for this policy's hints, the default stream included (the
    /// simulated SSD's `ftl.streams`).
    pub fn streams(self) -> u16 {
        1 + DataType::ALL
            .iter()
            .map(|&t| self.hint(t).stream)
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn policies_group_the_types_as_p5_describes() {
        let groups = |p: StreamPolicy| {
            DataType::ALL
                .iter()
                .map(|&t| p.hint(t).stream)
                .collect::<BTreeSet<_>>()
                .len()
        };
        assert_eq!(groups(StreamPolicy::NoStreams), 1);
        assert_eq!(groups(StreamPolicy::PerType), 4);
        assert_eq!(groups(StreamPolicy::SimilarMerged), 3);
        assert_eq!(groups(StreamPolicy::DifferentMerged), 3);
        let same = |p: StreamPolicy, a, b| p.hint(a) == p.hint(b);
        assert!(same(
            StreamPolicy::SimilarMerged,
            DataType::Index,
            DataType::Header
        ));
        assert!(same(
            StreamPolicy::DifferentMerged,
            DataType::Data,
            DataType::Superblock
        ));
        assert_eq!(StreamPolicy::PerType.streams(), 5);
        assert_eq!(StreamPolicy::NoStreams.streams(), 1);
        for p in StreamPolicy::ALL {
            for t in DataType::ALL {
                assert!(p.hint(t).stream < p.streams());
            }
        }
    }

    #[test]
    fn write_lives_follow_p5s_lifetimes_and_differ_per_type() {
        let lives: Vec<u64> = DataType::ALL
            .iter()
            .map(|t| t.write_life() as u64)
            .collect();
        assert!(lives.windows(2).all(|w| w[0] < w[1]), "{lives:?}");
        assert!(DataType::ALL.iter().all(|t| t.hint() != WriteHint::NONE));
    }

    #[test]
    fn labels_round_trip_and_names_parse_with_their_aliases() {
        for t in DataType::ALL {
            assert_eq!(DataType::from_label(t.label()), Some(t));
            assert_eq!(DataType::ALL[t.index()], t);
        }
        assert_eq!(DataType::from_label(0), None);
        assert_eq!(DataType::from_label(5), None);
        for p in StreamPolicy::EVERY {
            assert_eq!(StreamPolicy::parse(p.name()), Some(p));
        }
        assert_eq!(
            StreamPolicy::parse("similar-merged"),
            Some(StreamPolicy::SimilarMerged)
        );
        assert_eq!(
            StreamPolicy::parse("different-merged"),
            Some(StreamPolicy::DifferentMerged)
        );
        assert_eq!(StreamPolicy::parse("per-lba"), None);
        assert_eq!(
            StreamPolicy::PerFile.hint(DataType::Data),
            DataType::Data.hint()
        );
    }
}
