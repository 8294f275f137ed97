//! YCSB (Cooper et al., SoCC 2010): the core workloads A–F and an update-only workload as
//! streaming, seeded operation iterators, and a reader for YCSB request logs.
//!
//! Model (YCSB's `CoreWorkload` with one value per record): the load phase ([`load`]) inserts
//! key numbers `0..records` in order; the run phase ([`run`]) draws `operations` operations,
//! each kind from the workload's [`Mix`] and each key from its [`KeyDistribution`]:
//! - `uniform`: over the loaded records `0..records` (as YCSB, keys inserted by the run are
//!   not read);
//! - `zipfian`: YCSB's `ScrambledZipfianGenerator` — a zipf rank (theta 0.99) over 10^10 items,
//!   FNV-hashed onto `0..=records + expected inserts`, drawn again while it names a key not
//!   inserted yet (expected inserts = 2 x operations x insert proportion, as YCSB);
//! - `latest`: YCSB's `SkewedLatestGenerator` — the newest key minus a zipf rank over the keys
//!   so far (its zeta sum is computed once, then extended with each insert).
//!
//! Key number `n` is named `user<fnv64(n)>` (YCSB's default hashed insert order) or `user<n>`
//! (`ordered_inserts`), zero-padded to `key_bytes` (0 = no padding). An operation carries the
//! number after `user` ([`YcsbOp::key`]); [`key_name`] renders the name. Scans cover
//! `1..=max_scan_length` records (uniform). Values are `value_bytes` long; [`fill_value`] makes
//! their bytes. Iterators hold O(1) state (the zipf constants), whatever the operation count.
//!
//! Request logs ([`LogReader`]): lines `OP TABLE userN [...]` as YCSB's `BasicDB` prints
//! them, `OP` one of READ, UPDATE, INSERT, SCAN (then a record count), READMODIFYWRITE; the
//! rest of a line (field lists) is ignored. Blank lines, `#` comments and YCSB's `[...]`
//! measurement lines are skipped; anything else malformed is a [`WorkloadError::Parse`]
//! naming the file, line and field.

use crate::lines::Lines;
use crate::trace::open_text;
use crate::WorkloadError;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fmt;
use std::io::BufRead;
use std::path::Path;

/// YCSB's zipfian constant (`ZipfianGenerator.ZIPFIAN_CONSTANT`).
pub const ZIPF_THETA: f64 = 0.99;
/// Items of the scrambled zipfian's rank space (`ScrambledZipfianGenerator.ITEM_COUNT`).
const SCRAMBLED_ITEMS: u64 = 10_000_000_000;
/// zeta(10^10 + 1, 0.99), precomputed by YCSB (`ScrambledZipfianGenerator.ZETAN`).
const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;
/// Bounded redraws of a zipfian key not yet inserted; then it wraps (never reached in practice).
const REDRAWS_MAX: u32 = 1_000;

/// The kind of a YCSB operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum YcsbOpKind {
    Read,
    Update,
    Insert,
    Scan,
    ReadModifyWrite,
}

impl YcsbOpKind {
    pub const ALL: [YcsbOpKind; 5] = [
        YcsbOpKind::Read,
        YcsbOpKind::Update,
        YcsbOpKind::Insert,
        YcsbOpKind::Scan,
        YcsbOpKind::ReadModifyWrite,
    ];

    /// The word of a request log.
    pub fn word(self) -> &'static str {
        match self {
            YcsbOpKind::Read => "READ",
            YcsbOpKind::Update => "UPDATE",
            YcsbOpKind::Insert => "INSERT",
            YcsbOpKind::Scan => "SCAN",
            YcsbOpKind::ReadModifyWrite => "READMODIFYWRITE",
        }
    }
}

/// One operation. `key` is the number of the key's name `user<key>` (see [`key_name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum YcsbOp {
    Read {
        key: u64,
    },
    Update {
        key: u64,
        value_bytes: u32,
    },
    Insert {
        key: u64,
        value_bytes: u32,
    },
    /// Read `records` records in key order from `key`.
    Scan {
        key: u64,
        records: u32,
    },
    /// Read `key`, then write it back with a new value.
    ReadModifyWrite {
        key: u64,
        value_bytes: u32,
    },
}

