//! Stream assignment by class: a [`StreamMap`] from (DB file, data type) to device stream,
//! and [`ClassStreams`], the [`StreamAssignment`] that applies it to every page the stores of
//! one shared device write.
//!
//! Model: several stores (one per DB file) run on partitions of one shared device; partition
//! `i` is DB file `i` and stamps it on the [`WriteClass`] of every write through it. The
//! policy sends each page to the stream the map names for its class — or, under `auto`, to
//! the stream [`AutoStreams`] gives the class (key [`WriteClass::key`]) from the lifetimes it
//! measures online. Writes without a class stay on the default stream 0.
//!
//! Maps come from a named policy ([`StreamMap::policy`]) or from a TOML file
//! ([`StreamMap::load`]):
//!
//! ```toml
//! # Streams of a device shared by DB files 0..N (file i = the i-th store opened).
//! default = 0        # optional: the stream of every (file, type) not set below (default 0)
//! [types]            # optional: every file's types
//! superblock = 1
//! header = 2
//! index = 2
//! data = 3
//! [files.7]          # optional: DB file 7's types (over [types] for that file)
//! data = 4
//! ```
//!
//! Every stream must be below the device's streams; every file below the number of files.

use super::lifetime::{LifetimeReport, LifetimeTracker};
use super::{AutoStreams, DataType, NamedPolicy, OracleStreams, StreamAssignment, WriteClass};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why a stream map could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StreamMapError {
    #[error("stream policy `{name}` is unknown: use one of none, per-type, merge-similar, merge-different, per-file, auto, oracle (or a TOML file of your own mapping)")]
    UnknownPolicy { name: String },
    #[error("stream policy `{policy}` needs {needed} device streams, the device offers {device}: give the device more streams (--streams) or choose a policy with fewer")]
    TooFewStreams {
        policy: String,
        needed: u16,
        device: u16,
    },
    #[error("{}:{line}: `{field}`: {reason}", file.display())]
    Config {
        file: PathBuf,
        line: usize,
        field: String,
        reason: String,
    },
    #[error("cannot read stream map {}: {source}", file.display())]
    Read {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// A table from (DB file, data type) to device stream, or the online `auto` grouping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamMap {
    /// The policy's name, or the config file's path.
    name: String,
    /// Per DB file: the stream of each type, in [`DataType::ALL`]'s order.
    rows: Vec<[u16; 4]>,
    /// Streams the device offers.
    device_streams: u16,
    auto: bool,
    /// `oracle`: each write placed by its recorded death time ([`ClassStreams::with_oracle`]).
    oracle: bool,
}

impl StreamMap {
    /// The map of a named policy for `files` DB files on a device with `device_streams`
    /// streams. `per-file` gives file `f` stream `1 + f mod (device_streams - 1)` (one stream per
    /// file when the device has more streams than files; files share round-robin otherwise);
    /// `auto` groups online into at most `device_streams` streams.
    pub fn policy(
        p: NamedPolicy,
        files: u32,
        device_streams: u16,
    ) -> Result<StreamMap, StreamMapError> {
        let device_streams = device_streams.max(1);
        let rows = (0..files)
            .map(|f| {
                DataType::ALL.map(|t| match p {
                    NamedPolicy::PerFile if device_streams > 1 => {
                        1 + (f % (device_streams as u32 - 1)) as u16
                    }
                    NamedPolicy::PerFile | NamedPolicy::Auto | NamedPolicy::Oracle => 0,
                    p => p.stream(t),
                })
            })
            .collect();
        let map = StreamMap {
            name: p.name().to_string(),
            rows,
            device_streams,
            auto: p == NamedPolicy::Auto,
            oracle: p == NamedPolicy::Oracle,
        };
        let needed = map.streams_used();
        if needed > device_streams {
            return Err(StreamMapError::TooFewStreams {
                policy: map.name,
                needed,
                device: device_streams,
            });
        }
        Ok(map)
    }

    /// A named policy, or (a name ending in `.toml`) the mapping in that file.
    pub fn named(name: &str, files: u32, device_streams: u16) -> Result<StreamMap, StreamMapError> {
        if name.ends_with(".toml") {
            return StreamMap::load(Path::new(name), files, device_streams);
        }
        let p = NamedPolicy::parse(name).ok_or_else(|| StreamMapError::UnknownPolicy {
            name: name.to_string(),
        })?;
        StreamMap::policy(p, files, device_streams)
    }

    /// The mapping in TOML file `path` (format in the module docs).
    pub fn load(path: &Path, files: u32, device_streams: u16) -> Result<StreamMap, StreamMapError> {
        let text = bounded::read_text(path, bounded::CONFIG_BYTES_MAX, "a stream map").map_err(
            |source| StreamMapError::Read {
                file: path.to_path_buf(),
                source,
            },
        )?;
        StreamMap::parse(path, &text, files, device_streams)
    }

    /// The mapping in `text`, read from `path` (for error messages).
    pub fn parse(
        path: &Path,
        text: &str,
        files: u32,
        device_streams: u16,
    ) -> Result<StreamMap, StreamMapError> {
        let err =
            |span: std::ops::Range<usize>, field: &str, reason: String| StreamMapError::Config {
                file: path.to_path_buf(),
                line: line_of(text, span.start),
                field: field.to_string(),
                reason,
            };
        let cfg: ConfigFile = toml::from_str(text).map_err(|e| {
            let span = e.span().unwrap_or(0..0);
            let field = text[span.clone()].trim().to_string();
            err(span, &field, e.message().to_string())
        })?;
        let device_streams = device_streams.max(1);
        let check = |s: &toml::Spanned<u16>, field: String| -> Result<u16, StreamMapError> {
            if *s.get_ref() >= device_streams {
                return Err(err(
                    s.span(),
                    &field,
                    format!(
                        "stream {} does not exist: the device offers streams 0..{}",
                        s.get_ref(),
                        device_streams - 1
                    ),
                ));
            }
            Ok(*s.get_ref())
        };
        let default = match &cfg.default {
            Some(s) => check(s, "default".into())?,
            None => 0,
        };
        let mut base = [default; 4];
        if let Some(t) = &cfg.types {
            t.apply(&mut base, "types", &check)?;
        }
        let mut rows = vec![base; files as usize];
        for (key, t) in &cfg.files {
            let file: u32 = key.parse().map_err(|_| {
                err(
                    t.span(),
                    &format!("files.{key}"),
                    "a DB file is named by its number, 0 for the first file".into(),
                )
            })?;
            let row = rows.get_mut(file as usize).ok_or_else(|| {
                err(
                    t.span(),
                    &format!("files.{key}"),
                    format!(
                        "there are {files} DB files, numbered 0..{}",
                        files.max(1) - 1
                    ),
                )
            })?;
            t.get_ref().apply(row, &format!("files.{key}"), &check)?;
        }
        Ok(StreamMap {
            name: path.display().to_string(),
            rows,
            device_streams,
            auto: false,
            oracle: false,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn is_auto(&self) -> bool {
        self.auto
    }

    /// Whether writes are placed by their recorded death time (`oracle`).
    pub fn is_oracle(&self) -> bool {
        self.oracle
    }

    pub fn files(&self) -> u32 {
        self.rows.len() as u32
    }

    pub fn device_streams(&self) -> u16 {
        self.device_streams
    }

    /// The stream of `file`'s writes of type `t` (a static map; `auto` decides online, and a
    /// file beyond the table goes to the default stream).
    pub fn stream(&self, file: u32, t: DataType) -> u16 {
        self.rows.get(file as usize).map_or(0, |r| r[t.index()])
    }

    /// Streams the table uses, the default stream included (`auto`, `oracle`: the device's).
    pub fn streams_used(&self) -> u16 {
        if self.auto || self.oracle {
            return self.device_streams;
        }
        1 + self.rows.iter().flatten().copied().max().unwrap_or(0)
    }
}

/// Line (1-based) of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    1 + text[..offset.min(text.len())].matches('\n').count()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    default: Option<toml::Spanned<u16>>,
    types: Option<TypeStreams>,
    #[serde(default)]
    files: BTreeMap<String, toml::Spanned<TypeStreams>>,
}

/// Checks one stream value of a config file (named by its field) against the device.
type CheckStream<'a> = dyn Fn(&toml::Spanned<u16>, String) -> Result<u16, StreamMapError> + 'a;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TypeStreams {
    superblock: Option<toml::Spanned<u16>>,
    header: Option<toml::Spanned<u16>>,
    index: Option<toml::Spanned<u16>>,
    data: Option<toml::Spanned<u16>>,
}

impl TypeStreams {
    fn apply(
        &self,
        row: &mut [u16; 4],
        table: &str,
        check: &CheckStream<'_>,
    ) -> Result<(), StreamMapError> {
        let set = [&self.superblock, &self.header, &self.index, &self.data];
        for (t, s) in DataType::ALL.iter().zip(set) {
            if let Some(s) = s {
                row[t.index()] = check(s, format!("{table}.{}", t.name()))?;
            }
        }
        Ok(())
    }
}

/// Pages routed to each (file, type, stream) — what a test compares with the map.
pub type Routed = BTreeMap<(u32, DataType, u16), u64>;

/// Applies a [`StreamMap`] to every page written on a shared device (see the module docs);
/// optionally measures each data type's lifetimes (P5's Table 1) on the way.
pub struct ClassStreams {
    map: StreamMap,
    auto: Option<AutoStreams>,
    oracle: Option<OracleStreams>,
    lifetimes: Option<LifetimeTracker>,
    routed: Routed,
}

impl ClassStreams {
    /// The policy of `map` for a device of `device_pages` pages.
    pub fn new(map: StreamMap, device_pages: u64) -> ClassStreams {
        let auto = map
            .auto
            .then(|| AutoStreams::new(map.device_streams, device_pages));
        ClassStreams {
            map,
            auto,
            oracle: None,
            lifetimes: None,
            routed: BTreeMap::new(),
        }
    }

    /// `oracle`: place by `placement`, recorded by a first pass over the same writes (every
    /// page written through this policy, with or without a class, is one write of it). Without
    /// it an `oracle` map puts every write on stream 0.
    pub fn with_oracle(mut self, placement: OracleStreams) -> ClassStreams {
        assert!(self.map.oracle, "{} is not the oracle", self.map.name);
        self.oracle = Some(placement);
        self
    }

    /// `oracle`: the placement (its groups, writes placed).
    pub fn oracle(&self) -> Option<&OracleStreams> {
        self.oracle.as_ref()
    }

    /// Measure lifetimes per data type from now on (class = [`DataType::index`]; 4 for
    /// writes without a class), forgetting what was measured before.
    pub fn measure_lifetimes(&mut self, device_pages: u64) {
        self.lifetimes = Some(LifetimeTracker::new(device_pages));
    }

    pub fn map(&self) -> &StreamMap {
        &self.map
    }

    /// Pages routed so far per (file, type, stream).
    pub fn routed(&self) -> &Routed {
        &self.routed
    }

    /// Lifetimes per data type so far (`None` unless [`ClassStreams::measure_lifetimes`]).
    pub fn lifetimes(&self) -> Option<LifetimeReport> {
        self.lifetimes.as_ref().map(|l| l.report())
    }

    /// `auto`: the online grouping (its lifetime estimates, decisions), by class key.
    pub fn auto(&self) -> Option<&AutoStreams> {
        self.auto.as_ref()
    }

    /// `auto`: the current stream of each (file, type) seen.
    pub fn auto_mapping(&self) -> Vec<(u32, DataType, u16)> {
        self.auto.as_ref().map_or_else(Vec::new, |a| {
            a.mapping()
                .into_iter()
                .map(|(key, s)| {
                    let c = WriteClass::from_key(key);
                    (c.file, c.data_type, s)
                })
                .collect()
        })
    }
}

impl StreamAssignment for ClassStreams {
    fn stream(&mut self, lpn: u64, class: Option<WriteClass>) -> u16 {
        if let Some(l) = &mut self.lifetimes {
            let untyped = DataType::ALL.len() as u32;
            l.record(lpn, class.map_or(untyped, |c| c.data_type.index() as u32));
        }
        // The oracle counts every write, classed or not (its recording did).
        let placed = self.oracle.as_mut().map(|o| o.stream(lpn, class));
        let Some(c) = class else {
            return 0;
        };
        let stream = match (&mut self.auto, placed) {
            (Some(a), _) => a.on_write(lpn, c.key()),
            (None, Some(s)) => s,
            (None, None) => self.map.stream(c.file, c.data_type),
        };
        assert!(
            stream < self.map.device_streams,
            "stream {stream} beyond the device's {}",
            self.map.device_streams
        );
        *self
            .routed
            .entry((c.file, c.data_type, stream))
            .or_insert(0) += 1;
        stream
    }

    fn mapping(&self) -> Option<Vec<(u32, u16)>> {
        self.auto.as_ref().map(AutoStreams::mapping)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<StreamMap, StreamMapError> {
        StreamMap::parse(Path::new("map.toml"), text, 4, 6)
    }

    #[test]
    fn named_policies_build_their_tables() {
        let m = StreamMap::policy(NamedPolicy::PerType, 3, 8).unwrap();
        assert_eq!(
            m.stream(2, DataType::Data),
            NamedPolicy::PerType.stream(DataType::Data)
        );
        assert_eq!(m.streams_used(), 5);
        let m = StreamMap::named("merge-similar", 3, 8).unwrap();
        assert_eq!(m.stream(0, DataType::Index), m.stream(0, DataType::Header));
        let m = StreamMap::named("different-merged", 3, 8).unwrap();
        assert_eq!(
            m.stream(1, DataType::Data),
            m.stream(1, DataType::Superblock)
        );
        let m = StreamMap::policy(NamedPolicy::PerFile, 10, 5).unwrap();
        let files: Vec<u16> = (0..10).map(|f| m.stream(f, DataType::Data)).collect();
        assert_eq!(files, [1, 2, 3, 4, 1, 2, 3, 4, 1, 2]);
        assert!(DataType::ALL.iter().all(|&t| m.stream(7, t) == 4));
        assert_eq!(m.streams_used(), 5);
        let m = StreamMap::policy(NamedPolicy::NoStreams, 3, 1).unwrap();
        assert_eq!(m.streams_used(), 1);
        assert!(StreamMap::policy(NamedPolicy::Auto, 3, 4)
            .unwrap()
            .is_auto());
        let m = StreamMap::named("oracle", 3, 4).unwrap();
        assert!(m.is_oracle() && !m.is_auto());
        assert_eq!(m.streams_used(), 4);
        assert!(matches!(
            StreamMap::policy(NamedPolicy::PerType, 3, 4),
            Err(StreamMapError::TooFewStreams {
                needed: 5,
                device: 4,
                ..
            })
        ));
        assert!(matches!(
            StreamMap::named("per-lba", 3, 4),
            Err(StreamMapError::UnknownPolicy { .. })
        ));
    }

    #[test]
    fn a_config_file_sets_types_then_files() {
        let m = parse(
            "default = 1\n[types]\nsuperblock = 2\ndata = 3\n[files.3]\ndata = 5\nindex = 4\n",
        )
        .unwrap();
        assert_eq!(m.stream(0, DataType::Superblock), 2);
        assert_eq!(m.stream(0, DataType::Header), 1);
        assert_eq!(m.stream(0, DataType::Data), 3);
        assert_eq!(m.stream(3, DataType::Data), 5);
        assert_eq!(m.stream(3, DataType::Index), 4);
        assert_eq!(m.stream(3, DataType::Superblock), 2);
        assert_eq!(m.streams_used(), 6);
        assert_eq!(m.name(), "map.toml");
        assert_eq!(parse("").unwrap().streams_used(), 1);
    }

    #[test]
    fn config_errors_name_the_file_line_and_field() {
        let cases = [
            ("[types]\ndata = 9\n", 2, "types.data", "does not exist"),
            ("[files.4]\ndata = 1\n", 1, "files.4", "4 DB files"),
            ("[files.x]\ndata = 1\n", 1, "files.x", "by its number"),
            ("[types]\ndata = 1\nlog = 2\n", 3, "log", "unknown field"),
            ("default = -1\n", 1, "-1", ""),
            ("[types\n", 1, "", ""),
        ];
        for (text, line, field, reason) in cases {
            match parse(text) {
                Err(StreamMapError::Config {
                    file,
                    line: l,
                    field: f,
                    reason: r,
                }) => {
                    assert_eq!(file, Path::new("map.toml"));
                    assert_eq!((l, f.as_str()), (line, field), "{text:?}: {r}");
                    assert!(r.contains(reason), "{text:?}: {r}");
                }
                other => panic!("{text:?}: {other:?}"),
            }
        }
        let e = parse("[types]\ndata = 9\n").unwrap_err().to_string();
        assert!(e.starts_with("map.toml:2: `types.data`"), "{e}");
    }

    #[test]
    fn class_streams_apply_the_map_and_leave_unclassed_writes_on_the_default_stream() {
        let map = StreamMap::policy(NamedPolicy::PerFile, 2, 3).unwrap();
        let mut r = ClassStreams::new(map, 100);
        r.measure_lifetimes(100);
        let data = |file| Some(WriteClass::new(file, DataType::Data));
        assert_eq!(r.stream(10, data(0)), 1);
        assert_eq!(r.stream(60, data(1)), 2);
        let index = Some(WriteClass::new(1, DataType::Index));
        assert_eq!(r.stream(60, index), 2);
        assert_eq!(r.stream(61, None), 0);
        assert!(r.mapping().is_none());
        assert_eq!(r.routed()[&(1, DataType::Data, 2)], 1);
        assert_eq!(r.routed()[&(1, DataType::Index, 2)], 1);
        let lt = r.lifetimes().unwrap();
        assert_eq!(lt.total_writes, 4);
        // Page 60 was written twice (data, then index): one data page died after 2 writes.
        let data_row = lt.classes.iter().find(|c| c.class == 3).unwrap();
        assert_eq!((data_row.writes, data_row.overwritten), (2, 1));
    }
}
