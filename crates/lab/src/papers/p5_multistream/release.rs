//! When each data type's pages leave their DB file: a measurement of the recorded update phase.
//!
//! A page's lifetime on a device without `discard` (Table 1, [`super::deaths`]) runs from its
//! write to the next write of its logical page, which is two waits: the page's **age at
//! release** — until the store releases it (a whole-file compaction's trim, ForestDB's file
//! deletion; or the store writing the same file page again, as the superblock) — and the
//! **reuse wait**, until the file system gives the freed block to some file that writes it.
//! The first depends on the type (a compaction copies the live documents first, at the start
//! of the new file's life, and appends headers over all of it); the second does not. This pass
//! measures the first from the tape alone (file pages, not device pages: no placement), so the
//! deaths' lifetime minus it is the reuse wait.
//!
//! Invariant: time is counted in page writes of the tape, the same clock as the deaths'.

use super::tape::{Event, Op};
use policy::streams::DataType;
use std::collections::HashMap;

const TYPES: usize = DataType::ALL.len();

/// Per type: pages released while counting and the sum of their ages (page writes).
#[derive(Debug, Default)]
pub struct ReleaseCounter {
    /// Per (file, file page): the time and type of its live write.
    live: HashMap<(u16, u64), (u64, usize)>,
    now_writes: u64,
    counting: bool,
    released: [u64; TYPES],
    /// Per type: of them, pages released by a write of the same file page (not a trim).
    rewritten: [u64; TYPES],
    sum_age: [f64; TYPES],
}

/// One type's line: its pages' mean age when their file released them.
#[derive(Clone, Debug, PartialEq)]
pub struct ReleaseLine {
    pub data_type: DataType,
    pub released: u64,
    /// Share of them released by a write of the same file page (not a trim).
    pub rewritten_share: f64,
    pub mean_age_writes: f64,
}

impl ReleaseCounter {
    /// Count releases from now on (the update phase); events before only set the live pages.
    pub fn start(&mut self) {
        self.counting = true;
    }

    pub fn play(&mut self, e: &Event) {
        match e {
            Event::Io { file, op } => self.op(*file, op),
            Event::Submit { file, ops } => ops.iter().for_each(|op| self.op(*file, op)),
            Event::Trim { file, page, pages } => {
                (*page..page + pages).for_each(|p| self.release(*file, p, false))
            }
            Event::Flush { .. } | Event::Commit { .. } => {}
        }
    }

    fn op(&mut self, file: u16, op: &Op) {
        let Op::Write { page, pages, hint } = op else {
            return;
        };
        for p in *page..page + u64::from(*pages) {
            self.release(file, p, true);
            self.now_writes += 1;
            if let Some(c) = hint.class {
                self.live
                    .insert((file, p), (self.now_writes, type_index(c.data_type)));
            }
        }
    }

    fn release(&mut self, file: u16, page: u64, by_write: bool) {
        let Some((written, t)) = self.live.remove(&(file, page)) else {
            return;
        };
        if self.counting {
            self.released[t] += 1;
            self.rewritten[t] += u64::from(by_write);
            self.sum_age[t] += (self.now_writes - written) as f64;
        }
    }

    /// One line per type that had a page released while counting.
    pub fn lines(&self) -> Vec<ReleaseLine> {
        DataType::ALL
            .iter()
            .enumerate()
            .filter(|(t, _)| self.released[*t] > 0)
            .map(|(t, &data_type)| ReleaseLine {
                data_type,
                released: self.released[t],
                rewritten_share: self.rewritten[t] as f64 / self.released[t] as f64,
                mean_age_writes: self.sum_age[t] / self.released[t] as f64,
            })
            .collect()
    }
}

fn type_index(t: DataType) -> usize {
    DataType::ALL
        .iter()
        .position(|&x| x == t)
        .expect("every data type is in DataType::ALL")
}

/// The release lines of a tape's update phase.
pub fn release_lines(load: &[Event], updates: &[Event]) -> Vec<ReleaseLine> {
    let mut c = ReleaseCounter::default();
    load.iter().for_each(|e| c.play(e));
    c.start();
    updates.iter().for_each(|e| c.play(e));
    c.lines()
}

/// The note's sentence: each type's age at release beside its lifetime on the device
/// (`lifetime_writes`, from the deaths pass; the difference is the reuse wait).
pub fn note(lines: &[ReleaseLine], lifetime_writes: &[(DataType, f64)]) -> String {
    let parts: Vec<String> = lines
        .iter()
        .map(|l| {
            let life = lifetime_writes
                .iter()
                .find(|(t, _)| *t == l.data_type)
                .map_or(String::new(), |(_, w)| {
                    format!(
                        " of a device lifetime of {w:.0} (reuse wait {:.0})",
                        w - l.mean_age_writes
                    )
                });
            format!(
                "{} {:.0}{life}, {:.0} % released by a rewrite of the file page",
                l.data_type.name(),
                l.mean_age_writes,
                l.rewritten_share * 100.0
            )
        })
        .collect();
    format!(
        "Age at release (page writes from a page's write to its store releasing it: the compaction's trim, ForestDB's file deletion, or the same file page written again), over the update phase: {}",
        parts.join("; ")
    )
}

/// Header's, index's and data's (age at release, device lifetime), in that order (None when
/// one is missing).
fn three_types(
    lines: &[ReleaseLine],
    lifetime_writes: &[(DataType, f64)],
) -> Option<Vec<(DataType, f64, f64)>> {
    [DataType::Header, DataType::Index, DataType::Data]
        .into_iter()
        .map(|t| {
            let age = lines.iter().find(|l| l.data_type == t)?.mean_age_writes;
            let life = lifetime_writes.iter().find(|(x, _)| *x == t)?.1;
            Some((t, age, life))
        })
        .collect()
}