impl YcsbOp {
    pub fn key(&self) -> u64 {
        match *self {
            YcsbOp::Read { key }
            | YcsbOp::Update { key, .. }
            | YcsbOp::Insert { key, .. }
            | YcsbOp::Scan { key, .. }
            | YcsbOp::ReadModifyWrite { key, .. } => key,
        }
    }

    pub fn kind(&self) -> YcsbOpKind {
        match self {
            YcsbOp::Read { .. } => YcsbOpKind::Read,
            YcsbOp::Update { .. } => YcsbOpKind::Update,
            YcsbOp::Insert { .. } => YcsbOpKind::Insert,
            YcsbOp::Scan { .. } => YcsbOpKind::Scan,
            YcsbOp::ReadModifyWrite { .. } => YcsbOpKind::ReadModifyWrite,
        }
    }
}

/// The request-log line of an operation (table `usertable`, no field list); [`LogReader`]
/// reads it back.
impl fmt::Display for YcsbOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} usertable user{}", self.kind().word(), self.key())?;
        if let YcsbOp::Scan { records, .. } = self {
            write!(f, " {records}")?;
        }
        Ok(())
    }
}

/// Operation proportions (any non-negative weights; they need not sum to 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mix {
    pub read: f64,
    pub update: f64,
    pub insert: f64,
    pub scan: f64,
    pub read_modify_write: f64,
}

impl Mix {
    fn weights(&self) -> [(YcsbOpKind, f64); 5] {
        [
            (YcsbOpKind::Read, self.read),
            (YcsbOpKind::Update, self.update),
            (YcsbOpKind::Insert, self.insert),
            (YcsbOpKind::Scan, self.scan),
            (YcsbOpKind::ReadModifyWrite, self.read_modify_write),
        ]
    }

    /// The share of `kind` in the mix.
    pub fn share(&self, kind: YcsbOpKind) -> f64 {
        let w = self.weights();
        let total: f64 = w.iter().map(|(_, x)| x).sum();
        w.iter()
            .find(|(k, _)| *k == kind)
            .map_or(0.0, |(_, x)| x / total)
    }
}

/// How the run phase picks keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyDistribution {
    Uniform,
    Zipfian,
    Latest,
}

impl KeyDistribution {
    pub fn parse(s: &str) -> Option<KeyDistribution> {
        match s.to_ascii_lowercase().as_str() {
            "uniform" => Some(KeyDistribution::Uniform),
            "zipfian" | "zipf" => Some(KeyDistribution::Zipfian),
            "latest" => Some(KeyDistribution::Latest),
            _ => None,
        }
    }
}

/// YCSB's core workloads (their `workloads/workloada`..`f` files) and an update-only one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoreWorkload {
    /// 50 % reads, 50 % updates, zipfian (update heavy).
    A,
    /// 95 % reads, 5 % updates, zipfian (read mostly).
    B,
    /// 100 % reads, zipfian.
    C,
    /// 95 % reads, 5 % inserts, latest.
    D,
    /// 95 % scans, 5 % inserts, zipfian.
    E,
    /// 50 % reads, 50 % read-modify-writes, zipfian.
    F,
    /// 100 % updates, zipfian (P5's overwrite workload).
    UpdateOnly,
}

impl CoreWorkload {
    pub const ALL: [CoreWorkload; 7] = [
        CoreWorkload::A,
        CoreWorkload::B,
        CoreWorkload::C,
        CoreWorkload::D,
        CoreWorkload::E,
        CoreWorkload::F,
        CoreWorkload::UpdateOnly,
    ];

    /// `a`..`f` or `update`.
    pub fn parse(s: &str) -> Option<CoreWorkload> {
        CoreWorkload::ALL
            .into_iter()
            .find(|w| w.name() == s.to_ascii_lowercase())
    }

