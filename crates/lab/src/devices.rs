//! Simulated devices for the engine experiments: a preset with the experiment's page size, at
//! least `min_bytes` large and never smaller than the preset's smallest capacity that holds its
//! GC reserve and open blocks (`SsdConfig::min_logical_bytes`; small capacities on presets with
//! many dies would otherwise be refused).

use anyhow::{Context, Result};
use blockdev::SimDevice;
use ssd::SsdConfig;

pub fn sim_device(preset: &str, page_bytes: usize, min_bytes: u64) -> Result<SimDevice> {
    sim_device_of(SsdConfig::preset(preset)?, page_bytes, min_bytes)
}

/// [`sim_device`] of a config (a preset, or a `--config` file).
pub fn sim_device_of(mut cfg: SsdConfig, page_bytes: usize, min_bytes: u64) -> Result<SimDevice> {
    let preset = cfg.name.clone();
    cfg.geometry.page_bytes = page_bytes as u32;
    let context = || format!("preset {preset} with {page_bytes}-byte pages");
    let bytes = min_bytes
        .max(1 << 20)
        .max(cfg.min_logical_bytes().with_context(context)?);
    let cfg = cfg.with_logical_capacity(bytes).with_context(context)?;
    sim_device_checked(cfg, "--capacity (or the experiment's --scale)")
}

/// A simulated SSD of `cfg`, once its memory estimate (with the payloads `SimDevice` keeps)
/// fits the process's real limit ([`crate::harness::memory_limit`]); `lower` names what the
/// user can lower when it does not.
pub fn sim_device_checked(cfg: SsdConfig, lower: &str) -> Result<SimDevice> {
    let mut payloads = cfg.clone();
    payloads.ftl.data = ssd::DataMode::Payloads;
    check_memory(&payloads, lower)?;
    Ok(SimDevice::new(cfg)?)
}

/// `cfg`'s memory estimate against the process's real limit, with the limit's source and
/// what to lower in the error.
pub fn check_memory(cfg: &SsdConfig, lower: &str) -> Result<u64> {
    let (limit, from) = crate::harness::memory_limit::memory_limit();
    cfg.check_memory(limit).with_context(|| {
        format!("{lower}: the simulated SSD does not fit the memory limit ({from})")
    })
}

// The device registry of the experiments: kinds, the one opener, the temporary directory.
use blockdev::{BlockDevice, ClockKind, FileDevice, FileOptions, HddConfig, HddModel};
use std::path::Path;

/// The devices the engine experiments run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceKind {
    /// A real file: O_DIRECT, io_uring batches, wall-clock time.
    File,
    /// The simulated SSD (data-carrying), simulated time.
    Sim,
    /// The disk model, simulated time.
    Hdd,
}

impl DeviceKind {
    pub const ALL: [DeviceKind; 3] = [DeviceKind::File, DeviceKind::Sim, DeviceKind::Hdd];

    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::File => "file",
            DeviceKind::Sim => "sim",
            DeviceKind::Hdd => "hdd",
        }
    }

    pub fn parse(s: &str) -> Option<DeviceKind> {
        DeviceKind::ALL.into_iter().find(|k| k.name() == s)
    }
}

impl std::fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// `--device`: one device, or every device an experiment supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceChoice {
    One(DeviceKind),
    All,
}

impl DeviceChoice {
    pub fn parse(s: &str) -> Option<DeviceChoice> {
        match s {
            "all" => Some(DeviceChoice::All),
            _ => DeviceKind::parse(s).map(DeviceChoice::One),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            DeviceChoice::One(k) => k.name(),
            DeviceChoice::All => "all",
        }
    }

    /// The devices to run, refusing one the experiment does not support.
    pub fn resolve(self, experiment: &str, supported: &[DeviceKind]) -> Result<Vec<DeviceKind>> {
        match self {
            DeviceChoice::All => Ok(supported.to_vec()),
            DeviceChoice::One(k) if supported.contains(&k) => Ok(vec![k]),
            DeviceChoice::One(k) => {
                let names: Vec<&str> = supported.iter().map(|d| d.name()).collect();
                anyhow::bail!(
                    "--device {k}: {experiment} runs on {} or all",
                    names.join(", ")
                )
            }
        }
    }
}

