//! The reference probes: bpftrace uprobes on the postgres binary, where P3 collected its
//! trace (`ReadBuffer()` and `XLogInsert()`), plus the dirtying call:
//! - read references, by one of two methods ([`ProbeMethod`]) that record the same lines:
//!   - `usdt` (where the binary has it: Debian's is built with `--enable-dtrace`): the static
//!     probe `buffer__read__done` at the end of `ReadBuffer_common`, whose arguments are the
//!     tag (fork, block, relfilenode) and the backend (-1: a shared buffer) -> `R rel fork
//!     block`. One trap per reference and no memory reads;
//!   - `uretprobe`: return of `ReadBufferExtended` (every `ReadBuffer` tail-calls it) and of
//!     `ReadBufferWithoutRelcache` (`ReadBuffer_common`'s only callers): the returned buffer's
//!     tag read from the shared buffer descriptors. A return probe costs two traps (entry, to
//!     hook the return address, and the return);
//! - entry of `MarkBufferDirty(buffer)`: the buffer's tag -> `W rel fork block`;
//! - return of `XLogInsert`: the end LSN of the record -> `X hi/lo`.
//!
//! `ReadBuffer_common` is static (not in the dynamic symbol table), so the exported callers are
//! probed. The descriptor array's address is read from the running postmaster's memory map
//! (every backend is forked from it, so all share its load address); only processes of the
//! cluster's user are traced.
//! Every line the probes print is checked by the trace reader's own decoder before it is
//! written, so a capture cannot write what the reader refuses.

use super::CaptureError;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;

/// Size of one `BufferDescPadded` on 64-bit builds (PostgreSQL's `BUFFERDESC_PAD_TO_SIZE`).
const BUFFER_DESC_BYTES: u64 = 64;

/// What the probes need of the binary: where it is and where its descriptor pointer is.
pub struct ProbeTarget {
    pub binary: PathBuf,
    /// Run-time address of the global `BufferDescriptors` in the traced processes.
    pub descriptors_addr: u64,
    pub uid: u32,
}

/// The dynamic symbol `name`'s offset in `binary` (`nm -D --defined-only`).
pub fn symbol_offset(binary: &Path, name: &str) -> Result<u64, CaptureError> {
    let out = super::cluster::checked(
        "nm",
        Command::new("nm")
            .args(["-D", "--defined-only"])
            .arg(binary)
            .output(),
    )?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 3 && f[2] == name)
                .then(|| u64::from_str_radix(f[0], 16).ok())
                .flatten()
        })
        .ok_or_else(|| CaptureError::Probe(format!("{} exports no {name}", binary.display())))
}

/// The load address of `binary` in process `pid` (its first mapping, file offset 0).
pub fn load_address(pid: u32, binary: &Path) -> Result<u64, CaptureError> {
    let maps_path = format!("/proc/{pid}/maps");
    let maps =
        bounded::read_text(Path::new(&maps_path), 1 << 24, "a memory map").map_err(|source| {
            CaptureError::Io {
                what: maps_path.clone(),
                source,
            }
        })?;
    let real = std::fs::canonicalize(binary).unwrap_or_else(|_| binary.to_path_buf());
    maps.lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let hit = f.len() >= 6 && Path::new(f[5]) == real && f[2] == "00000000";
            let start = f.first()?.split('-').next()?;
            hit.then(|| u64::from_str_radix(start, 16).ok()).flatten()
        })
        .ok_or_else(|| {
            CaptureError::Probe(format!("{} is not mapped in process {pid}", real.display()))
        })
}

/// How read references are probed (module docs); both print the same `R` lines (checked on a
/// one-warehouse run: the same 1,123,571 references in the same order in each of 20 processes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeMethod {
    Usdt,
    Uretprobe,
}

