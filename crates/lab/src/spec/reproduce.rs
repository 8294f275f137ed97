//! [`ReproduceSpec`]: the options of `flashlab reproduce NAME` (and of `flashlab.reproduce`
//! in Python): scale, seed, device, and the few options one experiment takes.

use super::{de, RunSpec, SpecError};
use crate::units::parse_bytes;
use crate::{experiments, DeviceChoice, Output, ReproduceOptions, Scale};
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A paper experiment's options. Defaults: quick scale, seed 1, the simulated SSD.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct ReproduceSpec {
    /// quick (minutes; CI-sized) or paper (the paper's sizes where this machine allows).
    #[cfg_attr(feature = "clap", arg(long, default_value = "quick"))]
    #[serde(deserialize_with = "de::string")]
    pub scale: String,
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 1))]
    #[serde(deserialize_with = "de::parsed")]
    pub seed: u64,
    /// Device for engine experiments: file (O_DIRECT), sim (simulated SSD), hdd (model), all
    /// [default: sim]. Experiments that build their own simulated SSD (ioa-ftl) refuse it.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_string")]
    pub device: Option<String>,
    /// Directory for the real files of --device file [default: a temporary directory here].
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_parsed")]
    pub dir: Option<PathBuf>,
    /// SSD preset for --device sim [default: the preset calibrated to the experiment's paper's
    /// device: as-btree p1-ssd, async-scan p2-ssd, ext-buffer x25m].
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_string")]
    pub preset: Option<String>,
    /// Run --device file timings on a RAM file system (tmpfs, ramfs) anyway (they are then RAM
    /// speed, not a disk's).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::flag")]
    pub allow_memory_fs: bool,
    /// ext-buffer: a page-reference trace instead of the TPC-C-like generator.
    #[cfg_attr(feature = "clap", arg(long, value_name = "PATH"))]
    #[serde(deserialize_with = "de::opt_parsed")]
    pub trace: Option<PathBuf>,
    /// ext-buffer: the --trace format (as `buffer-sim`) [default: text].
    #[cfg_attr(feature = "clap", arg(long, value_name = "F"))]
    #[serde(deserialize_with = "de::opt_string")]
    pub trace_format: Option<String>,
    /// ext-buffer: also run the trace through the engine's buffer pool on devices (HDD model
    /// + simulated SSD with --device sim, two real files with --device file).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::flag")]
    pub engine: bool,
    /// multistream: the simulated SSD's logical capacity, e.g. 192MiB, 2GiB [default: quick
    /// 128MiB, paper 1GiB]; 83 % of it holds the 32 DB files.
    #[cfg_attr(feature = "clap", arg(long, value_name = "SIZE"))]
    #[serde(deserialize_with = "de::opt_string")]
    pub capacity: Option<String>,
    /// multistream: the simulated SSD's streams, the default stream included [default: 8].
    #[cfg_attr(feature = "clap", arg(long, value_name = "N"))]
    #[serde(deserialize_with = "de::opt_parsed")]
    pub streams: Option<u16>,
    /// multistream: also run the stream map in this TOML file (format: README, "stream maps").
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    #[serde(deserialize_with = "de::opt_parsed")]
    pub stream_map: Option<PathBuf>,
    /// Independent runs (configurations; in `reproduce all`, experiments) at once; results are
    /// the same at any value. Real-file timings always run alone [default: the cores].
    #[cfg_attr(feature = "clap", arg(long, value_name = "N"))]
    #[serde(deserialize_with = "de::opt_parsed")]
    pub jobs: Option<usize>,
    /// async-scan on a file: the batched scan's reads through io_uring fixed buffers and a
    /// fixed file (on), or plain READs naming the file (off), blockdev's `FileOptions`
    /// `fixed_buffers` and `fixed_file` [default: on].
    #[cfg_attr(feature = "clap", arg(long, value_name = "on|off"))]
    #[serde(deserialize_with = "de::opt_string")]
    pub io_uring_fixed: Option<String>,
    /// async-scan on a file: how the device's io_uring is set up (blockdev's `RingSetup`):
    /// plain (no flags), coop (COOP_TASKRUN), defer (COOP_TASKRUN, SINGLE_ISSUER and
    /// DEFER_TASKRUN, as fio 3.31+ sets up its own) or sqpoll (SQPOLL) [default: defer].
    #[cfg_attr(feature = "clap", arg(long, value_name = "plain|coop|defer|sqpoll"))]
    #[serde(deserialize_with = "de::opt_string")]
    pub io_uring_setup: Option<String>,
    /// async-scan on a file: the batched scan's reads kept in flight by a reader thread with
    /// a ring of its own, re-issuing a read the moment one completes while the scan checks
    /// pages (on), or by the scan's thread between pages (off), blockdev's `FileOptions`
    /// `read_thread` [default: off].
    #[cfg_attr(feature = "clap", arg(long, value_name = "on|off"))]
    #[serde(deserialize_with = "de::opt_string")]
    pub read_thread: Option<String>,
    /// The page images of the buffer pool (and every device buffer) asked for on 2 MiB
    /// transparent huge pages (on) or plain 4 KiB pages (off), process-wide, like PostgreSQL's
    /// `huge_pages`; changes timings on real files only, never a result on a simulated device
    /// [default: on].
    #[cfg_attr(feature = "clap", arg(long, value_name = "on|off"))]
    #[serde(deserialize_with = "de::opt_string")]
    pub huge_pages: Option<String>,
}

