//! The process's memory as Linux reports it (`/proc/self/status`; `None` elsewhere).
//!
//! Two figures: the whole process's peak resident memory (`VmHWM`, which counts the pages
//! of the program's own code as they are first run: about 1 MB for a `sim` run, whatever
//! the device's size), and its anonymous resident memory (`RssAnon`: heap and mapped
//! tables, no code), which is what a device's tables add.

fn status_bytes(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line[key.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// Reset the peak RSS to the current RSS (`/proc/self/clear_refs`, "5") and return the
/// current RSS: what the process held before the device.
pub fn reset_peak_rss() -> Option<u64> {
    std::fs::write("/proc/self/clear_refs", "5").ok()?;
    status_bytes("VmRSS:")
}

/// Peak RSS since the last reset (or the process's start).
pub fn peak_rss_bytes() -> Option<u64> {
    status_bytes("VmHWM:")
}

/// Anonymous resident memory now (heap and mapped tables; not the program's code).
pub fn anon_rss_bytes() -> Option<u64> {
    status_bytes("RssAnon:")
}