    pub fn name(self) -> &'static str {
        match self {
            CoreWorkload::A => "a",
            CoreWorkload::B => "b",
            CoreWorkload::C => "c",
            CoreWorkload::D => "d",
            CoreWorkload::E => "e",
            CoreWorkload::F => "f",
            CoreWorkload::UpdateOnly => "update",
        }
    }

    pub fn mix(self) -> Mix {
        let m = |read, update, insert, scan, read_modify_write| Mix {
            read,
            update,
            insert,
            scan,
            read_modify_write,
        };
        match self {
            CoreWorkload::A => m(0.5, 0.5, 0.0, 0.0, 0.0),
            CoreWorkload::B => m(0.95, 0.05, 0.0, 0.0, 0.0),
            CoreWorkload::C => m(1.0, 0.0, 0.0, 0.0, 0.0),
            CoreWorkload::D => m(0.95, 0.0, 0.05, 0.0, 0.0),
            CoreWorkload::E => m(0.0, 0.0, 0.05, 0.95, 0.0),
            CoreWorkload::F => m(0.5, 0.0, 0.0, 0.0, 0.5),
            CoreWorkload::UpdateOnly => m(0.0, 1.0, 0.0, 0.0, 0.0),
        }
    }

    pub fn distribution(self) -> KeyDistribution {
        match self {
            CoreWorkload::D => KeyDistribution::Latest,
            _ => KeyDistribution::Zipfian,
        }
    }
}

/// A YCSB run: which workload, how big, which seed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct YcsbConfig {
    pub workload: CoreWorkload,
    /// Records of the load phase (YCSB `recordcount`; default 1,000).
    pub records: u64,
    /// Operations of the run phase (YCSB `operationcount`; default 1,000).
    pub operations: u64,
    /// Key names are zero-padded to this many bytes (0: no padding, YCSB's default).
    pub key_bytes: u32,
    /// Bytes of each written value (default 1,000: YCSB's 10 fields of 100 bytes).
    pub value_bytes: u32,
    /// Key choice of the run phase (None: the workload's own).
    pub distribution: Option<KeyDistribution>,
    /// Longest scan in records (YCSB `maxscanlength`; default 100).
    pub max_scan_length: u32,
    /// Name key number n `user<n>` instead of `user<fnv64(n)>` (YCSB `insertorder=ordered`).
    pub ordered_inserts: bool,
    pub seed: u64,
}

impl Default for YcsbConfig {
    fn default() -> Self {
        YcsbConfig {
            workload: CoreWorkload::A,
            records: 1_000,
            operations: 1_000,
            key_bytes: 0,
            value_bytes: 1_000,
            distribution: None,
            max_scan_length: 100,
            ordered_inserts: false,
            seed: 1,
        }
    }
}

/// Longest key name [`YcsbConfig::key_bytes`] may ask for.
pub const KEY_BYTES_MAX: u32 = 4096;

impl YcsbConfig {
    pub fn validate(&self) -> Result<(), WorkloadError> {
        let bad = |reason: String| {
            Err(WorkloadError::Spec {
                spec: format!("ycsb workload {}", self.workload.name()),
                reason,
            })
        };
        if self.records == 0 {
            return bad("records must be at least 1 (the run phase reads loaded records)".into());
        }
        if self.key_bytes != 0 && !(5..=KEY_BYTES_MAX).contains(&self.key_bytes) {
            return bad(format!(
                "key_bytes {} must be 0 (no padding) or 5..={KEY_BYTES_MAX} (`user` and a digit)",
                self.key_bytes
            ));
        }
        if self.max_scan_length == 0 {
            return bad("max_scan_length must be at least 1".into());
        }
        Ok(())
    }

    pub fn distribution(&self) -> KeyDistribution {
        self.distribution
            .unwrap_or_else(|| self.workload.distribution())
    }

    /// The number in the name of key number `n` (`user<number>`).
    pub fn key_of(&self, n: u64) -> u64 {
        if self.ordered_inserts {
            n
        } else {
            fnv_hash64(n)
        }
    }
}

/// YCSB's `Utils.fnvhash64`: FNV-1a over the 8 bytes of `val` (low first), then `Math.abs`
/// of the signed result (so the top bit is clear except for `i64::MIN`, kept as 2^63).
pub fn fnv_hash64(mut val: u64) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for _ in 0..8 {
        h ^= val & 0xff;
        val >>= 8;
        h = h.wrapping_mul(1_099_511_628_211);
    }
    (h as i64).unsigned_abs()
}

