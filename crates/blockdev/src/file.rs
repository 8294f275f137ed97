//! `FileDevice`: a real file, read and written with O_DIRECT (no OS page cache) through
//! 4096-byte-aligned buffers; pages are any multiple of 512 bytes (default 4096); batches go through io_uring with up to `queue_depth` I/Os in
//! flight. The clock is wall time since the device was opened.
//!
//! Callers' buffers need not be aligned: data is staged through aligned bounce buffers that
//! the device keeps and reuses (no allocation per I/O in steady state). Where the file
//! system refuses O_DIRECT (e.g. tmpfs), opening fails with
//! [`DevError::DirectIoUnsupported`] naming the path; `buffered: true` is the explicit opt-in
//! fallback (timings then include the page cache). `flush` is `fdatasync`; `trim` punches a
//! hole (`fallocate`), ignored where unsupported.
//!
//! Placement: a write's stream reaches the device as a write-life hint (its hint's own life,
//! else [`WriteLife::of_stream`]; `fcntl(F_SET_RW_HINT)` per file) and, where the kernel (6.16+)
//! and the disk (`max_write_streams` > 0: NVMe FDP or streams) support it, as the io_uring
//! write's per-I/O write stream; [`FileDevice::placement_support`] reports which
//! ([`crate::placement`]).

use crate::lock::{self, Lock};
use crate::placement::{self, PlacementSupport};
use crate::{
    check_extent, submit_all, BlockDevice, ClockKind, DevError, DevStats, Io, PageNo, WriteHint,
};
use io_uring::{opcode, types, IoUring};
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[path = "uring_queue.rs"]
mod uring_queue;

#[path = "read_thread.rs"]
mod read_thread;

/// Alignment of every buffer the kernel reads into or writes from (O_DIRECT).
pub(crate) const ALIGN: usize = 4096;
const SECTOR: usize = 512;

/// How to open a [`FileDevice`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileOptions {
    /// Use the OS page cache instead of O_DIRECT (explicit opt-in; timings include the cache).
    pub buffered: bool,
    /// Most I/Os in flight in one io_uring submission (the ring's size; bigger batches go
    /// in waves).
    pub queue_depth: u32,
    /// Page size used by [`FileDevice::open`] (a multiple of 512; [`FileDevice::create`]
    /// takes its page size explicitly and ignores this).
    pub page_bytes: usize,
    /// Read-write with an exclusive `flock`, or read-only with a shared one (see [`Lock`]).
    pub lock: Lock,
    /// io_uring's fixed buffers for reads into page images held in slabs ([`PageBuf`], the
    /// pager's frames): each slab is registered with the ring once, on its first read, and
    /// read into with READ_FIXED, so the kernel does not pin the image's pages per read.
    /// Off: every read is a plain READ (pinned per read, as fio's default `fixedbufs=0`).
    /// Reads into other memory and [`BlockDevice::read_queued`] (the read ceiling, fio's
    /// reads) are plain READs either way. If the kernel refuses the registration the device
    /// reads plainly (see [`FileDevice::fixed_reads`]).
    pub fixed_buffers: bool,
    /// The file registered with the ring once (a fixed file: no file lookup per read) for the
    /// same reads as `fixed_buffers`; the read ceiling's reads name the file per read, as
    /// fio's default `registerfiles=0`.
    pub fixed_file: bool,
    /// How the ring posts completions and who submits ([`RingSetup`]).
    pub ring_setup: RingSetup,
    /// The device's [`crate::ReadStream`] is served by a reader thread with a ring of its
    /// own, which re-issues a read the moment one completes while the caller uses the pages
    /// handed back (see `read_thread.rs`). Off: the caller's thread issues the next reads
    /// whenever it calls the stream (the inline queue). Other reads and writes are the
    /// caller's either way.
    pub read_thread: bool,
}

/// How a [`FileDevice`]'s io_uring is set up: who runs a completed read's completion work
/// (the kernel posts a file read's completion as task work of the task that issued it) and
/// who submits. The default is the kernel's own default; the others are the setups fio
/// 3.33 and SPDK-style pollers use, kept as switches so each can be measured against it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RingSetup {
    /// No setup flags: a completion interrupts the issuing thread (an IPI when it runs
    /// elsewhere) to post itself, wherever that thread is.
    #[default]
    Plain,
    /// `IORING_SETUP_COOP_TASKRUN | TASKRUN_FLAG`: no interrupt; completions are posted at the
    /// thread's next entry to the kernel, which the device makes when the ring flags work
    /// pending.
    CoopTaskrun,
    /// `COOP_TASKRUN | SINGLE_ISSUER | DEFER_TASKRUN | TASKRUN_FLAG` (fio's io_uring setup
    /// since 3.31): completions are posted only when the thread enters the kernel to take
    /// them, in one batch. Only the thread that first used the ring may use it.
    DeferTaskrun,
    /// `IORING_SETUP_SQPOLL` (idle after [`SQPOLL_IDLE_MS`]): a kernel thread takes the
    /// submission ring and issues (and posts) the reads, so neither needs a system call from
    /// the device's thread; it spins on a CPU while reads come.
    SqPoll,
}

/// How long a [`RingSetup::SqPoll`] ring's kernel thread polls with nothing to submit before
/// it sleeps (milliseconds; the device wakes it on its next submission).
pub const SQPOLL_IDLE_MS: u32 = 10;

impl RingSetup {
    pub const ALL: [RingSetup; 4] = [
        RingSetup::Plain,
        RingSetup::CoopTaskrun,
        RingSetup::DeferTaskrun,
        RingSetup::SqPoll,
    ];

