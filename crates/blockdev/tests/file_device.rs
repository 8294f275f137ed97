//! `FileDevice` behaviour on a real disk file system: single and batched round trips (batches
//! bigger than the ring go in waves), range errors that leave the rest of a batch done,
//! configurable page sizes, reopening, and the refusal of O_DIRECT on tmpfs naming the fix.

use blockdev::{BlockDevice, DevError, FileDevice, FileOptions, Io, WriteHint};

const PB: usize = 4096;

fn dir() -> tempfile::TempDir {
    // CARGO_TARGET_TMPDIR is under the target dir, on the disk (not tmpfs).
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir on disk")
}

fn opts(queue_depth: u32) -> FileOptions {
    FileOptions {
        queue_depth,
        ..FileOptions::default()
    }
}

fn pattern(page: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (page as usize * 31 + i * 7 % 251) as u8)
        .collect()
}

#[test]
fn single_ios_round_trip_at_any_alignment_of_the_callers_buffer() {
    let d = dir();
    let mut dev = FileDevice::create(&d.path().join("dev"), 64, PB, opts(8)).unwrap();
    // A caller buffer deliberately off 4096 alignment.
    let mut backing = vec![0u8; 3 * PB + 1];
    let data = pattern(5, 3 * PB);
    backing[1..].copy_from_slice(&data);
    dev.write(5, &backing[1..], WriteHint::NONE).unwrap();
    let mut out = vec![0u8; 3 * PB + 3];
    dev.read(5, &mut out[3..]).unwrap();
    assert_eq!(&out[3..], &data[..]);
    let mut zero = vec![1u8; PB];
    dev.read(63, &mut zero).unwrap();
    assert!(zero.iter().all(|&b| b == 0), "never written reads zeros");
    let s = dev.stats();
    assert_eq!((s.write_ios, s.pages_written, s.read_ios), (1, 3, 2));
}

#[test]
fn a_batch_bigger_than_the_ring_completes_in_waves() {
    let d = dir();
    let mut dev = FileDevice::create(&d.path().join("dev"), 300, PB, opts(4)).unwrap();
    let bufs: Vec<Vec<u8>> = (0..300).map(|p| pattern(p, PB)).collect();
    let mut writes: Vec<Io> = bufs
        .iter()
        .enumerate()
        .rev()
        .map(|(p, buf)| Io::Write {
            page: p as u64,
            buf,
            hint: WriteHint::NONE,
        })
        .collect();
    dev.submit(&mut writes).unwrap();
    let mut outs = vec![vec![0u8; PB]; 300];
    let mut reads: Vec<Io> = outs
        .iter_mut()
        .enumerate()
        .map(|(p, buf)| Io::Read {
            page: p as u64,
            buf,
        })
        .collect();
    dev.submit(&mut reads).unwrap();
    drop(reads);
    assert!(outs.iter().zip(&bufs).all(|(a, b)| a == b));
    assert_eq!(dev.stats().batches, 2);
    assert_eq!(dev.stats().pages_read, 300);
}

#[test]
fn out_of_range_ios_fail_and_the_rest_of_the_batch_completes() {
    let d = dir();
    let mut dev = FileDevice::create(&d.path().join("dev"), 16, PB, opts(8)).unwrap();
    let mut buf = vec![0u8; PB];
    assert!(matches!(
        dev.read(16, &mut buf),
        Err(DevError::OutOfRange { page: 16, .. })
    ));
    assert!(matches!(
        dev.write(15, &vec![0u8; 2 * PB], WriteHint::NONE),
        Err(DevError::OutOfRange { .. })
    ));
    assert!(matches!(
        dev.read(0, &mut [0u8; 100]),
        Err(DevError::Misaligned { len: 100, .. })
    ));
    let good = vec![7u8; PB];
    let mut batch = vec![
        Io::Write {
            page: 99,
            buf: &good,
            hint: WriteHint::NONE,
        },
        Io::Write {
            page: 3,
            buf: &good,
            hint: WriteHint::NONE,
        },
    ];
    assert!(matches!(
        dev.submit(&mut batch),
        Err(DevError::OutOfRange { page: 99, .. })
    ));
    dev.read(3, &mut buf).unwrap();
    assert_eq!(buf, good, "the valid I/O of the failed batch was done");
}

#[test]
fn page_size_is_any_multiple_of_512() {
    let d = dir();
    let mut dev = FileDevice::create(&d.path().join("dev"), 10, 512, opts(4)).unwrap();
    dev.write(9, &[3u8; 512], WriteHint::NONE).unwrap();
    let mut out = [0u8; 1024];
    dev.read(8, &mut out).unwrap();
    assert!(out[..512].iter().all(|&b| b == 0) && out[512..].iter().all(|&b| b == 3));
    let bad = FileDevice::create(&d.path().join("bad"), 10, 1000, opts(4));
    assert!(matches!(
        bad,
        Err(DevError::Config {
            field: "page_bytes",
            ..
        })
    ));
}

