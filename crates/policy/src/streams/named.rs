//! P5's four data types of an append-only store, and the named stream policies over them.
//!
//! Model: a store tags every write with its [`DataType`] (in its [`super::WriteClass`]); a
//! [`NamedPolicy`] gives each type the stream a store alone on its device tags it with
//! ([`NamedPolicy::stream`]); for stores sharing a device, [`super::StreamMap`] turns the
//! policy into a table from (DB file, data type) to stream. Stream 0 stays the default
//! (unhinted) stream. The lifetimes P5 measured (ForestDB, mean writes between two writes of
//! the same LBA): superblock 752, header 764,571, index node 848,531, data page 1,457,289 —
//! the order of the types below, shortest-lived first.

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

    /// Position in [`DataType::ALL`].
    pub fn index(self) -> usize {
        match self {
            DataType::Superblock => 0,
            DataType::Header => 1,
            DataType::Index => 2,
            DataType::Data => 3,
        }
    }
}

/// Ways of assigning streams: P5's four (by data type) and two of our own (by DB file; online
/// by measured lifetime). A store alone on its device tags its writes with
/// [`NamedPolicy::stream`]; where several stores (DB files) share one device,
/// [`super::StreamMap`] turns a policy into a table from (DB file, data type) to device stream
/// and [`super::ClassStreams`] applies it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NamedPolicy {
    /// (1) Everything on the default stream.
    NoStreams,
    /// (2) One stream per type (+ the default: 5 streams).
    PerType,
    /// (3) Similar lifetimes merged: index and header share a stream; data and superblock apart.
    SimilarMerged,
    /// (4) Different lifetimes merged: data and superblock share a stream; header, index apart.
    DifferentMerged,
    /// One stream per DB file (a store alone on its device: one stream per type, as
    /// `PerType`; on a shared device, [`super::StreamMap`] gives each file its stream).
    PerFile,
    /// Streams decided online from each (file, type)'s measured lifetime (a store alone on
    /// its device: one stream per type, as `PerType`; on a shared device,
    /// [`super::ClassStreams`] groups the classes).
    Auto,
    /// Streams from each write's known death time (a two-pass replay, [`super::oracle`]): the
    /// best placement the streams allow, a reference for every other policy (a store alone on
    /// its device: one stream per type, as `PerType`; on a shared device,
    /// [`super::ClassStreams`] places each write by its recorded lifetime).
    Oracle,
}

impl NamedPolicy {
    /// P5's four policies.
    pub const ALL: [NamedPolicy; 4] = [
        NamedPolicy::NoStreams,
        NamedPolicy::PerType,
        NamedPolicy::SimilarMerged,
        NamedPolicy::DifferentMerged,
    ];

    /// Every policy, P5's four first.
    pub const EVERY: [NamedPolicy; 7] = [
        NamedPolicy::NoStreams,
        NamedPolicy::PerType,
        NamedPolicy::SimilarMerged,
        NamedPolicy::DifferentMerged,
        NamedPolicy::PerFile,
        NamedPolicy::Auto,
        NamedPolicy::Oracle,
    ];

    /// The names (`none`, `per-type`, `merge-similar`, `merge-different`, `per-file`,
    /// `auto`, `oracle`).
    pub fn name(self) -> &'static str {
        match self {
            NamedPolicy::NoStreams => "none",
            NamedPolicy::PerType => "per-type",
            NamedPolicy::SimilarMerged => "merge-similar",
            NamedPolicy::DifferentMerged => "merge-different",
            NamedPolicy::PerFile => "per-file",
            NamedPolicy::Auto => "auto",
            NamedPolicy::Oracle => "oracle",
        }
    }

    /// A policy by name; the older names `similar-merged`, `different-merged` and
    /// `no-streams` are accepted as aliases.
    pub fn parse(name: &str) -> Option<NamedPolicy> {
        match name {
            "similar-merged" => Some(NamedPolicy::SimilarMerged),
            "different-merged" => Some(NamedPolicy::DifferentMerged),
            "no-streams" => Some(NamedPolicy::NoStreams),
            _ => NamedPolicy::EVERY.into_iter().find(|p| p.name() == name),
        }
    }

    /// The stream a store alone on its device gives its writes of type `t`. `PerFile` and
    /// `Auto` are decided per DB file or online on a shared device ([`super::ClassStreams`],
    /// from the write's class); alone, a store under them puts each type apart, as `PerType`.
    pub fn stream(self, t: DataType) -> u16 {
        use DataType::*;
        match (self, t) {
            (NamedPolicy::NoStreams, _) => 0,
            (
                NamedPolicy::PerType
                | NamedPolicy::PerFile
                | NamedPolicy::Auto
                | NamedPolicy::Oracle,
                t,
            ) => t.index() as u16 + 1,
            (NamedPolicy::SimilarMerged, Header | Index) => 1,
            (NamedPolicy::SimilarMerged, Data) => 2,
            (NamedPolicy::SimilarMerged, Superblock) => 3,
            (NamedPolicy::DifferentMerged, Data | Superblock) => 1,
            (NamedPolicy::DifferentMerged, Header) => 2,
            (NamedPolicy::DifferentMerged, Index) => 3,
        }
    }

    /// Streams a device needs for this policy's hints, the default stream included (the
    /// simulated SSD's `ftl.streams`).
    pub fn streams(self) -> u16 {
        1 + DataType::ALL
            .iter()
            .map(|&t| self.stream(t))
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
        let groups = |p: NamedPolicy| {
            DataType::ALL
                .iter()
                .map(|&t| p.stream(t))
                .collect::<BTreeSet<_>>()
                .len()
        };
        assert_eq!(groups(NamedPolicy::NoStreams), 1);
        assert_eq!(groups(NamedPolicy::PerType), 4);
        assert_eq!(groups(NamedPolicy::SimilarMerged), 3);
        assert_eq!(groups(NamedPolicy::DifferentMerged), 3);
        let same = |p: NamedPolicy, a, b| p.stream(a) == p.stream(b);
        assert!(same(
            NamedPolicy::SimilarMerged,
            DataType::Index,
            DataType::Header
        ));
        assert!(same(
            NamedPolicy::DifferentMerged,
            DataType::Data,
            DataType::Superblock
        ));
        assert_eq!(NamedPolicy::PerType.streams(), 5);
        assert_eq!(NamedPolicy::NoStreams.streams(), 1);
        for p in NamedPolicy::ALL {
            for t in DataType::ALL {
                assert!(p.stream(t) < p.streams());
            }
        }
    }

    #[test]
    fn indices_round_trip_and_names_parse_with_their_aliases() {
        for t in DataType::ALL {
            assert_eq!(DataType::ALL[t.index()], t);
        }
        for p in NamedPolicy::EVERY {
            assert_eq!(NamedPolicy::parse(p.name()), Some(p));
        }
        assert_eq!(
            NamedPolicy::parse("similar-merged"),
            Some(NamedPolicy::SimilarMerged)
        );
        assert_eq!(
            NamedPolicy::parse("different-merged"),
            Some(NamedPolicy::DifferentMerged)
        );
        assert_eq!(NamedPolicy::parse("per-lba"), None);
        for t in DataType::ALL {
            let per_type = NamedPolicy::PerType.stream(t);
            assert_eq!(NamedPolicy::PerFile.stream(t), per_type);
            assert_eq!(NamedPolicy::Auto.stream(t), per_type);
            assert_eq!(NamedPolicy::Oracle.stream(t), per_type);
        }
    }
}
