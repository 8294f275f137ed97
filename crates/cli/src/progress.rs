//! Progress of a long run on stderr: a bar with an ETA on a terminal; otherwise (a log file, a
//! CI job) a line when a phase starts and one every few seconds with the same figures (pages,
//! percent, ETA), so a long run is never silent.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Seconds between progress lines when stderr is not a terminal.
const LINE_EVERY: Duration = Duration::from_secs(5);

pub enum Progress {
    Off,
    Bar(ProgressBar),
    Lines {
        total: Option<u64>,
        unit: &'static str,
        phase: String,
        phase_start: Instant,
        last_line: Instant,
    },
}

impl Progress {
    /// `total`: pages of the measured phase, if known.
    pub fn new(enabled: bool, total: Option<u64>) -> Progress {
        Progress::with_unit(enabled, total, "pages")
    }

    /// Progress counted in `unit` (pages, runs); `total` of the `measure` or `sweep` phase.
    pub fn with_unit(enabled: bool, total: Option<u64>, unit: &'static str) -> Progress {
        if !enabled {
            return Progress::Off;
        }
        if !std::io::stderr().is_terminal() {
            let now = Instant::now();
            return Progress::Lines {
                total,
                unit,
                phase: String::new(),
                phase_start: now,
                last_line: now,
            };
        }
        let bar = match total {
            Some(n) => ProgressBar::new(n),
            None => ProgressBar::new_spinner(),
        };
        bar.set_style(
            ProgressStyle::with_template(&format!(
                "{{msg:>12}} [{{elapsed_precise}}] {{wide_bar}} {{pos}}/{{len}} {unit} (ETA {{eta}})"
            ))
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        Progress::Bar(bar)
    }

    pub fn update(&mut self, phase: &str, pages: u64) {
        match self {
            Progress::Off => {}
            Progress::Bar(b) => {
                b.set_message(phase.to_string());
                b.set_position(pages);
            }
            Progress::Lines {
                total,
                unit,
                phase: current,
                phase_start,
                last_line,
            } => {
                let new_phase = current != phase;
                if new_phase {
                    *current = phase.to_string();
                    *phase_start = Instant::now();
                }
                if !new_phase && last_line.elapsed() < LINE_EVERY {
                    return;
                }
                *last_line = Instant::now();
                let total = if phase == "measure" || phase == "sweep" {
                    *total
                } else {
                    None
                };
                eprintln!("{}", line(phase, pages, total, unit, phase_start.elapsed()));
            }
        }
    }

    pub fn finish(self) {
        if let Progress::Bar(b) = self {
            b.finish_and_clear();
        }
    }
}

/// "measure: 1200/4000 pages (30 %), 12 s, ETA 28 s".
fn line(phase: &str, pages: u64, total: Option<u64>, unit: &str, elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64();
    match total {
        Some(t) if t > 0 && pages > 0 => {
            let frac = (pages as f64 / t as f64).min(1.0);
            let eta = secs * (1.0 - frac) / frac;
            format!(
                "{phase}: {pages}/{t} {unit} ({:.0} %), {secs:.0} s, ETA {eta:.0} s",
                100.0 * frac
            )
        }
        _ => format!("{phase}: {pages} {unit}, {secs:.0} s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_shows_the_fraction_and_an_eta() {
        let l = line("measure", 250, Some(1000), "pages", Duration::from_secs(10));
        assert_eq!(l, "measure: 250/1000 pages (25 %), 10 s, ETA 30 s");
        assert_eq!(
            line("precondition", 5, None, "pages", Duration::from_secs(2)),
            "precondition: 5 pages, 2 s"
        );
    }
}