#[test]
fn a_file_device_reopens_with_its_data_and_trims_to_zeros() {
    let d = dir();
    let path = d.path().join("dev");
    let mut dev = FileDevice::create(&path, 32, PB, opts(8)).unwrap();
    dev.write(7, &vec![9u8; 2 * PB], WriteHint::NONE).unwrap();
    dev.write(20, &vec![5u8; 4 * PB], WriteHint::NONE).unwrap();
    dev.trim(21, 2).unwrap();
    dev.flush().unwrap();
    drop(dev);
    let mut dev = FileDevice::open(&path, FileOptions::default()).unwrap();
    assert_eq!(dev.capacity_pages(), 32);
    let mut buf = vec![0u8; PB];
    dev.read(8, &mut buf).unwrap();
    assert!(buf.iter().all(|&b| b == 9));
    let mut four = vec![0u8; 4 * PB];
    dev.read(20, &mut four).unwrap();
    assert!(four[..PB].iter().all(|&b| b == 5) && four[3 * PB..].iter().all(|&b| b == 5));
    assert!(four[PB..3 * PB].iter().all(|&b| b == 0), "trimmed pages");
    let odd = FileOptions {
        page_bytes: 3 * 4096,
        ..FileOptions::default()
    };
    assert!(
        FileDevice::open(&path, odd).is_err(),
        "length not whole pages"
    );
}

#[test]
fn o_direct_on_tmpfs_is_refused_with_the_fix() {
    let shm = std::path::Path::new("/dev/shm");
    if !shm.is_dir() {
        eprintln!("skipping: /dev/shm does not exist");
        return;
    }
    let path = shm.join(format!("flashlab-odirect-{}", std::process::id()));
    let r = FileDevice::create(&path, 16, PB, FileOptions::default());
    let _ = std::fs::remove_file(&path);
    match r {
        Err(e) => {
            assert!(matches!(e, DevError::DirectIoUnsupported { .. }), "{e:?}");
            let msg = e.to_string();
            assert!(
                msg.contains("flashlab-odirect") && msg.contains("buffered"),
                "{msg}"
            );
        }
        Ok(_) => eprintln!("note: this kernel's tmpfs accepts O_DIRECT; nothing to check"),
    }
    // The explicit opt-in works there.
    let buffered = FileOptions {
        buffered: true,
        ..opts(8)
    };
    let mut d = FileDevice::create(&path, 16, PB, buffered).unwrap();
    d.write(1, &vec![1u8; PB], WriteHint::NONE).unwrap();
    let mut out = vec![0u8; PB];
    d.read(1, &mut out).unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(out.iter().all(|&b| b == 1));
}

#[test]
fn short_transfers_are_errors_naming_the_path_and_op() {
    let d = dir();
    let path = d.path().join("dev");
    let mut dev = FileDevice::create(&path, 16, PB, opts(8)).unwrap();
    // Shrink the file behind the device's back: reads past the new end come back short.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(8 * PB as u64)
        .unwrap();
    let mut bufs = [vec![0u8; PB], vec![0u8; PB]];
    let [a, b] = &mut bufs;
    let mut batch = [Io::Read { page: 2, buf: a }, Io::Read { page: 12, buf: b }];
    match dev.submit(&mut batch) {
        Err(DevError::ShortTransfer {
            path: p,
            op,
            got_bytes,
            expected_bytes,
        }) => {
            assert_eq!((p.as_path(), op), (path.as_path(), "io_uring I/O"));
            assert_eq!((got_bytes, expected_bytes), (0, PB));
        }
        other => panic!("expected a short-read error, got {other:?}"),
    }
    let e = dev.read(12, &mut vec![0u8; PB]).unwrap_err();
    assert!(matches!(e, DevError::Io { op: "read", .. }), "{e:?}");
    assert!(e.to_string().contains("dev"), "{e}");
}

/// `read_queued` keeps `depth` reads in flight and reads every page it is given (counted once
/// each); a page out of range ends the queue with `OutOfRange` after the reads in flight are
/// reaped, and the device then reads correctly again. The default (batches through `submit`)
/// counts alike on a RAM device.
#[test]
fn queued_reads_read_every_page_once_and_stop_at_a_bad_page() {
    let d = dir();
    let mut dev = FileDevice::create(&d.path().join("dev"), 64, PB, opts(16)).unwrap();
    for p in 0..64u64 {
        dev.write(p, &pattern(p, PB), WriteHint::NONE).unwrap();
    }
    let before = dev.stats().read_ios;
    let pages: Vec<u64> = (0..300u64).map(|i| (i * 37) % 64).collect();
    let done = dev.read_queued(&mut pages.iter().copied(), 50).unwrap();
    assert_eq!(done, 300);
    assert_eq!(dev.stats().read_ios - before, 300);
    let bad = dev.read_queued(&mut [1u64, 2, 64, 3].into_iter(), 4);
    assert!(
        matches!(bad, Err(DevError::OutOfRange { page: 64, .. })),
        "{bad:?}"
    );
    let mut out = vec![0u8; PB];
    dev.read(9, &mut out).unwrap();
    assert_eq!(out, pattern(9, PB));
    let mut mem = blockdev::MemDevice::new(PB, 64);
    assert_eq!(
        mem.read_queued(&mut (0..130u64).map(|p| p % 64), 50)
            .unwrap(),
        130
    );
    assert_eq!(mem.stats().read_ios, 130);
}