impl Default for ReproduceSpec {
    fn default() -> Self {
        ReproduceSpec {
            scale: "quick".into(),
            seed: 1,
            device: None,
            dir: None,
            preset: None,
            allow_memory_fs: false,
            trace: None,
            trace_format: None,
            engine: false,
            capacity: None,
            streams: None,
            stream_map: None,
            jobs: None,
            io_uring_fixed: None,
            io_uring_setup: None,
            read_thread: None,
            huge_pages: None,
        }
    }
}

impl RunSpec for ReproduceSpec {
    /// Refused: an unknown scale or device, a capacity that does not parse, 0 streams.
    fn validate(&self) -> Result<(), SpecError> {
        self.scale()?;
        if let Some(c) = &self.capacity {
            parse_bytes(c).map_err(|e| SpecError::refused("--capacity", e))?;
        }
        if self.jobs == Some(0) {
            return Err(SpecError::value(
                "--jobs",
                0,
                "at least 1 (1: one run at a time)",
            ));
        }
        if self.streams == Some(0) {
            return Err(SpecError::value(
                "--streams",
                0,
                "a device has at least its default stream (1)",
            ));
        }
        self.io_uring_fixed()?;
        self.io_uring_setup()?;
        self.read_thread()?;
        self.huge_pages()?;
        self.device().map(|_| ())
    }
}

/// An `on|off` option `flag` as given (`value`), or `default` when it is not.
fn on_off(flag: &'static str, value: &Option<String>, default: bool) -> Result<bool, SpecError> {
    match value.as_deref() {
        None => Ok(default),
        Some("on") => Ok(true),
        Some("off") => Ok(false),
        Some(v) => Err(SpecError::value(flag, v, "expected on or off")),
    }
}

impl ReproduceSpec {
    pub fn scale(&self) -> Result<Scale, SpecError> {
        Scale::parse(&self.scale)
            .ok_or_else(|| SpecError::value("--scale", &self.scale, "expected quick or paper"))
    }

    /// `--io-uring-fixed`: on (the default) or off.
    fn io_uring_fixed(&self) -> Result<bool, SpecError> {
        let default = ReproduceOptions::default().io_uring_fixed;
        on_off("--io-uring-fixed", &self.io_uring_fixed, default)
    }

    /// `--read-thread`: on or off (the default).
    fn read_thread(&self) -> Result<bool, SpecError> {
        let default = ReproduceOptions::default().read_thread;
        on_off("--read-thread", &self.read_thread, default)
    }

    /// `--huge-pages`: on (the default) or off.
    fn huge_pages(&self) -> Result<bool, SpecError> {
        let default = ReproduceOptions::default().huge_pages;
        on_off("--huge-pages", &self.huge_pages, default)
    }

    /// `--io-uring-setup`: one of blockdev's `RingSetup` names (default defer, fio's).
    fn io_uring_setup(&self) -> Result<blockdev::RingSetup, SpecError> {
        match self.io_uring_setup.as_deref() {
            None => Ok(ReproduceOptions::default().io_uring_setup),
            Some(v) => blockdev::RingSetup::parse(v).ok_or_else(|| {
                SpecError::value(
                    "--io-uring-setup",
                    v,
                    "expected plain, coop, defer or sqpoll",
                )
            }),
        }
    }

    fn device(&self) -> Result<DeviceChoice, SpecError> {
        let name = self.device.as_deref().unwrap_or("sim");
        DeviceChoice::parse(name)
            .ok_or_else(|| SpecError::value("--device", name, "expected file, sim, hdd or all"))
    }

