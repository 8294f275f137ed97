//! Buffer policies with an optional flash extension (P3): `lru`, `2q`, `lru-ext`, `2q-ext`,
//! `2q-flash`, as one type the mechanism holds without knowing which it is.
//!
//! The policy decides; the mechanism applies. On a miss the mechanism looks the page up in the
//! flash logs (their directories are [`FlashLog`]s it owns), reads it from flash or disk, makes
//! room if the main buffer is full — asking [`Replacement::victim`], then [`BufferPolicy::placement`]
//! (where the victim goes: out, or appended to which flash log), then [`Replacement::forget`] —
//! and finally admits the page with [`BufferPolicy::admit_from`] (where it came from). The trace
//! simulator ([`crate::BufferSim`]) only counts these moves; a buffer pool does the I/O.
//!
//! - `lru-ext`: one log; every main victim goes to it; a page read back goes to main's MRU.
//! - `2q-ext`: one log that *is* 2Q's `A1out` (pages, not ids): `A1in` victims go to it, `Am`
//!   victims leave; a page read back goes to `Am`. No ghost queue.
//! - `2q-flash`: two logs, `A1out` (`ext x (1 - r)`) and `Amout` (`ext x r`): `A1in` victims go
//!   to `A1out`, `Am` victims to `Amout`; a page read back from either goes to `Am`.

use crate::{FlashLog, LogOrder, LruPolicy, Queue, Replacement, TwoQ, TwoQConfig};
use std::hash::Hash;

/// The five policies, as the CLI spells them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PolicyKind {
    Lru,
    TwoQ,
    LruExt,
    TwoQExt,
    TwoQFlash,
}

impl PolicyKind {
    pub const ALL: [PolicyKind; 5] = [
        PolicyKind::Lru,
        PolicyKind::TwoQ,
        PolicyKind::LruExt,
        PolicyKind::TwoQExt,
        PolicyKind::TwoQFlash,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Lru => "lru",
            PolicyKind::TwoQ => "2q",
            PolicyKind::LruExt => "lru-ext",
            PolicyKind::TwoQExt => "2q-ext",
            PolicyKind::TwoQFlash => "2q-flash",
        }
    }

    pub fn parse(s: &str) -> Option<PolicyKind> {
        let s = s.to_ascii_lowercase();
        PolicyKind::ALL.into_iter().find(|k| k.name() == s)
    }

    /// Does the policy use a flash extension?
    pub fn is_extended(self) -> bool {
        matches!(
            self,
            PolicyKind::LruExt | PolicyKind::TwoQExt | PolicyKind::TwoQFlash
        )
    }
}

/// Index of a flash log in [`BufferPolicy::log_capacities`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LogId(pub u8);

impl LogId {
    /// `lru-ext`'s log, `2q-ext`'s and `2q-flash`'s `A1out`.
    pub const FIRST: LogId = LogId(0);
    /// `2q-flash`'s `Amout`.
    pub const AMOUT: LogId = LogId(1);
}

/// Where a main-buffer victim goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Leaves the buffer (written to disk first if dirty).
    Out,
    /// Appended to a flash log (and written to disk first if dirty).
    Log(LogId),
}

/// Where a missed page was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Disk,
    Log(LogId),
}

/// A policy and its sizes, in pages.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PolicyConfig {
    pub kind: PolicyKind,
    /// Main (DRAM) buffer, pages.
    pub size_pages: usize,
    /// Flash extension, pages (0 for `lru` and `2q`).
    pub ext_pages: usize,
    /// 2Q's Kin; None: 25 % of `size_pages` (at least 1).
    pub kin: Option<usize>,
    /// 2Q's Kout (plain `2q` only); None: 50 % of `size_pages`.
    pub kout: Option<usize>,
    /// `2q-flash`: the share of the flash given to `Amout` (Amout:A1out = r : 1 - r).
    pub amout_ratio: f64,
    /// How each flash log picks its slots (P3's circular log, or slot refill: [`FlashLog`]).
    pub log_order: LogOrder,
}

impl PolicyConfig {
    pub const AMOUT_RATIO_DEFAULT: f64 = 0.6;

    pub fn new(kind: PolicyKind, size_pages: usize, ext_pages: usize) -> PolicyConfig {
        PolicyConfig {
            kind,
            size_pages,
            ext_pages,
            kin: None,
            kout: None,
            amout_ratio: PolicyConfig::AMOUT_RATIO_DEFAULT,
            log_order: LogOrder::default(),
        }
    }

    /// Check the sizes; the message says what to change.
    pub fn validate(&self) -> Result<(), PolicyError> {
        let bad = |reason: String| Err(PolicyError { reason });
        if self.size_pages == 0 {
            return bad("the main buffer needs at least 1 page".into());
        }
        if !self.kind.is_extended() && self.ext_pages > 0 {
            return bad(format!(
                "policy {} has no flash extension; use lru-ext, 2q-ext or 2q-flash, or drop the extension size",
                self.kind.name()
            ));
        }
        if self.ext_pages >= u32::MAX as usize || self.size_pages >= u32::MAX as usize {
            return bad("sizes must be below 2^32 pages".into());
        }
        if !(0.0..=1.0).contains(&self.amout_ratio) {
            return bad(format!(
                "the Amout share {} must lie in 0..=1",
                self.amout_ratio
            ));
        }
        if self.kin == Some(0) {
            return bad("Kin must be at least 1 page".into());
        }
        if self.kin.is_some() && matches!(self.kind, PolicyKind::Lru | PolicyKind::LruExt) {
            return bad(format!(
                "Kin is a 2Q knob; policy {} has none",
                self.kind.name()
            ));
        }
        if self.kout.is_some() && self.kind != PolicyKind::TwoQ {
            return bad(format!(
                "Kout sizes plain 2q's ghost queue; {} keeps A1out on flash (size it with the extension)",
                self.kind.name()
            ));
        }
        Ok(())
    }

