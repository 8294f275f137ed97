//! The memory a run may use: the least of half the physical RAM, the process's address-space
//! and data-segment limits (`RLIMIT_AS`, `RLIMIT_DATA`) and its cgroup v2 `memory.max`, with
//! the name of the one that binds (for the error that refuses a run too large for it).

/// The binding limit in bytes and where it comes from.
pub fn memory_limit() -> (u64, String) {
    let mut best = (u64::MAX, "no limit known".to_string());
    let mut take = |bytes: Option<u64>, what: &str| {
        if let Some(b) = bytes.filter(|&b| b < best.0) {
            best = (b, what.to_string());
        }
    };
    take(physical_bytes().map(|b| b / 2), "half the physical RAM");
    take(rlimit(libc::RLIMIT_AS), "RLIMIT_AS (ulimit -v)");
    take(rlimit(libc::RLIMIT_DATA), "RLIMIT_DATA (ulimit -d)");
    take(cgroup_max(), "the cgroup's memory.max");
    best
}

fn physical_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

fn rlimit(resource: libc::__rlimit_resource_t) -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct we pass.
    let ok = unsafe { libc::getrlimit(resource, &mut r) } == 0;
    (ok && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
}

/// `memory.max` of this process's cgroup (v2: `/proc/self/cgroup` line `0::/PATH`).
fn cgroup_max() -> Option<u64> {
    let cg = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = cg.lines().find_map(|l| l.strip_prefix("0::"))?;
    let max = std::fs::read_to_string(format!("/sys/fs/cgroup{}/memory.max", path.trim())).ok()?;
    max.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_limit_is_found_and_named() {
        let (bytes, what) = super::memory_limit();
        assert!(bytes > 0 && !what.is_empty(), "{bytes} {what}");
    }
}