    /// The name used in options and reports.
    pub fn name(self) -> &'static str {
        match self {
            RingSetup::Plain => "plain",
            RingSetup::CoopTaskrun => "coop",
            RingSetup::DeferTaskrun => "defer",
            RingSetup::SqPoll => "sqpoll",
        }
    }

    /// The setup named `name` ([`RingSetup::name`]), or None.
    pub fn parse(name: &str) -> Option<RingSetup> {
        RingSetup::ALL.into_iter().find(|r| r.name() == name)
    }

    /// Whether only the ring's creating thread may submit to it and take its completions.
    fn single_issuer(self) -> bool {
        self == RingSetup::DeferTaskrun
    }

    /// Whether this kernel sets up a ring this way: the kernel's refusal otherwise (EINVAL
    /// for `DeferTaskrun` before Linux 6.1, which added `IORING_SETUP_DEFER_TASKRUN`; EPERM
    /// for `SqPoll` without the privilege before 5.11). Builds a ring of 2 entries and drops it.
    pub fn probe(self) -> std::io::Result<()> {
        self.build(2).map(drop)
    }

    /// A new ring of `entries` set up this way.
    fn build(self, entries: u32) -> std::io::Result<IoUring> {
        let mut b = IoUring::builder();
        match self {
            RingSetup::Plain => {}
            RingSetup::CoopTaskrun => {
                b.setup_coop_taskrun().setup_taskrun_flag();
            }
            RingSetup::DeferTaskrun => {
                b.setup_coop_taskrun()
                    .setup_taskrun_flag()
                    .setup_single_issuer()
                    .setup_defer_taskrun();
            }
            RingSetup::SqPoll => {
                b.setup_sqpoll(SQPOLL_IDLE_MS);
            }
        }
        b.build(entries)
    }
}

impl Default for FileOptions {
    fn default() -> Self {
        FileOptions {
            buffered: false,
            queue_depth: 64,
            page_bytes: 4096,
            lock: Lock::Exclusive,
            fixed_buffers: true,
            fixed_file: true,
            ring_setup: RingSetup::Plain,
            read_thread: false,
        }
    }
}

/// How long data written to a file is expected to live: Linux's write-life hints
/// (`RWH_WRITE_LIFE_*`, set per file with `fcntl(F_SET_RW_HINT)`, kernel 4.13+). A device
/// with streams may place data by it; on one without, the kernel keeps the hint and nothing
/// else changes. The discriminants are the kernel's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u64)]
pub enum WriteLife {
    NotSet = 0,
    None = 1,
    Short = 2,
    Medium = 3,
    Long = 4,
    Extreme = 5,
}

impl WriteLife {
    /// The life a write of `stream` carries when its hint names none: the default stream 0
    /// none (the file's hint is left alone), streams 1, 2, 3 short, medium, long, and
    /// higher streams extreme (the kernel has four lives to tell apart).
    pub fn of_stream(stream: u16) -> Option<WriteLife> {
        match stream {
            0 => None,
            1 => Some(WriteLife::Short),
            2 => Some(WriteLife::Medium),
            3 => Some(WriteLife::Long),
            _ => Some(WriteLife::Extreme),
        }
    }

    pub const ALL: [WriteLife; 6] = [
        WriteLife::NotSet,
        WriteLife::None,
        WriteLife::Short,
        WriteLife::Medium,
        WriteLife::Long,
        WriteLife::Extreme,
    ];
}

/// `fcntl` commands of write-life hints (linux/fcntl.h: F_LINUX_SPECIFIC_BASE + 11 / + 12).
const F_GET_RW_HINT: libc::c_int = 1035;
const F_SET_RW_HINT: libc::c_int = 1036;

impl FileDevice {
    /// Tag every later write to this file with `life` (`fcntl(F_SET_RW_HINT)`) and return
    /// what the kernel said: `Ok`, or [`DevError::Io`] with op `fcntl(F_SET_RW_HINT)` carrying
    /// the errno (`EINVAL`: this kernel or file does not take write-life hints; writes then go
    /// unhinted, which changes nothing else). The hint is per file (inode), not per write.
    pub fn set_write_life(&self, life: WriteLife) -> Result<(), DevError> {
        let value = life as u64;
        // SAFETY: F_SET_RW_HINT reads one u64 through the pointer, which outlives the call.
        let r = unsafe { libc::fcntl(self.file.as_raw_fd(), F_SET_RW_HINT, &value as *const u64) };
        if r == 0 {
            return Ok(());
        }
        let source = std::io::Error::last_os_error();
        Err(io_err(&self.path, "fcntl(F_SET_RW_HINT)", source))
    }

    /// What the file's device offers for placement: kernel, disk, write streams, and whether
    /// the kernel takes write-life hints on this file (asked by re-setting the file's current
    /// hint, which changes nothing). For a report's `config`.
    pub fn placement_support(&self) -> PlacementSupport {
        let mut s = self.placement.clone();
        let taken = !self.life_unsupported
            && self
                .write_life()
                .and_then(|l| self.set_write_life(l))
                .is_ok();
        s.write_life_hints = Some(taken);
        s.summary = s.describe();
        s
    }

    fn detect_placement(&self) -> PlacementSupport {
        use std::os::unix::fs::MetadataExt;
        let Ok(meta) = self.file.metadata() else {
            return PlacementSupport::default();
        };
        let dev = meta.dev();
        let (major, minor) = (libc::major(dev), libc::minor(dev));
        placement::detect(Path::new("/sys"), Path::new("/proc"), (major, minor))
    }

