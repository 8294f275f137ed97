//! The summary table's lines: each claim as plain text and numbers, its verdict by name and
//! by [`Mark`] (how the page colours it). `lab` judges the claims; this renders them.

/// How a verdict is shown (its cell's CSS class).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// Reproduced.
    Yes,
    /// Right direction, outside the tolerance.
    Partly,
    No,
    NotRun,
}

impl Mark {
    /// The CSS class of its cell.
    pub fn class(self) -> &'static str {
        match self {
            Mark::Yes => "yes",
            Mark::Partly => "partly",
            Mark::No => "no",
            Mark::NotRun => "notrun",
        }
    }
}

/// One line of the summary.
#[derive(Clone, Debug, PartialEq)]
pub struct ClaimView {
    pub experiment: String,
    pub paper: String,
    pub claim: String,
    /// Cells as printed.
    pub paper_value: String,
    pub ours: String,
    pub unit: String,
    pub ratio: Option<f64>,
    pub tolerance: String,
    /// The verdict's name (`reproduced`, ...).
    pub verdict: String,
    pub mark: Mark,
    pub note: String,
}

/// How many claims have one verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct CountView {
    pub verdict: String,
    pub mark: Mark,
    pub count: usize,
}