impl ProbeMethod {
    pub fn name(self) -> &'static str {
        match self {
            ProbeMethod::Usdt => "usdt",
            ProbeMethod::Uretprobe => "uretprobe",
        }
    }

    pub fn parse(s: &str) -> Option<ProbeMethod> {
        [ProbeMethod::Usdt, ProbeMethod::Uretprobe]
            .into_iter()
            .find(|m| m.name() == s)
    }

    /// The header's `method` line.
    pub fn describe(self) -> &'static str {
        match self {
            ProbeMethod::Usdt => "uprobes (bpftrace): usdt buffer__read__done (shared buffers) -> R, MarkBufferDirty -> W, ret XLogInsert -> X",
            ProbeMethod::Uretprobe => "uprobes (bpftrace): ret ReadBufferExtended/ReadBufferWithoutRelcache -> R, MarkBufferDirty -> W, ret XLogInsert -> X",
        }
    }
}

/// The static probe the `usdt` method needs.
pub const USDT_READ: &str = "buffer__read__done";

/// Does `binary` carry the static probe [`USDT_READ`] (`readelf --notes`)?
pub fn has_usdt_read(binary: &Path) -> Result<bool, CaptureError> {
    let out = super::cluster::checked(
        "readelf",
        Command::new("readelf").arg("--notes").arg(binary).output(),
    )?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .any(|l| l.trim() == format!("Name: {USDT_READ}")))
}

/// The bpftrace program for `t`.
pub fn script(t: &ProbeTarget, method: ProbeMethod) -> String {
    let bin = t.binary.display();
    let (uid, addr, size) = (t.uid, t.descriptors_addr, BUFFER_DESC_BYTES);
    let tag = |kind: &str, buf: &str| {
        format!(
            "$d = *uptr((uint64 *){addr:#x}) + (uint64)({buf} - 1) * {size}; printf(\"{kind} %u %u %u\\n\", *uptr((uint32 *)($d + 8)), *uptr((uint32 *)($d + 12)), *uptr((uint32 *)($d + 16)));"
        )
    };
    let reads = match method {
        ProbeMethod::Usdt => format!(
            // Arguments: fork, block, tablespace, database, relfilenode, backend, extend, found.
            "usdt:{bin}:{USDT_READ} /uid == {uid} && (int32)arg5 == -1/ {{ printf(\"R %u %u %u\\n\", (uint32)arg4, (uint32)arg0, (uint32)arg1); }}\n"
        ),
        ProbeMethod::Uretprobe => {
            let read = tag("R", "(int32)retval");
            format!(
                "uretprobe:{bin}:ReadBufferExtended /uid == {uid} && (int32)retval > 0/ {{ {read} }}\n\
                 uretprobe:{bin}:ReadBufferWithoutRelcache /uid == {uid} && (int32)retval > 0/ {{ {read} }}\n"
            )
        }
    };
    format!(
        "BEGIN {{ printf(\"# attached\\n\"); }}\n\
         {reads}\
         uprobe:{bin}:MarkBufferDirty /uid == {uid} && (int32)arg0 > 0/ {{ {} }}\n\
         uretprobe:{bin}:XLogInsert /uid == {uid}/ {{ printf(\"X %x/%x\\n\", retval >> 32, retval & 0xffffffff); }}\n",
        tag("W", "(int32)arg0")
    )
}

/// Counts of what the probes printed.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProbeCounts {
    pub reads: u64,
    pub dirties: u64,
    pub wal_inserts: u64,
    /// Events bpftrace reported lost (its ring buffer overflowed).
    pub lost_events: u64,
    /// Lines that were neither a record nor a known bpftrace message.
    pub other_lines: u64,
}

/// A running bpftrace whose records stream into `body`.
pub struct Probe {
    child: Child,
    pump: std::thread::JoinHandle<Result<ProbeCounts, CaptureError>>,
}

