//! What ends each data type's pages on the device: a measurement of the recorded update phase.
//!
//! On a device without `discard` (the stores' trims are dropped, as on P5's ext4), a page
//! written at logical page `lpn` stays valid on the flash until `lpn` is written again. Which
//! write does that decides whether a page's data type predicts its death: if the writes that
//! end a type's pages are mostly other files' (a freed chunk reused by another DB file's new
//! generation), every type of a file dies when its chunks are reused, and separating the
//! types by stream gains little. This pass replays the update phase on a RAM device through
//! the same placement and records, per type of the page that died: which type and which file
//! (the same or another) overwrote it, and the mean and spread of its lifetime in page writes.
//!
//! Invariant: it sees every page write the runs' devices see, in the same order (it is a
//! [`StreamAssignment`] on the same replay), and changes nothing (stream 0 for every write).

use policy::streams::lifetime::LastWrites;
use policy::streams::{DataType, StreamAssignment, WriteClass};

const TYPES: usize = DataType::ALL.len();

/// Per logical page its last write (time and class: file × type, see [`class_of`]), kept by
/// the one per-page last-write bookkeeping, [`LastWrites`]; per dead type, the counts.
#[derive(Debug)]
pub struct DeathCounter {
    last: LastWrites,
    counting: bool,
    /// `[dead type][killer type]`: pages ended by a write of that type.
    pub by_killer: [[u64; TYPES]; TYPES],
    /// Per dead type: pages ended by a write of the same DB file.
    pub same_file: [u64; TYPES],
    /// Per dead type: sum and sum of squares of the lifetimes (page writes), for mean and spread.
    sum: [f64; TYPES],
    sum_sq: [f64; TYPES],
}

/// One type's line of the measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct DeathLine {
    pub data_type: DataType,
    /// Pages of this type overwritten while counting.
    pub deaths: u64,
    /// Share of them ended by a write of the same DB file.
    pub same_file_share: f64,
    /// Share ended by each type's writes (`DataType::ALL` order).
    pub killer_share: [f64; TYPES],
    pub mean_lifetime_writes: f64,
    /// Standard deviation / mean of the lifetimes.
    pub lifetime_cv: f64,
}

/// A write's class for [`LastWrites`]: its file and its type in one dense index.
fn class_of(c: WriteClass) -> u32 {
    assert!(
        c.file < (u32::MAX - 1) / TYPES as u32,
        "file {} beyond the class space",
        c.file
    );
    c.file * TYPES as u32 + type_index(c.data_type) as u32
}

impl DeathCounter {
    pub fn new(logical_pages: u64) -> DeathCounter {
        DeathCounter {
            last: LastWrites::new(logical_pages),
            counting: false,
            by_killer: [[0; TYPES]; TYPES],
            same_file: [0; TYPES],
            sum: [0.0; TYPES],
            sum_sq: [0.0; TYPES],
        }
    }

    /// Count deaths from now on (the update phase); writes before only set the pages' owners.
    pub fn start(&mut self) {
        self.counting = true;
    }

    fn record(&mut self, lpn: u64, class: WriteClass) {
        let class = class_of(class);
        let Some(death) = self.last.write(lpn, class) else {
            return;
        };
        if !self.counting {
            return;
        }
        let (dead, kind) = (death.class as usize % TYPES, class as usize % TYPES);
        self.by_killer[dead][kind] += 1;
        self.same_file[dead] += u64::from(death.class / TYPES as u32 == class / TYPES as u32);
        let life = death.lifetime as f64;
        self.sum[dead] += life;
        self.sum_sq[dead] += life * life;
    }

    /// One line per type that had a page overwritten while counting.
    pub fn lines(&self) -> Vec<DeathLine> {
        DataType::ALL
            .iter()
            .enumerate()
            .filter_map(|(d, &t)| {
                let n: u64 = self.by_killer[d].iter().sum();
                (n > 0).then(|| {
                    let nf = n as f64;
                    let mean = self.sum[d] / nf;
                    let var = (self.sum_sq[d] / nf - mean * mean).max(0.0);
                    DeathLine {
                        data_type: t,
                        deaths: n,
                        same_file_share: self.same_file[d] as f64 / nf,
                        killer_share: self.by_killer[d].map(|k| k as f64 / nf),
                        mean_lifetime_writes: mean,
                        lifetime_cv: if mean > 0.0 { var.sqrt() / mean } else { 0.0 },
                    }
                })
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

impl StreamAssignment for DeathCounter {
    fn stream(&mut self, lpn: u64, class: Option<WriteClass>) -> u16 {
        match class {
            Some(c) => self.record(lpn, c),
            None => self.last.skip(),
        }
        0
    }
}

/// The note's sentence for `lines`.
pub fn note(lines: &[DeathLine]) -> String {
    let parts: Vec<String> = lines
        .iter()
        .map(|l| {
            let killers: Vec<String> = DataType::ALL
                .iter()
                .zip(l.killer_share)
                .filter(|(_, s)| *s >= 0.005)
                .map(|(t, s)| format!("{} {:.0} %", t.name(), s * 100.0))
                .collect();
            format!(
                "{}: {:.0} % by the same file, by type {}; lifetime mean {:.0} writes, spread (sd/mean) {:.2}",
                l.data_type.name(),
                l.same_file_share * 100.0,
                killers.join(", "),
                l.mean_lifetime_writes,
                l.lifetime_cv
            )
        })
        .collect();
    format!(
        "What ends a page on the device (no discard: the next write of its logical page), over the update phase: {}",
        parts.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(file: u32, t: DataType) -> Option<WriteClass> {
        Some(WriteClass::new(file, t))
    }

    #[test]
    fn a_death_is_charged_to_the_dead_page_with_its_killer() {
        let mut c = DeathCounter::new(4);
        c.stream(0, w(1, DataType::Header));
        c.start();
        c.stream(1, w(1, DataType::Data));
        c.stream(0, w(2, DataType::Data)); // header of file 1 dies, by file 2's data, age 2
        c.stream(1, w(1, DataType::Index)); // data of file 1 dies, same file, age 2
        let lines = c.lines();
        assert_eq!(lines.len(), 2);
        let h = &lines[0];
        assert_eq!(h.data_type, DataType::Header);
        assert_eq!((h.deaths, h.same_file_share), (1, 0.0));
        assert_eq!(h.killer_share[3], 1.0);
        assert_eq!(h.mean_lifetime_writes, 2.0);
        let d = &lines[1];
        assert_eq!((d.data_type, d.same_file_share), (DataType::Data, 1.0));
        assert_eq!(d.killer_share[2], 1.0);
        assert!(note(&lines).contains("header: 0 % by the same file"));
    }
}