/// The name of key `key`: `user` then its digits, zero-padded to `key_bytes` (0: none).
pub fn key_name(key: u64, key_bytes: u32) -> String {
    let digits = key.to_string();
    let pad = (key_bytes as usize).saturating_sub(4 + digits.len());
    format!("user{}{digits}", "0".repeat(pad))
}

/// Fill `buf` with the value bytes of `key` at write `version` (deterministic, printable).
pub fn fill_value(buf: &mut [u8], key: u64, version: u64) {
    let mut x = key ^ version.rotate_left(32) ^ 0x9E37_79B9_7F4A_7C15;
    for chunk in buf.chunks_mut(8) {
        // splitmix64 step
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        for (b, r) in chunk.iter_mut().zip(z.to_le_bytes()) {
            *b = b' ' + r % 95;
        }
    }
}

/// The load phase: one insert per record, key numbers `0..records` in order.
pub fn load(cfg: &YcsbConfig) -> Result<impl Iterator<Item = YcsbOp> + Send, WorkloadError> {
    cfg.validate()?;
    let cfg = *cfg;
    Ok((0..cfg.records).map(move |n| YcsbOp::Insert {
        key: cfg.key_of(n),
        value_bytes: cfg.value_bytes,
    }))
}

/// The run phase: `operations` operations, deterministic for the config's seed.
pub fn run(cfg: &YcsbConfig) -> Result<RunPhase, WorkloadError> {
    cfg.validate()?;
    let mix = cfg.workload.mix();
    let expected_inserts = (cfg.operations as f64 * mix.share(YcsbOpKind::Insert) * 2.0) as u64;
    let key_space = cfg
        .records
        .saturating_add(expected_inserts)
        .saturating_add(1);
    let chooser = match cfg.distribution() {
        KeyDistribution::Uniform => KeyChooser::Uniform,
        KeyDistribution::Zipfian => KeyChooser::Zipfian {
            ranks: Zipfian::with_zetan(SCRAMBLED_ITEMS + 1, ZIPF_THETA, SCRAMBLED_ZETAN),
            key_space,
        },
        KeyDistribution::Latest => KeyChooser::Latest(Zipfian::new(cfg.records, ZIPF_THETA)),
    };
    Ok(RunPhase {
        cfg: *cfg,
        mix,
        rng: ChaCha8Rng::seed_from_u64(cfg.seed),
        chooser,
        keys: cfg.records,
        remaining: cfg.operations,
    })
}

enum KeyChooser {
    Uniform,
    Zipfian { ranks: Zipfian, key_space: u64 },
    Latest(Zipfian),
}

/// The run phase's operations (see [`run`]).
pub struct RunPhase {
    cfg: YcsbConfig,
    mix: Mix,
    rng: ChaCha8Rng,
    chooser: KeyChooser,
    /// Key numbers inserted so far (load + run): `0..keys`.
    keys: u64,
    remaining: u64,
}

impl RunPhase {
    fn kind(&mut self) -> YcsbOpKind {
        let weights = self.mix.weights();
        let total: f64 = weights.iter().map(|(_, w)| w).sum();
        let mut u = self.rng.gen::<f64>() * total;
        for (kind, w) in weights {
            if u < w {
                return kind;
            }
            u -= w;
        }
        // Rounding left u at the total: the last kind with any weight.
        weights
            .iter()
            .rev()
            .find(|(_, w)| *w > 0.0)
            .map_or(YcsbOpKind::Read, |(k, _)| *k)
    }

    /// The name number of a key already inserted.
    fn existing_key(&mut self) -> u64 {
        let n = self.existing();
        self.cfg.key_of(n)
    }

    /// A key number already inserted.
    fn existing(&mut self) -> u64 {
        match &mut self.chooser {
            KeyChooser::Uniform => self.rng.gen_range(0..self.cfg.records),
            KeyChooser::Zipfian { ranks, key_space } => {
                for _ in 0..REDRAWS_MAX {
                    let n = fnv_hash64(ranks.next(&mut self.rng, ranks.items)) % *key_space;
                    if n < self.keys {
                        return n;
                    }
                }
                self.rng.gen_range(0..self.keys)
            }
            KeyChooser::Latest(ranks) => {
                let newest = self.keys - 1;
                newest - ranks.next(&mut self.rng, self.keys).min(newest)
            }
        }
    }
}