impl Probe {
    /// Start bpftrace on `t`, stream its records into `body`; returns once the probes are attached.
    pub fn start(
        t: &ProbeTarget,
        method: ProbeMethod,
        body: Box<dyn Write + Send>,
    ) -> Result<Probe, CaptureError> {
        let mut cmd = Command::new("bpftrace");
        super::cluster::unblock_signals(&mut cmd);
        let mut child = cmd
            .arg("-e")
            .arg(script(t, method))
            .env("BPFTRACE_PERF_RB_PAGES", "8192")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| CaptureError::Spawn {
                program: "bpftrace".into(),
                source,
            })?;
        let Some(stdout) = child.stdout.take() else {
            return Err(CaptureError::Probe("bpftrace without a pipe".into()));
        };
        let (ready_tx, ready_rx) = mpsc::channel();
        let pump = std::thread::spawn(move || pump(stdout, body, ready_tx));
        if ready_rx
            .recv_timeout(std::time::Duration::from_secs(120))
            .is_err()
        {
            let _ = child.kill();
            let _ = child.wait();
            return Err(CaptureError::Probe(
                "bpftrace did not attach its probes (does the kernel allow uprobes? run as root; see docs/pg-trace.md)".into(),
            ));
        }
        Ok(Probe { child, pump })
    }

    /// Stop bpftrace (SIGINT: it drains its buffers) and return the counts.
    pub fn stop(mut self) -> Result<ProbeCounts, CaptureError> {
        // SAFETY: kill(2) on the pid of the child we spawned and have not yet reaped.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGINT) };
        let _ = self.child.wait();
        self.pump
            .join()
            .map_err(|_| CaptureError::Probe("the trace writer panicked".into()))?
    }
}

fn pump(
    stdout: std::process::ChildStdout,
    mut body: Box<dyn Write + Send>,
    ready: mpsc::Sender<()>,
) -> Result<ProbeCounts, CaptureError> {
    use workload::pg_trace::{decode_record, PgRecord};
    let mut counts = ProbeCounts::default();
    let io = |source| CaptureError::Io {
        what: "the trace body".into(),
        source,
    };
    for line in BufReader::with_capacity(1 << 20, stdout).lines() {
        let line = line.map_err(io)?;
        match decode_record(&line) {
            Ok(Some(rec)) => {
                match rec {
                    PgRecord::Page { dirty: false, .. } => counts.reads += 1,
                    PgRecord::Page { dirty: true, .. } => counts.dirties += 1,
                    PgRecord::Wal { .. } => counts.wal_inserts += 1,
                }
                body.write_all(line.as_bytes()).map_err(io)?;
                body.write_all(b"\n").map_err(io)?;
            }
            _ if line.starts_with("# attached") => {
                let _ = ready.send(());
            }
            _ if line.starts_with("Lost ") => {
                counts.lost_events += line
                    .split_whitespace()
                    .nth(1)
                    .and_then(|n| n.parse::<u64>().ok())
                    .unwrap_or(0);
            }
            _ if line.starts_with("Attaching") || line.trim().is_empty() => {}
            _ => counts.other_lines += 1,
        }
    }
    body.flush().map_err(io)?;
    drop(body);
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> ProbeTarget {
        ProbeTarget {
            binary: PathBuf::from("/pg/postgres"),
            descriptors_addr: 0x1000,
            uid: 7,
        }
    }

    #[test]
    fn each_method_probes_reads_its_own_way_and_the_rest_alike() {
        let usdt = script(&target(), ProbeMethod::Usdt);
        let uret = script(&target(), ProbeMethod::Uretprobe);
        assert!(
            usdt.contains("usdt:/pg/postgres:buffer__read__done /uid == 7 && (int32)arg5 == -1/")
        );
        assert!(!usdt.contains("ReadBufferExtended"));
        assert!(uret.contains("uretprobe:/pg/postgres:ReadBufferExtended"));
        assert!(uret.contains("uretprobe:/pg/postgres:ReadBufferWithoutRelcache"));
        assert!(!uret.contains("usdt:"));
        for s in [&usdt, &uret] {
            assert!(s.contains("printf(\"R %u %u %u\\n\""), "{s}");
            assert!(s.contains("uprobe:/pg/postgres:MarkBufferDirty"), "{s}");
            assert!(s.contains("uretprobe:/pg/postgres:XLogInsert"), "{s}");
            assert_eq!(s.lines().count(), 3 + (s == &uret) as usize + 1, "{s}");
        }
        for m in [ProbeMethod::Usdt, ProbeMethod::Uretprobe] {
            assert_eq!(ProbeMethod::parse(m.name()), Some(m));
            assert!(m.describe().contains(if m == ProbeMethod::Usdt {
                "usdt"
            } else {
                "ret ReadBuffer"
            }));
        }
    }
}