/// What an experiment asks of a device; [`open`] makes it on any [`DeviceKind`].
#[derive(Clone, Debug)]
pub struct DeviceRequest<'a> {
    pub page_bytes: usize,
    pub pages: u64,
    /// Logical bytes the simulated SSD holds at least (it may hold more, see [`sim_device`]).
    pub sim_min_bytes: u64,
    pub sim_preset: &'a str,
    /// io_uring queue depth of a file device.
    pub queue_depth: u32,
    /// A file device's file name inside the experiment's directory.
    pub file_name: String,
    /// A file device's stream reads through io_uring fixed buffers and a fixed file
    /// (`FileOptions::fixed_buffers` and `fixed_file`; their default is on).
    pub io_uring_fixed: bool,
    /// How a file device's io_uring is set up (`FileOptions::ring_setup`).
    pub io_uring_setup: blockdev::RingSetup,
    /// A file device's stream served by a reader thread (`FileOptions::read_thread`).
    pub read_thread: bool,
}

/// The one device opener of the experiments.
pub fn open(kind: DeviceKind, req: &DeviceRequest<'_>, dir: &Path) -> Result<Box<dyn BlockDevice>> {
    Ok(match kind {
        DeviceKind::File => {
            let path = dir.join(&req.file_name);
            let o = FileOptions {
                buffered: false,
                queue_depth: req.queue_depth,
                fixed_buffers: req.io_uring_fixed,
                fixed_file: req.io_uring_fixed,
                ring_setup: req.io_uring_setup,
                read_thread: req.read_thread,
                ..FileOptions::default()
            };
            Box::new(FileDevice::create(&path, req.pages, req.page_bytes, o).map_err(
                |e| match e {
                    // The device's own message names its library option (`buffered`); here
                    // the remedy is the experiment's --dir.
                    blockdev::DevError::DirectIoUnsupported { path } => anyhow::anyhow!(
                        "{}: the file system does not support O_DIRECT; put --dir on a disk file system (ext4, xfs)",
                        path.display()
                    ),
                    e => anyhow::Error::new(e).context(format!("creating {}", path.display())),
                },
            )?)
        }
        DeviceKind::Hdd => Box::new(HddModel::new(
            HddConfig::default(),
            req.pages,
            req.page_bytes,
        )?),
        DeviceKind::Sim => Box::new(sim_device(
            req.sim_preset,
            req.page_bytes,
            req.sim_min_bytes,
        )?),
    })
}

/// The temporary directory for an experiment's device files: inside `--dir`, or here; removed
/// when dropped, and by [`remove_temp_dirs`] when the run is interrupted.
pub fn temp_dir(dir: Option<&Path>) -> Result<TempDevDir> {
    let tmp = match dir {
        Some(d) => tempfile::tempdir_in(d).with_context(|| format!("--dir {}", d.display()))?,
        None => tempfile::tempdir_in(".")
            .context("creating a temporary directory here for the device files")?,
    };
    live_temp_dirs().push(tmp.path().to_path_buf());
    Ok(TempDevDir { dir: tmp })
}

/// A temporary directory of device files, known to [`remove_temp_dirs`] while it lives.
pub struct TempDevDir {
    dir: tempfile::TempDir,
}

