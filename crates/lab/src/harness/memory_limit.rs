//! The memory a run may use: the least of half the physical RAM, the process's address-space
//! and data-segment limits (`RLIMIT_AS`, `RLIMIT_DATA`) and its cgroup's memory limit (v2
//! `memory.max`, v1 `memory.limit_in_bytes`, of its cgroup and every ancestor), with the name
//! of the one that binds (for the error that refuses a run too large for it).

use std::path::Path;

/// The binding limit in bytes and where it comes from (`u64::MAX` when none is known).
pub fn memory_limit() -> (u64, String) {
    least(&[
        (physical_bytes().map(|b| b / 2), "half the physical RAM"),
        (rlimit(libc::RLIMIT_AS), "RLIMIT_AS (ulimit -v)"),
        (rlimit(libc::RLIMIT_DATA), "RLIMIT_DATA (ulimit -d)"),
        (
            cgroup_max(Path::new("/proc/self/cgroup"), Path::new("/sys/fs/cgroup")),
            "the cgroup's memory limit (memory.max)",
        ),
    ])
}

/// Where a limit of `limit_bytes` comes from, for an error: the process's own limit when it
/// is the one [`memory_limit`] finds, else the user's `--max-memory`.
pub fn source_of(limit_bytes: u64) -> String {
    match memory_limit() {
        (bytes, from) if bytes == limit_bytes => from,
        _ => "--max-memory".to_string(),
    }
}

/// The least of the known `candidates` and its name; the first wins a tie.
fn least(candidates: &[(Option<u64>, &str)]) -> (u64, String) {
    let mut best = (u64::MAX, "no limit known".to_string());
    for (bytes, what) in candidates {
        if let Some(b) = bytes.filter(|&b| b < best.0) {
            best = (b, what.to_string());
        }
    }
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

/// The least memory limit of the process's cgroup and its ancestors, from `self_cgroup` (the
/// text of `/proc/self/cgroup`) under the cgroup mount `root`: v2 (`0::/PATH`, file
/// `memory.max`) or v1 (`N:...memory...:/PATH`, file `memory/PATH/memory.limit_in_bytes`).
/// None when no limit is set or it cannot be read.
pub fn cgroup_max(self_cgroup: &Path, root: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(self_cgroup).ok()?;
    let (dir, file) = text.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, controllers, path) = (f.next()?, f.next()?, f.next()?);
        if controllers.is_empty() {
            Some((root.join(path.trim_start_matches('/')), "memory.max"))
        } else if controllers.split(',').any(|c| c == "memory") {
            let v1 = root.join("memory").join(path.trim_start_matches('/'));
            Some((v1, "memory.limit_in_bytes"))
        } else {
            None
        }
    })?;
    // The cgroup's own limit and each ancestor's up to the mount: the least binds.
    dir.ancestors()
        .take_while(|d| d.starts_with(root))
        .filter_map(|d| std::fs::read_to_string(d.join(file)).ok())
        .filter_map(|t| parse_memory_max(&t))
        .min()
}

/// A cgroup memory-limit file's value: bytes, or None for `max` (no limit), for a value
/// beyond `u64` (no limit either) and for anything that is not a number.
pub fn parse_memory_max(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_is_found_and_named() {
        let (bytes, what) = memory_limit();
        assert!(bytes > 0 && !what.is_empty(), "{bytes} {what}");
        assert_eq!(source_of(bytes), what);
        assert_eq!(source_of(bytes.wrapping_sub(1)), "--max-memory");
    }

    #[test]
    fn the_least_known_limit_binds_and_is_named() {
        let (b, what) = least(&[(Some(8), "ram"), (None, "as"), (Some(3), "cg")]);
        assert_eq!((b, what.as_str()), (3, "cg"));
        assert_eq!(least(&[(None, "as")]).0, u64::MAX);
    }

    #[test]
    fn memory_max_values_are_read_as_bytes_or_no_limit() {
        assert_eq!(parse_memory_max("1073741824\n"), Some(1 << 30));
        assert_eq!(parse_memory_max("max\n"), None);
        assert_eq!(parse_memory_max("garbage"), None);
        assert_eq!(parse_memory_max(""), None);
        assert_eq!(parse_memory_max("-5"), None);
        assert_eq!(parse_memory_max("99999999999999999999999"), None);
        assert_eq!(
            parse_memory_max("9223372036854771712"),
            Some(9223372036854771712),
            "cgroup v1's 'unlimited' is huge and never binds"
        );
    }

    /// A cgroup tree under `root` with `limits` (relative dir, file content) and a
    /// `/proc/self/cgroup` text of `membership`.
    fn tree(membership: &str, limits: &[(&str, &str)]) -> (tempfile::TempDir, u64) {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("cg");
        for (sub, content) in limits {
            let d = root.join(sub);
            std::fs::create_dir_all(d.parent().expect("a file")).expect("mkdir");
            std::fs::write(d, content).expect("write");
        }
        let me = dir.path().join("self_cgroup");
        std::fs::write(&me, membership).expect("write");
        let got = cgroup_max(&me, &root).unwrap_or(u64::MAX);
        (dir, got)
    }

    #[test]
    fn the_cgroup_limit_is_the_least_of_the_group_and_its_ancestors() {
        let v2 = "0::/a/b\n";
        let (_d, got) = tree(v2, &[("a/b/memory.max", "max\n"), ("a/memory.max", "4096")]);
        assert_eq!(got, 4096, "the parent's limit binds a child with none");
        let (_d, got) = tree(v2, &[("a/b/memory.max", "100"), ("a/memory.max", "4096")]);
        assert_eq!(got, 100);
        let (_d, got) = tree(v2, &[("a/b/memory.max", "max"), ("a/memory.max", "junk")]);
        assert_eq!(got, u64::MAX, "max and garbage are no limit");
        let (_d, got) = tree(v2, &[]);
        assert_eq!(got, u64::MAX, "no files, no limit");
        let v1 = "12:cpu,cpuacct:/x\n9:memory:/x\n";
        let (_d, got) = tree(
            v1,
            &[
                ("memory/x/memory.limit_in_bytes", "9223372036854771712\n"),
                ("memory/memory.limit_in_bytes", "536870912"),
            ],
        );
        assert_eq!(got, 512 << 20, "v1");
        let (_d, got) = tree("garbage without colons", &[("memory.max", "1")]);
        assert_eq!(got, u64::MAX);
    }
}