impl Iterator for RunPhase {
    type Item = YcsbOp;

    fn next(&mut self) -> Option<YcsbOp> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let value_bytes = self.cfg.value_bytes;
        let op = match self.kind() {
            YcsbOpKind::Insert => {
                self.keys += 1;
                YcsbOp::Insert {
                    key: self.cfg.key_of(self.keys - 1),
                    value_bytes,
                }
            }
            YcsbOpKind::Read => YcsbOp::Read {
                key: self.existing_key(),
            },
            YcsbOpKind::Update => YcsbOp::Update {
                key: self.existing_key(),
                value_bytes,
            },
            YcsbOpKind::ReadModifyWrite => YcsbOp::ReadModifyWrite {
                key: self.existing_key(),
                value_bytes,
            },
            YcsbOpKind::Scan => YcsbOp::Scan {
                key: self.existing_key(),
                records: self.rng.gen_range(1..=self.cfg.max_scan_length),
            },
        };
        Some(op)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.remaining).unwrap_or(usize::MAX);
        (n, Some(n))
    }
}

/// YCSB's `ZipfianGenerator` (Gray et al., "Quickly generating billion-record synthetic
/// databases", SIGMOD 1994): rank 0 is the most popular; the item count may grow between
/// draws (the zeta sum is extended incrementally).
#[derive(Clone, Debug)]
struct Zipfian {
    items: u64,
    theta: f64,
    alpha: f64,
    zeta2theta: f64,
    zetan: f64,
    eta: f64,
}

impl Zipfian {
    fn new(items: u64, theta: f64) -> Zipfian {
        Zipfian::with_zetan(items, theta, zeta(0, items, theta, 0.0))
    }

    fn with_zetan(items: u64, theta: f64, zetan: f64) -> Zipfian {
        assert!(
            items >= 1 && (0.0..1.0).contains(&theta),
            "zipf over {items}, {theta}"
        );
        let zeta2theta = zeta(0, 2, theta, 0.0);
        let mut z = Zipfian {
            items,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zeta2theta,
            zetan,
            eta: 0.0,
        };
        z.eta = z.eta_for(items);
        z
    }

    fn eta_for(&self, items: u64) -> f64 {
        (1.0 - (2.0 / items as f64).powf(1.0 - self.theta)) / (1.0 - self.zeta2theta / self.zetan)
    }

    /// A rank in `0..items` (the count grows to `items` first if it is larger).
    fn next<R: Rng>(&mut self, rng: &mut R, items: u64) -> u64 {
        if items > self.items {
            self.zetan = zeta(self.items, items, self.theta, self.zetan);
            self.items = items;
            self.eta = self.eta_for(items);
        }
        let u: f64 = rng.gen();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return 1.min(items - 1);
        }
        let rank = (items as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64;
        rank.min(items - 1)
    }
}

/// Terms of a zeta sum added one by one; past them the tail is integrated.
const ZETA_EXACT_TERMS: u64 = 1_000_000;

/// `initial + sum over i in from..to of 1 / (i + 1)^theta`: the first million terms exactly
/// (as YCSB), the rest by Euler–Maclaurin (relative error < 1e-12 there), so a billion keys
/// do not cost a billion `powf`s.
fn zeta(from: u64, to: u64, theta: f64, initial: f64) -> f64 {
    let exact_to = to.min(from.saturating_add(ZETA_EXACT_TERMS));
    let sum = (from..exact_to).fold(initial, |s, i| s + 1.0 / ((i + 1) as f64).powf(theta));
    if exact_to == to {
        return sum;
    }
    // Terms k = a..=b of k^-theta.
    let (a, b) = ((exact_to + 1) as f64, to as f64);
    let f = |x: f64| x.powf(-theta);
    let df = |x: f64| -theta * x.powf(-theta - 1.0);
    let integral = (b.powf(1.0 - theta) - a.powf(1.0 - theta)) / (1.0 - theta);
    sum + integral + (f(a) + f(b)) / 2.0 + (df(b) - df(a)) / 12.0
}