impl TempDevDir {
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for TempDevDir {
    fn drop(&mut self) {
        live_temp_dirs().retain(|p| p != self.dir.path());
    }
}

/// The directories [`temp_dir`] made that still exist. Process-wide on purpose: a signal
/// handler (the CLI's Ctrl-C thread) must find them without a handle to the experiment.
fn live_temp_dirs() -> std::sync::MutexGuard<'static, Vec<std::path::PathBuf>> {
    static DIRS: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());
    DIRS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Remove every live temporary device directory (for an interrupted run, just before it
/// exits); returns how many were removed.
pub fn remove_temp_dirs() -> usize {
    let dirs = std::mem::take(&mut *live_temp_dirs());
    dirs.iter()
        .filter(|d| std::fs::remove_dir_all(d).is_ok())
        .count()
}

/// Seconds of a phase on the device's own clock: wall time on a real file, device time on a
/// simulated one (taken from [`BlockDevice::clock_kind`]).
pub fn phase_seconds(clock: ClockKind, wall_seconds: f64, device_ns: u64) -> f64 {
    match clock {
        ClockKind::Wall => wall_seconds,
        ClockKind::Simulated => device_ns as f64 / 1e9,
    }
}

/// The file system holding `dir` (statfs), by name: `ext4` (ext2/3/4 share a magic), `xfs`,
/// `btrfs`, `tmpfs`, `ramfs`, ... or `unknown(0x...)`.
pub fn file_system(dir: &Path) -> Result<String> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
        .with_context(|| format!("{}: a path with a NUL byte", dir.display()))?;
    // SAFETY: `c` is a valid NUL-terminated path and `st` a writable statfs.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("statfs {}", dir.display()));
    }
    #[allow(clippy::unnecessary_cast)] // f_type's width differs between targets
    let magic = st.f_type as u64;
    Ok(match magic {
        0xEF53 => "ext4".into(),
        0x5846_5342 => "xfs".into(),
        0x9123_683E => "btrfs".into(),
        0xF2F5_2010 => "f2fs".into(),
        0x2FC1_2FC1 => "zfs".into(),
        0x794C_7630 => "overlayfs".into(),
        0x6969 => "nfs".into(),
        0x0102_1994 => "tmpfs".into(),
        0x8584_58F6 => "ramfs".into(),
        other => format!("unknown(0x{other:x})"),
    })
}

/// Whether a file system keeps its files in RAM (its "file" timings would be RAM speed).
pub fn is_memory_fs(name: &str) -> bool {
    matches!(name, "tmpfs" | "ramfs")
}

/// Check the directory of `--device file` timing runs: a RAM file system is refused (its
/// O_DIRECT "device" runs at memory speed and would reverse the comparisons) unless
/// `allow_memory_fs`. Returns the file system's name, for the report's config.
pub fn check_timing_dir(dir: &Path, allow_memory_fs: bool) -> Result<String> {
    let fs = file_system(dir)?;
    if is_memory_fs(&fs) && !allow_memory_fs {
        anyhow::bail!(
            "{} is on {fs}: `--device file` timings there are RAM speed, not a disk's; put --dir on a disk file system (ext4, xfs, ...), or pass --allow-memory-fs to run anyway",
            dir.display()
        );
    }
    Ok(fs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ram_file_system_is_refused_for_file_timings_unless_allowed() {
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        let fs = file_system(here).unwrap();
        if is_memory_fs(&fs) {
            eprintln!("skipping: the source tree itself is on {fs}");
            return;
        }
        assert_eq!(check_timing_dir(here, false).unwrap(), fs);
        let shm = Path::new("/dev/shm");
        if file_system(shm).is_ok_and(|f| is_memory_fs(&f)) {
            let e = check_timing_dir(shm, false).unwrap_err().to_string();
            assert!(e.contains("--allow-memory-fs"), "{e}");
            assert_eq!(check_timing_dir(shm, true).unwrap(), "tmpfs");
        }
    }

    #[test]
    fn temp_dirs_are_known_while_they_live_and_removable() {
        let base = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let t = temp_dir(Some(base.path())).unwrap();
        let p = t.path().to_path_buf();
        std::fs::write(p.join("dev"), b"x").unwrap();
        assert!(live_temp_dirs().contains(&p));
        assert!(remove_temp_dirs() >= 1);
        assert!(!p.exists(), "interrupted runs leave no device files");
        drop(t);
        assert!(!live_temp_dirs().contains(&p));
    }

    #[test]
    fn device_choices_resolve_against_what_an_experiment_supports() {
        let both = [DeviceKind::File, DeviceKind::Sim];
        assert_eq!(DeviceChoice::All.resolve("x", &both).unwrap(), both);
        assert_eq!(
            DeviceChoice::parse("sim")
                .unwrap()
                .resolve("x", &both)
                .unwrap(),
            [DeviceKind::Sim]
        );
        let e = DeviceChoice::One(DeviceKind::Hdd).resolve("as-btree", &both);
        assert!(e
            .unwrap_err()
            .to_string()
            .contains("as-btree runs on file, sim"));
        assert!(DeviceChoice::parse("tape").is_none());
    }
}