    /// 2Q's knobs: ext policies keep A1out on flash, so they have no ghost queue.
    pub fn two_q(&self) -> TwoQConfig {
        let d = TwoQConfig::for_size(self.size_pages);
        TwoQConfig {
            kin: self.kin.unwrap_or(d.kin),
            kout: match self.kind {
                PolicyKind::TwoQ => self.kout.unwrap_or(d.kout),
                _ => 0,
            },
        }
    }

    /// Pages of each flash log, indexed by [`LogId`].
    pub fn log_capacities(&self) -> Vec<usize> {
        match self.kind {
            PolicyKind::Lru | PolicyKind::TwoQ => vec![],
            PolicyKind::LruExt | PolicyKind::TwoQExt => vec![self.ext_pages],
            PolicyKind::TwoQFlash => {
                let amout = (self.ext_pages as f64 * self.amout_ratio).round() as usize;
                let amout = amout.min(self.ext_pages);
                vec![self.ext_pages - amout, amout]
            }
        }
    }
}

/// A policy configuration that cannot work, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("buffer policy: {reason}")]
#[non_exhaustive]
pub struct PolicyError {
    pub reason: String,
}

enum Main<K> {
    Lru(LruPolicy<K>),
    TwoQ(TwoQ<K>),
}

/// See the module docs.
pub struct BufferPolicy<K> {
    kind: PolicyKind,
    main: Main<K>,
    logs: Vec<usize>,
    log_order: LogOrder,
}

impl<K: Copy + Eq + Hash> BufferPolicy<K> {
    pub fn new(config: &PolicyConfig) -> Result<BufferPolicy<K>, PolicyError> {
        config.validate()?;
        let main = match config.kind {
            PolicyKind::Lru | PolicyKind::LruExt => Main::Lru(LruPolicy::new()),
            _ => Main::TwoQ(TwoQ::new(config.two_q())),
        };
        Ok(BufferPolicy {
            kind: config.kind,
            main,
            logs: config.log_capacities(),
            log_order: config.log_order,
        })
    }

    pub fn kind(&self) -> PolicyKind {
        self.kind
    }

    /// Pages of each flash log the mechanism must keep, indexed by [`LogId`].
    pub fn log_capacities(&self) -> &[usize] {
        &self.logs
    }

    /// How the flash logs pick their slots.
    pub fn log_order(&self) -> LogOrder {
        self.log_order
    }

    /// The LRU state, for `lru` and `lru-ext`.
    pub fn lru(&self) -> Option<&LruPolicy<K>> {
        match &self.main {
            Main::Lru(l) => Some(l),
            Main::TwoQ(_) => None,
        }
    }

    /// The 2Q state, for the 2Q-based policies.
    pub fn two_q(&self) -> Option<&TwoQ<K>> {
        match &self.main {
            Main::TwoQ(q) => Some(q),
            Main::Lru(_) => None,
        }
    }

    /// Where `victim` (chosen by `victim`, still resident) goes; call before `forget`.
    pub fn placement(&self, victim: &K) -> Placement {
        let log = match (self.kind, &self.main) {
            (PolicyKind::LruExt, _) => LogId::FIRST,
            (PolicyKind::TwoQExt, Main::TwoQ(q)) => match q.queue_of(victim) {
                Some(Queue::A1in) => LogId::FIRST,
                _ => return Placement::Out,
            },
            (PolicyKind::TwoQFlash, Main::TwoQ(q)) => match q.queue_of(victim) {
                Some(Queue::A1in) => LogId::FIRST,
                _ => LogId::AMOUT,
            },
            _ => return Placement::Out,
        };
        if self.logs[log.0 as usize] == 0 {
            Placement::Out
        } else {
            Placement::Log(log)
        }
    }

    /// `key` became resident after a miss, read from `source`.
    pub fn admit_from(&mut self, key: K, source: Source) {
        match (&mut self.main, source) {
            (Main::Lru(l), _) => l.admit(key),
            (Main::TwoQ(q), Source::Disk) => q.admit(key),
            (Main::TwoQ(q), Source::Log(_)) => q.admit_to(key, Queue::Am),
        }
    }
}

impl<K: Copy + Eq + Hash> Replacement<K> for BufferPolicy<K> {
    fn name(&self) -> &'static str {
        self.kind.name()
    }
    fn admit(&mut self, key: K) {
        self.admit_from(key, Source::Disk)
    }
    fn touch(&mut self, key: K) {
        match &mut self.main {
            Main::Lru(l) => l.touch(key),
            Main::TwoQ(q) => q.touch(key),
        }
    }
    fn forget(&mut self, key: K) {
        match &mut self.main {
            Main::Lru(l) => l.forget(key),
            Main::TwoQ(q) => q.forget(key),
        }
    }
    fn victim(&mut self, evictable: &mut dyn FnMut(K) -> bool) -> Option<K> {
        match &mut self.main {
            Main::Lru(l) => l.victim(evictable),
            Main::TwoQ(q) => q.victim(evictable),
        }
    }
    fn len(&self) -> usize {
        match &self.main {
            Main::Lru(l) => l.len(),
            Main::TwoQ(q) => q.len(),
        }
    }
}

/// The flash logs a policy needs, empty.
pub fn logs_for<K: Copy + Eq + Hash>(policy: &BufferPolicy<K>) -> Vec<FlashLog<K>> {
    policy
        .log_capacities()
        .iter()
        .map(|&c| FlashLog::with_order(c, policy.log_order))
        .collect()
}