/// The reuse wait's mean share of the device lifetime of header, index and data pages: the
/// part of a page's lifetime after its store released it, until the file system gave its
/// block to a writer (None when a type is missing).
pub fn reuse_wait_share(lines: &[ReleaseLine], lifetime_writes: &[(DataType, f64)]) -> Option<f64> {
    let rows = three_types(lines, lifetime_writes)?;
    Some(rows.iter().map(|r| (r.2 - r.1) / r.2).sum::<f64>() / rows.len() as f64)
}

/// The measured reason the device's lifetime order of header, index and data differs from
/// the store's order of release (None when a type's lifetime is missing): each type's age at
/// release and reuse wait, the two orders, and how far apart the three die on the device.
pub fn order_note(lines: &[ReleaseLine], lifetime_writes: &[(DataType, f64)]) -> Option<String> {
    let rows = three_types(lines, lifetime_writes)?;
    let order = |key: fn(&(DataType, f64, f64)) -> f64| {
        let mut v = rows.clone();
        v.sort_by(|a, b| key(a).total_cmp(&key(b)));
        v.iter().map(|r| r.0.name()).collect::<Vec<_>>().join(" < ")
    };
    let (by_age, by_life) = (order(|r| r.1), order(|r| r.2));
    let ratio = |i: usize, key: fn(&(DataType, f64, f64)) -> f64| key(&rows[i]) / key(&rows[2]);
    let lives: Vec<f64> = rows.iter().map(|r| r.2).collect();
    let spread = lives.iter().cloned().fold(0.0, f64::max)
        / lives.iter().cloned().fold(f64::INFINITY, f64::min);
    let wait_share = reuse_wait_share(lines, lifetime_writes)?;
    let waits: Vec<String> = rows
        .iter()
        .map(|r| format!("{} {:.0}", r.0.name(), r.2 - r.1))
        .collect();
    Some(format!(
        "Lifetime order, measured: released by their store in the order {by_age} (age header \
         ÷ data {:.2}, index ÷ data {:.2}); on the device {by_life} (header ÷ data {:.2}, index \
         ÷ data {:.2}): the reuse wait (the file system giving a freed block to a writer) is \
         {:.0} % of their device lifetime on average ({}), so header, index and data die within \
         {spread:.2}× of each other on the device, and a policy that keeps them apart \
         (per-type, merge-different) gains by them only that much",
        ratio(0, |r| r.1),
        ratio(1, |r| r.1),
        ratio(0, |r| r.2),
        ratio(1, |r| r.2),
        wait_share * 100.0,
        waits.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use blockdev::WriteHint;
    use policy::streams::WriteClass;

    fn write(file: u16, page: u64, pages: u32, t: DataType) -> Event {
        let hint = WriteHint {
            class: Some(WriteClass::new(u32::from(file), t)),
            ..WriteHint::NONE
        };
        Event::Io {
            file,
            op: Op::Write { page, pages, hint },
        }
    }

    #[test]
    fn copied_documents_written_first_are_older_at_release_than_headers() {
        let load = [write(0, 0, 1, DataType::Superblock)];
        let updates = [
            write(0, 10, 3, DataType::Data),      // copies: written at 2, 3, 4
            write(1, 0, 1, DataType::Data),       // another file: time passes (5)
            write(0, 20, 1, DataType::Header),    // 6
            write(0, 0, 1, DataType::Superblock), // releases the load's at 6 (age 5)
            Event::Trim {
                file: 0,
                page: 10,
                pages: 11,
            },
        ];
        let lines = release_lines(&load, &updates);
        let age = |t| {
            lines
                .iter()
                .find(|l| l.data_type == t)
                .map(|l| (l.released, l.mean_age_writes))
        };
        assert_eq!(age(DataType::Data), Some((3, 4.0)));
        let sb = lines.iter().find(|l| l.data_type == DataType::Superblock);
        assert_eq!(sb.map(|l| l.rewritten_share), Some(1.0));
        assert_eq!(lines[1].rewritten_share, 0.0); // 7 - (2, 3, 4)
        assert_eq!(age(DataType::Header), Some((1, 1.0)));
        assert_eq!(age(DataType::Superblock), Some((1, 5.0)));
        assert_eq!(age(DataType::Index), None);
        let n = note(&lines, &[(DataType::Data, 10.0)]);
        assert!(
            n.contains("data 4 of a device lifetime of 10 (reuse wait 6), 0 %"),
            "{n}"
        );
    }

    #[test]
    fn the_order_note_names_both_orders_and_the_reuse_wait() {
        let line = |t, age| ReleaseLine {
            data_type: t,
            released: 10,
            rewritten_share: 0.0,
            mean_age_writes: age,
        };
        let lines = [
            line(DataType::Header, 50.0),
            line(DataType::Index, 120.0),
            line(DataType::Data, 100.0),
        ];
        let life = [
            (DataType::Header, 300.0),
            (DataType::Index, 240.0),
            (DataType::Data, 250.0),
        ];
        let n = order_note(&lines, &life).unwrap();
        assert!(n.contains("order header < data < index"), "{n}");
        assert!(n.contains("on the device index < data < header"), "{n}");
        assert!(n.contains("header ÷ data 0.50"), "{n}");
        assert!(n.contains("within 1.25×"), "{n}");
        assert_eq!(order_note(&lines[..2], &life), None);
    }
}
