//! Merge-victim selection for the log-block schemes: the *policy* half of "which log to merge
//! when a new log is needed and none is free" (BAST/IOA log slots, FAST's RW blocks). The
//! scheme applies the merge; the policy only keeps the order it needs and chooses.

use std::collections::VecDeque;

/// A merge-victim policy over log ids (slots or blocks).
pub(crate) trait MergeVictims: Send + Default {
    /// Log `id` was opened.
    fn opened(&mut self, id: u32);
    /// Log `id` was merged, whoever chose it.
    fn merged(&mut self, id: u32);
    /// Choose and forget the log to merge next; `None` when no log is open.
    fn choose(&mut self) -> Option<u32>;
    /// Open logs.
    fn len(&self) -> usize;
    /// The open logs (for verifiers).
    fn ids(&self) -> Vec<u32>;
}

/// The log opened longest ago is merged first.
#[derive(Clone, Debug, Default)]
pub(crate) struct FifoMerge {
    order: VecDeque<u32>,
}

impl MergeVictims for FifoMerge {
    fn opened(&mut self, id: u32) {
        assert!(!self.order.contains(&id), "log {id} opened twice");
        self.order.push_back(id);
    }
    fn merged(&mut self, id: u32) {
        self.order.retain(|&s| s != id);
    }
    fn choose(&mut self) -> Option<u32> {
        self.order.pop_front()
    }
    fn len(&self) -> usize {
        self.order.len()
    }
    fn ids(&self) -> Vec<u32> {
        self.order.iter().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_merges_the_oldest_open_log() {
        let mut m = FifoMerge::default();
        for id in [3, 1, 2] {
            m.opened(id);
        }
        m.merged(1);
        assert_eq!(m.choose(), Some(3));
        assert_eq!(m.choose(), Some(2));
        assert_eq!(m.choose(), None);
    }
}