    /// The options every experiment gets (progress lines on stderr when `progress`).
    pub fn options(&self, progress: bool) -> Result<ReproduceOptions, SpecError> {
        self.validate()?;
        let capacity = match &self.capacity {
            Some(c) => Some(parse_bytes(c).map_err(|e| SpecError::refused("--capacity", e))?),
            None => None,
        };
        Ok(ReproduceOptions {
            scale: self.scale()?,
            seed: self.seed,
            device: self.device()?,
            dir: self.dir.clone(),
            preset: self.preset.clone(),
            progress,
            progress_sink: None,
            progress_counts: None,
            allow_memory_fs: self.allow_memory_fs,
            trace: self.trace.clone(),
            trace_format: self.trace_format.clone(),
            engine: self.engine,
            capacity,
            streams: self.streams,
            stream_map: self.stream_map.clone(),
            jobs: self
                .jobs
                .map_or_else(crate::parallel::Jobs::cores, crate::parallel::Jobs::new),
            io_uring_fixed: self.io_uring_fixed()?,
            io_uring_setup: self.io_uring_setup()?,
            io_uring_setup_asked: self.io_uring_setup.is_some(),
            read_thread: self.read_thread()?,
            huge_pages: self.huge_pages()?,
        })
    }

    /// Options one experiment does not take are refused, naming the experiments that do.
    fn check_applies(&self, name: &str, takes_devices: bool) -> Result<()> {
        if !takes_devices {
            for (given, flag) in [
                (self.device.is_some(), "--device"),
                (self.preset.is_some(), "--preset"),
                (self.dir.is_some(), "--dir"),
                (self.allow_memory_fs, "--allow-memory-fs"),
            ] {
                if given {
                    bail!("{flag} does not apply to {name}: it builds its own simulated SSD (see `flashlab reproduce` for the experiments that take a device)");
                }
            }
        }
        let only = |experiment: &str, flags: &[(bool, &str)]| -> Result<()> {
            match flags.iter().find(|(given, _)| *given && name != experiment) {
                Some((_, flag)) => bail!("{flag} applies to {experiment} only"),
                None => Ok(()),
            }
        };
        only(
            "ext-buffer",
            &[
                (self.trace.is_some(), "--trace"),
                (self.trace_format.is_some(), "--trace-format"),
                (self.engine, "--engine"),
            ],
        )?;
        only(
            "async-scan",
            &[
                (self.io_uring_fixed.is_some(), "--io-uring-fixed"),
                (self.io_uring_setup.is_some(), "--io-uring-setup"),
                (self.read_thread.is_some(), "--read-thread"),
            ],
        )?;
        self.check_io_uring_has_a_file("--io-uring-fixed", &self.io_uring_fixed)?;
        self.check_io_uring_has_a_file("--io-uring-setup", &self.io_uring_setup)?;
        self.check_io_uring_has_a_file("--read-thread", &self.read_thread)?;
        only(
            "multistream",
            &[
                (self.capacity.is_some(), "--capacity"),
                (self.streams.is_some(), "--streams"),
                (self.stream_map.is_some(), "--stream-map"),
            ],
        )
    }

    /// `--io-uring-fixed` or `--io-uring-setup` (`flag`, given as `value`) by the user on a
    /// device without a real file (`sim`, `hdd`) would change nothing, so it is refused; unset,
    /// its default applies silently.
    fn check_io_uring_has_a_file(&self, flag: &str, value: &Option<String>) -> Result<()> {
        let (Some(value), DeviceChoice::One(kind)) = (value, self.device()?) else {
            return Ok(());
        };
        if kind != crate::DeviceKind::File {
            bail!(
                "{flag} {value} has no effect with --device {}: it sets how the batched scan reads a real file; add --device file (or all), or drop {flag}",
                kind.name()
            );
        }
        Ok(())
    }

    /// Experiment `name` run with these options.
    pub fn execute(&self, name: &str, progress: bool) -> Result<Output> {
        self.execute_with(name, |o| ReproduceOptions { progress, ..o })
    }