/// Parse one request-log line. `Ok(None)`: blank, `#` comment or a `[...]` measurement line.
/// `Err(reason)`: malformed; the reason names the field and what was expected.
pub fn parse_log_line(line: &str, value_bytes: u32) -> Result<Option<YcsbOp>, String> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') || line.starts_with('[') {
        return Ok(None);
    }
    let mut f = line.split_whitespace();
    let word = f.next().unwrap_or_default();
    let kind = YcsbOpKind::ALL
        .into_iter()
        .find(|k| k.word() == word)
        .ok_or_else(|| {
            format!("field 1 (operation) `{word}`: expected READ, UPDATE, INSERT, SCAN or READMODIFYWRITE")
        })?;
    f.next().ok_or("field 2 (table): missing")?;
    let key_field = f
        .next()
        .ok_or("field 3 (key): missing; expected user<number>")?;
    let key = key_field
        .strip_prefix("user")
        .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|d| d.parse::<u64>().ok())
        .ok_or_else(|| {
            format!("field 3 (key) `{key_field}`: expected user<number> (a number below 2^64)")
        })?;
    Ok(Some(match kind {
        YcsbOpKind::Read => YcsbOp::Read { key },
        YcsbOpKind::Update => YcsbOp::Update { key, value_bytes },
        YcsbOpKind::Insert => YcsbOp::Insert { key, value_bytes },
        YcsbOpKind::ReadModifyWrite => YcsbOp::ReadModifyWrite { key, value_bytes },
        YcsbOpKind::Scan => {
            let n = f.next().ok_or("field 4 (scan record count): missing")?;
            let records = n.parse::<u32>().ok().filter(|&r| r >= 1).ok_or_else(|| {
                format!(
                    "field 4 (scan record count) `{n}`: expected a number from 1 to {}",
                    u32::MAX
                )
            })?;
            YcsbOp::Scan { key, records }
        }
    }))
}

/// Streams the operations of a YCSB request log (plain or compressed, as trace files);
/// writes get `value_bytes`-byte values. Stops after the first error.
pub struct LogReader {
    lines: Lines,
    value_bytes: u32,
}

impl LogReader {
    pub fn open(path: &Path, value_bytes: u32) -> Result<LogReader, WorkloadError> {
        Ok(LogReader::new(path, open_text(path)?, value_bytes))
    }

    /// Read a log from `input`; errors name `path`.
    pub fn new(path: &Path, input: Box<dyn BufRead + Send>, value_bytes: u32) -> LogReader {
        LogReader {
            lines: Lines::new(path, input),
            value_bytes,
        }
    }
}

impl Iterator for LogReader {
    type Item = Result<YcsbOp, WorkloadError>;

    fn next(&mut self) -> Option<Self::Item> {
        let value_bytes = self.value_bytes;
        let r = self.lines.next_parsed(
            "line is not UTF-8 text (is this a YCSB request log?)",
            |text| parse_log_line(text, value_bytes),
        )?;
        Some(r.map_err(|e| WorkloadError::from_line(&self.lines, e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_zeta_tail_matches_the_exact_sum() {
        let n = 3 * ZETA_EXACT_TERMS + 17;
        let exact = (0..n).fold(0.0, |s, i| s + 1.0 / ((i + 1) as f64).powf(ZIPF_THETA));
        let fast = zeta(0, n, ZIPF_THETA, 0.0);
        assert!(((fast - exact) / exact).abs() < 1e-10, "{fast} vs {exact}");
        // Extending a sum equals computing it at once.
        let grown = zeta(n, n + 5 * ZETA_EXACT_TERMS, ZIPF_THETA, fast);
        let once = zeta(0, n + 5 * ZETA_EXACT_TERMS, ZIPF_THETA, 0.0);
        assert!(((grown - once) / once).abs() < 1e-10, "{grown} vs {once}");
    }

    #[test]
    fn ycsbs_precomputed_zeta_is_reproduced() {
        let z = zeta(0, SCRAMBLED_ITEMS + 1, ZIPF_THETA, 0.0);
        assert!((z - SCRAMBLED_ZETAN).abs() < 1e-6, "{z}");
    }
}