    /// Give the file the write life of `hint` (its own, else its stream's) before its write, calling `fcntl` only when the
    /// life differs from the last one set (one syscall per change of data type). A kernel or
    /// file without write-life hints (EINVAL, EOPNOTSUPP) is remembered and not asked again;
    /// its writes go unhinted. Any other error is returned.
    fn apply_life(&mut self, hint: WriteHint) -> Result<(), DevError> {
        let Some(life) = hint.life.or(WriteLife::of_stream(hint.stream)) else {
            return Ok(());
        };
        if self.life_unsupported || self.life_set == Some(life) {
            return Ok(());
        }
        match self.set_write_life(life) {
            Ok(()) => {
                self.life_set = Some(life);
                Ok(())
            }
            Err(DevError::Io { source, .. })
                if matches!(
                    source.raw_os_error(),
                    Some(libc::EINVAL) | Some(libc::EOPNOTSUPP)
                ) =>
            {
                self.life_unsupported = true;
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Whether the kernel refused a write's life hint for this file (writes then go unhinted).
    pub fn write_life_unsupported(&self) -> bool {
        self.life_unsupported
    }

    /// The write-life hint the kernel holds for this file (`fcntl(F_GET_RW_HINT)`).
    pub fn write_life(&self) -> Result<WriteLife, DevError> {
        let mut value = u64::MAX;
        // SAFETY: F_GET_RW_HINT writes one u64 through the pointer, which outlives the call.
        let r =
            unsafe { libc::fcntl(self.file.as_raw_fd(), F_GET_RW_HINT, &mut value as *mut u64) };
        if r != 0 {
            let source = std::io::Error::last_os_error();
            return Err(io_err(&self.path, "fcntl(F_GET_RW_HINT)", source));
        }
        WriteLife::ALL
            .into_iter()
            .find(|l| *l as u64 == value)
            .ok_or_else(|| DevError::Config {
                field: "write_life",
                value: value.to_string(),
                reason: format!(
                    "the kernel reports an unknown write-life hint for {}",
                    self.path.display()
                ),
            })
    }
}

#[cfg(test)]
mod write_life_tests {
    use super::*;

    /// On a temp file in the current directory (a disk file system, unlike /tmp on some
    /// machines) every hint is either taken — and then reads back — or refused with the
    /// errno named; never a panic.
    #[test]
    fn each_write_life_is_taken_or_refused_with_the_errno() {
        let dir = tempfile::tempdir_in(".").expect("temp dir in the current directory");
        let path = dir.path().join("hints.img");
        let opts = FileOptions {
            buffered: true,
            ..FileOptions::default()
        };
        let dev = FileDevice::create(&path, 4, 4096, opts).expect("create");
        for life in WriteLife::ALL {
            match dev.set_write_life(life) {
                Ok(()) => assert_eq!(dev.write_life().expect("read back"), life),
                Err(DevError::Io { op, source, .. }) => {
                    assert_eq!(op, "fcntl(F_SET_RW_HINT)");
                    assert!(source.raw_os_error().is_some(), "{source}");
                }
                Err(e) => panic!("unexpected error kind: {e}"),
            }
        }
    }

    /// A hinted write gives the file the hint's life (one `fcntl` per change), or the device
    /// reports cleanly that the kernel refused it; an unhinted write leaves the life alone.
    #[test]
    fn a_streamed_write_carries_its_streams_life_and_the_device_reports_its_support() {
        let dir = tempfile::tempdir_in(".").expect("temp dir in the current directory");
        let path = dir.path().join("streamed.img");
        let opts = FileOptions {
            buffered: true,
            ..FileOptions::default()
        };
        let mut dev = FileDevice::create(&path, 8, 4096, opts).expect("create");
        let page = vec![3u8; 4096];
        let mut batch = [Io::Write {
            page: 1,
            buf: &page,
            hint: WriteHint::stream(3),
        }];
        dev.submit(&mut batch)
            .expect("a streamed write, stream support or not");
        let s = dev.placement_support();
        if dev.write_life_unsupported() {
            assert_eq!(s.write_life_hints, Some(false));
        } else {
            assert_eq!(
                dev.write_life().unwrap(),
                WriteLife::Long,
                "stream 3's life"
            );
            assert_eq!(s.write_life_hints, Some(true));
        }
        // Whatever this machine has, the report says it in one line (a virtio disk: none).
        assert!(s.summary.contains("write streams"), "{}", s.summary);
        assert_eq!(s.per_io_write_streams, s.io_write_stream(1) == 1);
    }

    #[test]
    fn a_hinted_write_sets_the_files_write_life() {
        let dir = tempfile::tempdir_in(".").expect("temp dir in the current directory");
        let path = dir.path().join("hinted.img");
        let opts = FileOptions {
            buffered: true,
            ..FileOptions::default()
        };
        let mut dev = FileDevice::create(&path, 8, 4096, opts).expect("create");
        let page = vec![7u8; 4096];
        for (i, life) in [WriteLife::Long, WriteLife::Short, WriteLife::Short]
            .into_iter()
            .enumerate()
        {
            dev.write(i as u64, &page, WriteHint::stream(1).with_life(life))
                .expect("a hinted write succeeds, hint taken or not");
            if dev.write_life_unsupported() {
                assert_eq!(dev.life_set, None);
                continue;
            }
            assert_eq!(dev.write_life().expect("read back"), life);
            assert_eq!(dev.life_set, Some(life));
        }
        dev.write(3, &page, WriteHint::NONE)
            .expect("unhinted write");
        if !dev.write_life_unsupported() {
            assert_eq!(dev.write_life().expect("read back"), WriteLife::Short);
            // A batch carries its first hinted write's life.
            let mut batch = [
                Io::Write {
                    page: 4,
                    buf: &page,
                    hint: WriteHint::NONE,
                },
                Io::Write {
                    page: 5,
                    buf: &page,
                    hint: WriteHint::NONE.with_life(WriteLife::Extreme),
                },
            ];
            dev.submit(&mut batch).expect("hinted batch");
            assert_eq!(dev.write_life().expect("read back"), WriteLife::Extreme);
        }
    }
}

/// A heap buffer aligned for O_DIRECT.
struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
}

impl AlignedBuf {
    fn new(len: usize) -> AlignedBuf {
        let layout = Layout::from_size_align(len.max(ALIGN), ALIGN).expect("valid layout");
        // SAFETY: the layout has a non-zero size; the pointer is checked for null.
        let ptr = unsafe { alloc_zeroed(layout) };
        assert!(!ptr.is_null(), "out of memory allocating {len} bytes");
        AlignedBuf {
            ptr,
            len: len.max(ALIGN),
        }
    }
    fn slice(&mut self, len: usize) -> &mut [u8] {
        assert!(len <= self.len);
        // SAFETY: ptr is valid for self.len bytes, owned by self, and borrowed mutably here.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        let layout = Layout::from_size_align(self.len, ALIGN).expect("valid layout");
        // SAFETY: ptr was allocated in `new` with this same layout.
        unsafe { dealloc(self.ptr, layout) }
    }
}

// SAFETY: AlignedBuf owns its allocation exclusively (like a Box<[u8]>).
unsafe impl Send for AlignedBuf {}

pub struct FileDevice {
    file: File,
    path: PathBuf,
    page_bytes: usize,
    capacity_pages: u64,
    opts: FileOptions,
    ring: Option<IoUring>,
    /// The thread that created `ring` (a single-issuer ring serves it alone).
    ring_thread: std::thread::ThreadId,
    bounce: Vec<AlignedBuf>,
    /// Scratch for a wave's submissions and completions (kept to avoid allocation per I/O).
    sqes: Vec<io_uring::squeue::Entry>,
    done: Vec<(usize, i32)>,
    opened: Instant,
    stats: DevStats,
    /// Fault sites in `io_uring_enter`, armed only by tests.
    enter_faults: EnterFaults,
    /// Why the device refuses every operation (a wave left I/Os in flight), if it does.
    poisoned: Option<String>,
    /// The write life last set through a write's hint (`fcntl` only when it changes).
    life_set: Option<WriteLife>,
    /// The kernel or file refused write-life hints (EINVAL/EOPNOTSUPP): not tried again.
    life_unsupported: bool,
    /// What the file's device offers for placement (detected at open).
    placement: PlacementSupport,
    /// Reads kept in flight across calls ([`crate::ReadStream`]).
    stream: uring_queue::Stream,
    /// What the ring has registered (fixed file, fixed buffers) and the reads that used them.
    fixed: uring_queue::Fixed,
    /// The reader thread serving the stream ([`FileOptions::read_thread`]), once started.
    reader: Option<read_thread::Reader>,
}

impl Drop for FileDevice {
    fn drop(&mut self) {
        self.stream_settle();
        if self.poisoned.is_some() {
            // The kernel may still write these buffers: leak them, and the ring, rather than
            // free memory it can reach.
            std::mem::forget(std::mem::take(&mut self.bounce));
            std::mem::forget(std::mem::take(&mut self.stream));
            std::mem::forget(self.ring.take());
            return;
        }
        // Settled above: nothing is in flight, so the ring's registered file (which holds
        // the file, and with it the lock) and buffers can be given back before it closes.
        if let Some(ring) = &self.ring {
            self.fixed.release(ring);
        }
    }
}

/// Injected `io_uring_enter` failures (a fault site in the real wave loop; tests arm it).
#[derive(Clone, Copy, Debug, Default)]
struct EnterFaults {
    /// The next n calls enter the kernel (the wave's I/Os are then in flight) and report EIO.
    after_submit: u32,
    /// The next n calls report EIO without entering the kernel.
    before_submit: u32,
    /// The read queue waits for every read in flight and takes their completions in reverse
    /// order (completions arriving out of issue order, made certain).
    reverse_completions: bool,
}

impl EnterFaults {
    /// Run `enter`, unless a fault is armed: then fail before or after it.
    fn apply(&mut self, enter: impl FnOnce() -> std::io::Result<usize>) -> std::io::Result<usize> {
        let eio = || Err(std::io::Error::from_raw_os_error(libc::EIO));
        if self.before_submit > 0 {
            self.before_submit -= 1;
            return eio();
        }
        let r = enter();
        if self.after_submit > 0 {
            self.after_submit -= 1;
            return eio();
        }
        r
    }
}

impl FileDevice {
    /// Create (or truncate) `path` as a device of `capacity_pages` pages of `page_bytes`.
    pub fn create(
        path: &Path,
        capacity_pages: u64,
        page_bytes: usize,
        opts: FileOptions,
    ) -> Result<FileDevice, DevError> {
        check_page_bytes(page_bytes)?;
        if opts.lock.read_only() {
            return Err(DevError::ReadOnly {
                path: path.to_path_buf(),
                op: "create",
            });
        }
        let file = open(path, opts, true)?;
        // Truncate only once the lock is held: another writer's file is never cut.
        file.set_len(0).map_err(|e| io_err(path, "set_len", e))?;
        file.set_len(capacity_pages * page_bytes as u64)
            .map_err(|e| io_err(path, "set_len", e))?;
        FileDevice::with_file(file, path, capacity_pages, page_bytes, opts)
    }

    /// Open an existing device file of `opts.page_bytes` pages; its length must be a whole
    /// number of pages.
    pub fn open(path: &Path, opts: FileOptions) -> Result<FileDevice, DevError> {
        let page_bytes = opts.page_bytes;
        check_page_bytes(page_bytes)?;
        let file = open(path, opts, false)?;
        let len = file.metadata().map_err(|e| io_err(path, "stat", e))?.len();
        if len % page_bytes as u64 != 0 {
            return Err(DevError::Config {
                field: "page_bytes",
                value: page_bytes.to_string(),
                reason: format!(
                    "{} is {len} bytes, not a whole number of pages",
                    path.display()
                ),
            });
        }
        FileDevice::with_file(file, path, len / page_bytes as u64, page_bytes, opts)
    }

    fn with_file(
        file: File,
        path: &Path,
        capacity_pages: u64,
        page_bytes: usize,
        opts: FileOptions,
    ) -> Result<FileDevice, DevError> {
        let mut dev = FileDevice {
            file,
            path: path.to_path_buf(),
            page_bytes,
            capacity_pages,
            opts,
            ring: None,
            ring_thread: std::thread::current().id(),
            bounce: Vec::new(),
            sqes: Vec::new(),
            done: Vec::new(),
            opened: Instant::now(),
            stats: DevStats::default(),
            enter_faults: EnterFaults::default(),
            poisoned: None,
            life_set: None,
            life_unsupported: false,
            placement: PlacementSupport::default(),
            stream: uring_queue::Stream::default(),
            fixed: uring_queue::Fixed::default(),
            reader: None,
        };
        dev.placement = dev.detect_placement();
        // Some file systems accept O_DIRECT at open and refuse it at the first I/O.
        if capacity_pages > 0 {
            let mut probe = vec![0u8; page_bytes];
            dev.pread(0, &mut probe)?;
        }
        Ok(dev)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads done through io_uring's fixed buffers (READ_FIXED) since the device opened; 0
    /// with [`FileOptions::fixed_buffers`] off or refused by the kernel.
    pub fn fixed_reads(&self) -> u64 {
        self.fixed.reads + self.reader.as_ref().map_or(0, |r| r.fixed_reads)
    }

    /// Why the kernel refused a registration the options asked for (fixed file or buffers),
    /// if it did: the device then reads plainly.
    pub fn fixed_refused(&self) -> Option<&str> {
        let thread = self
            .reader
            .as_ref()
            .and_then(|r| r.fixed_refused.as_deref());
        self.fixed.refused.as_deref().or(thread)
    }

    fn bounce(&mut self, i: usize, len: usize) -> &mut [u8] {
        stage(&mut self.bounce, i, len)
    }

    fn pread(&mut self, page: PageNo, buf: &mut [u8]) -> Result<(), DevError> {
        let off = page * self.page_bytes as u64;
        let b = stage(&mut self.bounce, 0, buf.len());
        let r = self.file.read_exact_at(b, off);
        buf.copy_from_slice(b);
        r.map_err(|e| self.direct_err("read", e))
    }

    fn direct_err(&self, op: &'static str, e: std::io::Error) -> DevError {
        if e.raw_os_error() == Some(libc::EINVAL) && !self.opts.buffered {
            DevError::DirectIoUnsupported {
                path: self.path.clone(),
            }
        } else {
            io_err(&self.path, op, e)
        }
    }

    fn ring(&mut self) -> Result<&mut IoUring, DevError> {
        let here = std::thread::current().id();
        if self.ring.is_some() && self.opts.ring_setup.single_issuer() && self.ring_thread != here {
            // Only the ring's creator may use a single-issuer ring: a device moved to another
            // thread gets a new ring there, once nothing is in flight on the old one. The
            // kernel refuses to unregister the old ring's fixed file from here, so the file
            // (and its lock) stays referenced until the kernel tears that ring down, shortly
            // after it is dropped.
            if self.stream_busy() {
                let why = std::io::Error::other(
                    "a single-issuer ring (RingSetup::DeferTaskrun) used from another thread while its reads are in flight",
                );
                return Err(io_err(&self.path, "io_uring_enter", why));
            }
            let old = self.ring.take().expect("checked above");
            self.fixed.release(&old);
        }
        if self.ring.is_none() {
            let ring = (self.opts.ring_setup)
                .build(self.opts.queue_depth.max(1))
                .map_err(|e| io_err(&self.path, "io_uring_setup", e))?;
            let reads = self.fixed.reads;
            self.fixed = uring_queue::Fixed::register(&ring, &self.file, self.opts);
            self.fixed.reads = reads;
            self.ring = Some(ring);
            self.ring_thread = here;
        }
        Ok(self.ring.as_mut().expect("ring just created"))
    }

    /// Submit one wave (at most `queue_depth` I/Os) and wait for all of it.
    fn wave(&mut self, batch: &mut [Io<'_>]) -> Result<(), DevError> {
        // The ring's completions are this wave's alone.
        self.stream_settle();
        // A poisoned device's bounce buffers may still be in the kernel's hands: never stage.
        self.check_usable()?;
        let fd = types::Fd(self.file.as_raw_fd());
        let pb = self.page_bytes as u64;
        let mut sqes = std::mem::take(&mut self.sqes);
        sqes.clear();
        let mut first_err = None;
        for (i, io) in batch.iter().enumerate() {
            let (page, len) = extent(io);
            match check_extent(page, len, self.page_bytes, self.capacity_pages) {
                Ok(pages) => self.count(io, pages),
                Err(e) => {
                    first_err.get_or_insert(e);
                    continue;
                }
            }
            let b = self.bounce(i, len);
            if let Io::Write { buf, .. } = io {
                b.copy_from_slice(buf);
            }
            let ptr = b.as_mut_ptr();
            let e = match io {
                Io::Read { .. } => opcode::Read::new(fd, ptr, len as u32)
                    .offset(page * pb)
                    .build(),
                Io::Write { hint, .. } => opcode::Write::new(fd, ptr, len as u32)
                    .offset(page * pb)
                    .write_stream(self.placement.io_write_stream(hint.stream))
                    .build(),
            };
            sqes.push(e.user_data(i as u64));
        }
        let reaped = self.run_wave(&sqes);
        self.sqes = sqes;
        if let Err(e) = reaped {
            first_err.get_or_insert(e);
        }
        if self.poisoned.is_some() {
            return Err(first_err.expect("a poisoned wave has an error"));
        }
        for k in 0..self.done.len() {
            let (i, res) = self.done[k];
            if let Err(e) = self.check_completion(res, extent(&batch[i]).1) {
                first_err.get_or_insert(e);
            }
        }
        for k in 0..self.done.len() {
            let i = self.done[k].0;
            if let Io::Read { buf, .. } = &mut batch[i] {
                let len = buf.len();
                buf.copy_from_slice(self.bounce(i, len));
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    fn count(&mut self, io: &Io<'_>, pages: u64) {
        match io {
            Io::Read { .. } => {
                self.stats.read_ios += 1;
                self.stats.pages_read += pages;
            }
            Io::Write { .. } => {
                self.stats.write_ios += 1;
                self.stats.pages_written += pages;
            }
        }
    }

    /// Push `sqes` and reap every completion into `self.done`.
    ///
    /// An `io_uring_enter` error does not end the wave while its I/Os may be in flight (the
    /// kernel could still write the bounce buffers and post completions under this wave's
    /// `user_data`): the loop keeps entering and reaping until every SQE has completed, and
    /// reports the first error after that. If `MAX_ENTER_FAILURES` calls in a row fail, the
    /// wave cannot be drained and the device is poisoned: it refuses every further operation,
    /// never touches its bounce buffers or ring again, and leaks them on drop.
    fn run_wave(&mut self, sqes: &[io_uring::squeue::Entry]) -> Result<(), DevError> {
        self.check_usable()?;
        let path = self.path.clone();
        let mut done = std::mem::take(&mut self.done);
        done.clear();
        self.ring()?;
        let ring = self.ring.as_mut().expect("ring just created");
        let faults = &mut self.enter_faults;
        for e in sqes {
            // SAFETY: every buffer lives in `self.bounce`, which is neither touched nor freed
            // until this wave's SQEs have all completed: this function returns only once they
            // are reaped, or after poisoning the device, which then never touches (and on
            // drop leaks) the buffers and the ring. The fd stays open for the device's life.
            unsafe { ring.submission().push(e).expect("a wave fits the ring") };
        }
        let mut first_err = None;
        let mut failures_in_row = 0;
        while done.len() < sqes.len() {
            match faults.apply(|| ring.submit_and_wait(sqes.len() - done.len())) {
                Ok(_) => failures_in_row = 0,
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {}
                Err(e) => {
                    failures_in_row += 1;
                    let reason = e.to_string();
                    first_err.get_or_insert(io_err(&path, "io_uring_enter", e));
                    if failures_in_row >= MAX_ENTER_FAILURES {
                        self.poisoned = Some(format!(
                            "{} of {} I/Os completed; io_uring_enter failed {failures_in_row} times in a row: {reason}",
                            done.len(),
                            sqes.len()
                        ));
                        break;
                    }
                }
            }
            done.extend(
                ring.completion()
                    .map(|c| (c.user_data() as usize, c.result())),
            );
        }
        self.done = done;
        first_err.map_or(Ok(()), Err)
    }

    /// Refuse every operation on a poisoned device (see [`FileDevice::run_wave`]).
    /// `check_usable`, and refuse `op` on a read-only device.
    fn check_writable(&self, op: &'static str) -> Result<(), DevError> {
        if self.opts.lock.read_only() {
            return Err(DevError::ReadOnly {
                path: self.path.clone(),
                op,
            });
        }
        self.check_usable()
    }

    fn check_usable(&self) -> Result<(), DevError> {
        match &self.poisoned {
            None => Ok(()),
            Some(reason) => Err(DevError::Poisoned {
                path: self.path.clone(),
                reason: reason.clone(),
            }),
        }
    }

    /// A completion's result: a negative errno or a short transfer is an error.
    fn check_completion(&self, res: i32, len: usize) -> Result<(), DevError> {
        if res < 0 {
            Err(self.direct_err("io_uring I/O", std::io::Error::from_raw_os_error(-res)))
        } else if res as usize != len {
            Err(DevError::ShortTransfer {
                path: self.path.clone(),
                op: "io_uring I/O",
                got_bytes: res as usize,
                expected_bytes: len,
            })
        } else {
            Ok(())
        }
    }
}

/// `io_uring_enter` failures in a row after which a wave or queue that cannot be drained
/// poisons the device.
const MAX_ENTER_FAILURES: u32 = 8;

/// The first page and byte length of an I/O.
fn extent(io: &Io<'_>) -> (PageNo, usize) {
    match io {
        Io::Read { page, buf } => (*page, buf.len()),
        Io::Write { page, buf, .. } => (*page, buf.len()),
    }
}

/// Bounce buffer `i`, at least `len` bytes (kept and reused).
fn stage(bounce: &mut Vec<AlignedBuf>, i: usize, len: usize) -> &mut [u8] {
    while bounce.len() <= i {
        bounce.push(AlignedBuf::new(len));
    }
    if bounce[i].len < len {
        bounce[i] = AlignedBuf::new(len);
    }
    bounce[i].slice(len)
}

fn check_page_bytes(page_bytes: usize) -> Result<(), DevError> {
    if page_bytes == 0 || !page_bytes.is_multiple_of(SECTOR) {
        return Err(DevError::Config {
            field: "page_bytes",
            value: page_bytes.to_string(),
            reason: format!("O_DIRECT needs a non-zero multiple of {SECTOR}; use 4096"),
        });
    }
    Ok(())
}

/// Open `path` (read-only under a shared lock) and take the lock before anything else.
fn open(path: &Path, opts: FileOptions, create: bool) -> Result<File, DevError> {
    let mut o = OpenOptions::new();
    o.read(true).write(!opts.lock.read_only());
    if create {
        o.create(true);
    }
    if !opts.buffered {
        o.custom_flags(libc::O_DIRECT);
    }
    let file = o.open(path).map_err(|e| open_err(path, opts, e))?;
    lock::take(&file, path, opts.lock)?;
    Ok(file)
}

/// EINVAL on an O_DIRECT open means the file system refuses direct I/O.
fn open_err(path: &Path, opts: FileOptions, e: std::io::Error) -> DevError {
    if e.raw_os_error() == Some(libc::EINVAL) && !opts.buffered {
        DevError::DirectIoUnsupported {
            path: path.to_path_buf(),
        }
    } else {
        io_err(path, "open", e)
    }
}

fn io_err(path: &Path, op: &'static str, source: std::io::Error) -> DevError {
    DevError::Io {
        path: path.to_path_buf(),
        op,
        source,
    }
}

impl BlockDevice for FileDevice {
    fn page_bytes(&self) -> usize {
        self.page_bytes
    }
    fn capacity_pages(&self) -> u64 {
        self.capacity_pages
    }
    fn read(&mut self, page: PageNo, buf: &mut [u8]) -> Result<(), DevError> {
        self.check_usable()?;
        let pages = check_extent(page, buf.len(), self.page_bytes, self.capacity_pages)?;
        if self.stream_busy() {
            // Counted where it is issued.
            return self.stream_read_now(page, buf);
        }
        self.pread(page, buf)?;
        self.stats.read_ios += 1;
        self.stats.pages_read += pages;
        Ok(())
    }
    fn write(&mut self, page: PageNo, buf: &[u8], hint: WriteHint) -> Result<(), DevError> {
        self.check_writable("write")?;
        let pages = check_extent(page, buf.len(), self.page_bytes, self.capacity_pages)?;
        self.apply_life(hint)?;
        let off = page * self.page_bytes as u64;
        let b = stage(&mut self.bounce, 0, buf.len());
        b.copy_from_slice(buf);
        self.file
            .write_all_at(b, off)
            .map_err(|e| self.direct_err("write", e))?;
        self.stats.write_ios += 1;
        self.stats.pages_written += pages;
        Ok(())
    }
    /// The file's write life is per inode, not per I/O: a batch carries the life of its first
    /// hinted write, its own or its stream's (the store's batches hold one data type each).
    /// Each write also carries its stream per I/O where kernel and disk support it.
    fn submit(&mut self, batch: &mut [Io<'_>]) -> Result<(), DevError> {
        let hint = batch.iter().find_map(|io| match io {
            Io::Write { hint, .. } if hint.life.or(WriteLife::of_stream(hint.stream)).is_some() => {
                Some(*hint)
            }
            _ => None,
        });
        if batch.iter().any(|io| matches!(io, Io::Write { .. })) {
            self.check_writable("write")?;
        }
        if let Some(hint) = hint {
            self.apply_life(hint)?;
        }
        self.stats.batches += 1;
        let qd = self.opts.queue_depth.max(1) as usize;
        submit_all(batch.chunks_mut(qd), |wave| self.wave(wave))
    }
    /// `depth` reads kept in flight through io_uring (at most the ring's `queue_depth`), each
    /// into its own bounce buffer: fio's `--iodepth` on the same file.
    fn read_queued(
        &mut self,
        pages: &mut dyn Iterator<Item = PageNo>,
        depth: usize,
    ) -> Result<u64, DevError> {
        uring_queue::read_queued(self, pages, depth)
    }
    /// `depth` reads kept in flight through io_uring, as [`BlockDevice::read_queued`], into
    /// the caller's buffers (straight into those aligned to 4096 bytes, no copy).
    fn read_pipelined(
        &mut self,
        reads: &mut [(PageNo, &mut [u8])],
        depth: usize,
    ) -> Result<(), DevError> {
        self.stats.batches += 1;
        uring_queue::read_pipelined(self, reads, depth)
    }
    fn pipelines_reads(&self) -> bool {
        true
    }
    fn read_stream(&mut self) -> Option<&mut dyn crate::ReadStream> {
        Some(self)
    }
    fn trim(&mut self, page: PageNo, pages: u64) -> Result<(), DevError> {
        self.check_writable("trim")?;
        check_extent(
            page,
            pages as usize * self.page_bytes,
            self.page_bytes,
            self.capacity_pages,
        )?;
        self.stats.trims += 1;
        let (off, len) = (
            (page * self.page_bytes as u64) as i64,
            (pages * self.page_bytes as u64) as i64,
        );
        // SAFETY: plain syscall on an fd we own; arguments are in range.
        let r = unsafe {
            libc::fallocate(
                self.file.as_raw_fd(),
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                off,
                len,
            )
        };
        if r != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EOPNOTSUPP) {
                return Err(io_err(&self.path, "fallocate(PUNCH_HOLE)", e));
            }
        }
        Ok(())
    }
    fn flush(&mut self) -> Result<(), DevError> {
        self.check_usable()?;
        if self.opts.lock.read_only() {
            return Ok(()); // nothing was written
        }
        self.stats.flushes += 1;
        self.file
            .sync_data()
            .map_err(|e| io_err(&self.path, "fdatasync", e))
    }
    fn now_ns(&self) -> u64 {
        self.opened.elapsed().as_nanos() as u64
    }
    fn clock_kind(&self) -> ClockKind {
        ClockKind::Wall
    }
    fn placement(&self) -> Option<PlacementSupport> {
        Some(self.placement_support())
    }
    fn stats(&self) -> DevStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn einval_on_a_direct_open_names_the_path_and_the_fix() {
        let einval = || std::io::Error::from_raw_os_error(libc::EINVAL);
        let path = Path::new("/mnt/tmpfs/dev.img");
        let e = open_err(path, FileOptions::default(), einval());
        assert!(matches!(e, DevError::DirectIoUnsupported { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(msg.contains("/mnt/tmpfs/dev.img") && msg.contains("buffered"));
        let buffered = FileOptions {
            buffered: true,
            ..FileOptions::default()
        };
        assert!(matches!(
            open_err(path, buffered, einval()),
            DevError::Io { op: "open", .. }
        ));
    }
}

#[cfg(test)]
mod wave_faults {
    use super::*;

    const PB: usize = 4096;

    fn device(dir: &Path) -> FileDevice {
        let o = FileOptions {
            queue_depth: 16,
            ..FileOptions::default()
        };
        let mut dev = FileDevice::create(&dir.join("dev"), 64, PB, o).expect("device");
        for p in 0..64u64 {
            dev.write(p, &[p as u8 + 1; PB], WriteHint::NONE).unwrap();
        }
        dev
    }

    fn read_batch(
        dev: &mut FileDevice,
        pages: std::ops::Range<u64>,
    ) -> Result<Vec<Vec<u8>>, DevError> {
        let mut bufs = vec![vec![0u8; PB]; pages.clone().count()];
        let mut batch: Vec<Io> = bufs
            .iter_mut()
            .zip(pages)
            .map(|(buf, page)| Io::Read { page, buf })
            .collect();
        dev.submit(&mut batch)?;
        Ok(bufs)
    }

    #[test]
    fn a_failed_enter_drains_the_wave_before_the_next_one_reuses_its_buffers() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let mut dev = device(dir.path());
        dev.enter_faults.after_submit = 1;
        let e = read_batch(&mut dev, 0..16).expect_err("the injected enter failure is reported");
        assert!(
            matches!(
                e,
                DevError::Io {
                    op: "io_uring_enter",
                    ..
                }
            ),
            "{e:?}"
        );
        // Give stale completions (if any were left behind) time to land in the ring.
        std::thread::sleep(std::time::Duration::from_millis(20));
        let bufs = read_batch(&mut dev, 40..42).expect("the device is usable after a drained wave");
        for (buf, page) in bufs.iter().zip(40u8..) {
            assert!(
                buf.iter().all(|&b| b == page + 1),
                "page {page}: stale data"
            );
        }
    }

    #[test]
    fn queued_reads_drain_after_a_failed_enter_and_poison_when_they_cannot() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let mut dev = device(dir.path());
        dev.enter_faults.after_submit = 1;
        let e = dev
            .read_queued(&mut (0..40u64), 8)
            .expect_err("the enter failure is reported");
        assert!(
            matches!(
                e,
                DevError::Io {
                    op: "io_uring_enter",
                    ..
                }
            ),
            "{e:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
        let bufs = read_batch(&mut dev, 40..42).expect("usable after a drained queue");
        assert!(bufs[1].iter().all(|&b| b == 42), "stale data");
        dev.enter_faults.before_submit = u32::MAX;
        assert!(dev.read_queued(&mut (0..40u64), 8).is_err());
        assert!(matches!(
            read_batch(&mut dev, 0..2),
            Err(DevError::Poisoned { .. })
        ));
    }

    #[test]
    fn a_wave_that_cannot_be_drained_poisons_the_device() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let mut dev = device(dir.path());
        dev.enter_faults.before_submit = u32::MAX;
        assert!(read_batch(&mut dev, 0..16).is_err());
        let mut buf = vec![0u8; PB];
        assert!(matches!(
            dev.read(1, &mut buf),
            Err(DevError::Poisoned { .. })
        ));
        assert!(matches!(
            read_batch(&mut dev, 0..2),
            Err(DevError::Poisoned { .. })
        ));
        assert!(matches!(
            dev.write(1, &buf, WriteHint::NONE),
            Err(DevError::Poisoned { .. })
        ));
        drop(dev); // leaks the bounce buffers the kernel may still own; must not crash
    }
}
