//! Following and stopping a long run from outside it (a progress bar; Ctrl-C in the CLI,
//! KeyboardInterrupt in Python). [`Watch`] is what a tool's entry point takes: progress lines,
//! progress counts and a [`Cancel`] token shared by every thread of the run, set by whoever watches it and checked by
//! the run at its progress points and between its jobs ([`crate::parallel`]). A run that finds
//! it set returns [`Interrupted`] as soon as it is checked: it writes nothing more, and what it
//! built is dropped on the way out.

pub use crate::report::ProgressCounts;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// How a caller follows and stops one run (`buffer_sim::run`; experiments get the same three
/// through [`crate::ReproduceOptions`]: `progress`, `progress_counts` and `jobs`' token).
#[derive(Clone, Debug, Default)]
pub struct Watch {
    /// Print progress lines on stderr.
    pub lines: bool,
    /// Progress as `(phase, done, total)`.
    pub counts: Option<ProgressCounts>,
    /// The run stops with [`Interrupted`] at its next check once this is set.
    pub cancel: Cancel,
}

impl Watch {
    /// Progress lines on stderr when `lines`; no counts; a token nobody sets.
    pub fn lines(lines: bool) -> Watch {
        Watch {
            lines,
            ..Watch::default()
        }
    }

    /// Report `(phase, done, total)` to `counts`, if any, then check the token.
    pub fn count(&self, phase: &str, done: u64, total: Option<u64>) -> Result<(), Interrupted> {
        if let Some(counts) = &self.counts {
            (counts.0)(phase, done, total);
        }
        self.cancel.check()
    }
}

/// A run stopped by its [`Cancel`] token before it finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("interrupted: the run was stopped before it finished (nothing more was written)")]
pub struct Interrupted;

/// The stop flag of one run; clones share it.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// A token not set.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Ask the run to stop at its next check.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// `Err(Interrupted)` once the token is set.
    pub fn check(&self) -> Result<(), Interrupted> {
        match self.is_cancelled() {
            true => Err(Interrupted),
            false => Ok(()),
        }
    }
}

/// Whether `e` (or an error it wraps) is [`Interrupted`]: a stopped run, not a failed one.
pub fn is_interrupted(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<Interrupted>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clone_shares_the_flag_and_check_reports_it() {
        let c = Cancel::new();
        let seen_by_run = c.clone();
        assert_eq!(seen_by_run.check(), Ok(()));
        c.cancel();
        assert_eq!(seen_by_run.check(), Err(Interrupted));
        let e = anyhow::Error::from(Interrupted).context("ioa-ftl");
        assert!(is_interrupted(&e));
        assert!(!is_interrupted(&anyhow::anyhow!("disk full")));
    }
}