    /// Experiment `name` run with these options as `adjust` changes them (a caller's progress
    /// counts and stop flag), progress lines off unless `adjust` turns them on.
    pub fn execute_with(
        &self,
        name: &str,
        adjust: impl FnOnce(ReproduceOptions) -> ReproduceOptions,
    ) -> Result<Output> {
        let Some(experiment) = experiments::find(name) else {
            bail!(
                "unknown experiment `{name}`; available: {}",
                experiments::names().join(", ")
            )
        };
        self.scale()?;
        self.check_applies(name, experiment.takes_devices())?;
        let opts = adjust(self.options(false)?);
        opts.apply_memory();
        (experiment.run)(&opts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_uring_fixed_is_on_unless_turned_off_and_a_bad_value_is_named() {
        let with = |v: Option<&str>| ReproduceSpec {
            io_uring_fixed: v.map(String::from),
            ..ReproduceSpec::default()
        };
        assert!(with(None).options(false).unwrap().io_uring_fixed);
        assert!(with(Some("on")).options(false).unwrap().io_uring_fixed);
        assert!(!with(Some("off")).options(false).unwrap().io_uring_fixed);
        let e = with(Some("yes")).options(false).unwrap_err().to_string();
        assert!(e.contains("--io-uring-fixed") && e.contains("yes"), "{e}");
        let e = with(Some("off"))
            .check_applies("as-btree", true)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "--io-uring-fixed applies to async-scan only");
        let on = |device: &str| ReproduceSpec {
            device: Some(device.into()),
            ..with(Some("off"))
        };
        on("file").check_applies("async-scan", true).unwrap();
        on("all").check_applies("async-scan", true).unwrap();
    }

    #[test]
    fn huge_pages_are_on_unless_turned_off_and_a_bad_value_is_named() {
        let with = |v: Option<&str>| ReproduceSpec {
            huge_pages: v.map(String::from),
            ..ReproduceSpec::default()
        };
        assert!(with(None).options(false).unwrap().huge_pages);
        assert!(with(Some("on")).options(false).unwrap().huge_pages);
        assert!(!with(Some("off")).options(false).unwrap().huge_pages);
        let e = with(Some("try")).options(false).unwrap_err().to_string();
        assert!(
            e.contains("--huge-pages") && e.contains("try") && e.contains("on or off"),
            "{e}"
        );
        // Process-wide memory, so every experiment on every device takes it.
        for name in [
            "as-btree",
            "async-scan",
            "ext-buffer",
            "ioa-ftl",
            "multistream",
        ] {
            with(Some("off")).check_applies(name, true).unwrap();
        }
        let memory = |on: bool| {
            ReproduceOptions {
                huge_pages: on,
                ..ReproduceOptions::default()
            }
            .memory_config()
        };
        assert_eq!(memory(true)["huge_pages"], "on");
        assert_eq!(memory(false)["huge_pages"], "off");
    }

    #[test]
    fn io_uring_fixed_on_a_device_without_a_file_is_refused_naming_both_options() {
        for (device, value) in [(None, "off"), (Some("sim"), "on"), (Some("hdd"), "off")] {
            let spec = ReproduceSpec {
                device: device.map(String::from),
                io_uring_fixed: Some(value.into()),
                ..ReproduceSpec::default()
            };
            let e = spec
                .check_applies("async-scan", true)
                .unwrap_err()
                .to_string();
            let named = device.unwrap_or("sim");
            assert!(
                e.contains(&format!("--io-uring-fixed {value}"))
                    && e.contains(&format!("--device {named}"))
                    && e.contains("--device file"),
                "{e}"
            );
        }
        // Unset, the default applies on every device without a word.
        for device in ["sim", "hdd", "file", "all"] {
            let spec = ReproduceSpec {
                device: Some(device.into()),
                ..ReproduceSpec::default()
            };
            spec.check_applies("async-scan", true).unwrap();
        }
    }

    #[test]
    fn io_uring_setup_takes_each_ring_setup_by_name_on_a_file_only() {
        let with = |v: Option<&str>, device: &str| ReproduceSpec {
            io_uring_setup: v.map(String::from),
            device: Some(device.into()),
            ..ReproduceSpec::default()
        };
        let default = with(None, "file").options(false).unwrap().io_uring_setup;
        assert_eq!(default, blockdev::RingSetup::DeferTaskrun);
        for setup in blockdev::RingSetup::ALL {
            let spec = with(Some(setup.name()), "file");
            assert_eq!(spec.options(false).unwrap().io_uring_setup, setup);
            spec.check_applies("async-scan", true).unwrap();
            let e = spec
                .check_applies("as-btree", true)
                .unwrap_err()
                .to_string();
            assert_eq!(e, "--io-uring-setup applies to async-scan only");
            let e = with(Some(setup.name()), "sim")
                .check_applies("async-scan", true)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(&format!("--io-uring-setup {}", setup.name()))
                    && e.contains("--device sim"),
                "{e}"
            );
        }
        let e = with(Some("poll"), "file")
            .options(false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--io-uring-setup") && e.contains("poll"), "{e}");
    }

    #[test]
    fn read_thread_is_off_unless_turned_on_on_a_file_and_a_bad_value_is_named() {
        let with = |v: Option<&str>, device: &str| ReproduceSpec {
            read_thread: v.map(String::from),
            device: Some(device.into()),
            ..ReproduceSpec::default()
        };
        assert!(!with(None, "file").options(false).unwrap().read_thread);
        assert!(with(Some("on"), "file").options(false).unwrap().read_thread);
        assert!(
            !with(Some("off"), "file")
                .options(false)
                .unwrap()
                .read_thread
        );
        let e = with(Some("yes"), "file")
            .options(false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--read-thread") && e.contains("yes"), "{e}");
        with(Some("on"), "file")
            .check_applies("async-scan", true)
            .unwrap();
        let e = with(Some("on"), "file")
            .check_applies("as-btree", true)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "--read-thread applies to async-scan only");
        let e = with(Some("on"), "sim")
            .check_applies("async-scan", true)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--read-thread on") && e.contains("--device sim"),
            "{e}"
        );
    }
}
