//! A page the durable commit reaches is decoded only if its header agrees with the reference:
//! the kind the pointer expects and a version (the commit that wrote it) no newer than the
//! durable commit. A planted page with a good checksum but a wrong kind or a future version
//! is corruption naming its page and byte offset — at open, in `check`, on a read — never data.

mod common;

use blockdev::MemDevice;
use common::{key, mem, small_opts};
use engine::kv::{Options, Store};
use engine::page::{self, PageKind};
use engine::{Fault, Structure};

const PB: usize = 4096;
const PAGES: usize = 256;

/// A store image after two commits (the second rewrites key 1: a new data page and a new
/// path of index nodes to the root, all of version 2).
fn image() -> Vec<u8> {
    let mut s = Store::open(mem(PAGES as u64), small_opts()).unwrap();
    for k in 0..300u32 {
        s.put(&key(k), &[k as u8; 100]).unwrap();
    }
    s.commit().unwrap();
    s.put(&key(1), b"x").unwrap();
    s.commit().unwrap();
    assert_eq!(s.stat().commit_seq, 2);
    let mut dev = s.into_device();
    let mut img = vec![0u8; PAGES * PB];
    dev.read(0, &mut img).unwrap();
    img
}

/// Pages of `kind` written by commit 2 (the newest: every one of them is reached from it).
fn newest_pages(img: &[u8], kind: PageKind) -> Vec<usize> {
    (0..PAGES)
        .filter(|&p| {
            let h = page::open(&img[p * PB..(p + 1) * PB], p as u64);
            h.is_ok_and(|h| h.kind == kind && h.version == 2)
        })
        .collect()
}

/// `img` with page `p`'s header changed by `change` and the page sealed again (the checksum
/// is right: only the header's claims are wrong).
fn plant(img: &[u8], p: usize, change: impl Fn(&mut page::Header)) -> Vec<u8> {
    let mut bad = img.to_vec();
    let buf = &mut bad[p * PB..(p + 1) * PB];
    let mut h = page::open(buf, p as u64).unwrap();
    change(&mut h);
    page::seal(buf, &h);
    assert!(
        page::open(buf, p as u64).is_ok(),
        "the planted page's seal checks out"
    );
    bad
}

fn reopen(img: Vec<u8>) -> Result<Store, engine::EngineError> {
    let opts = Options {
        create: false,
        ..small_opts()
    };
    Store::open(Box::new(MemDevice::from_bytes(PB, img)), opts)
}

/// An index node of the newest commit claiming commit 3: opening fails naming the page and
/// the byte offset of its version field.
#[test]
fn an_index_page_from_a_future_commit_fails_open() {
    let img = image();
    let index = newest_pages(&img, PageKind::KvIndex);
    assert!(!index.is_empty());
    for &p in &index {
        let e = reopen(plant(&img, p, |h| h.version = 3))
            .err()
            .expect("a page from the future is refused");
        let c = e.corruption().expect("damage");
        assert_eq!(
            (c.structure, c.page),
            (Structure::IndexNode, Some(p as u64)),
            "{e}"
        );
        assert_eq!(c.offset, Some((p * PB + page::VERSION_AT) as u64), "{e}");
        assert_eq!(
            c.fault,
            Fault::Version {
                found: 3,
                newest: 2
            },
            "{e}"
        );
        assert!(e.to_string().contains(&format!("page {p}")), "{e}");
    }
}

/// A data page of the newest commit claiming commit 3, or holding another kind: the store
/// opens (data pages are read on demand), `check` reports the page, and reading its key fails.
#[test]
fn a_data_page_from_a_future_commit_or_of_another_kind_is_damage_not_data() {
    let img = image();
    let data = newest_pages(&img, PageKind::KvData);
    assert_eq!(data.len(), 1, "commit 2 wrote one data page");
    let p = data[0];
    let plants = [
        plant(&img, p, |h| h.version = 3),
        plant(&img, p, |h| h.kind = PageKind::KvIndex),
    ];
    for bad in plants {
        let mut s = reopen(bad).expect("data pages are read on demand");
        let damage = s.check().unwrap();
        assert!(
            damage.iter().any(|d| d.offset / PB as u64 == p as u64),
            "{damage:?}"
        );
        let e = s.get(&key(1)).expect_err("never returned as data");
        assert_eq!(e.page(), Some(p as u64), "{e}");
        assert!(e.offset().is_some_and(|o| o / PB as u64 == p as u64), "{e}");
    }
}

/// The same planted version one commit older is the durable commit itself: accepted (the
/// check is a bound, not a guess).
#[test]
fn a_page_of_the_durable_commit_is_data() {
    let img = image();
    let p = newest_pages(&img, PageKind::KvData)[0];
    let mut s = reopen(plant(&img, p, |h| h.version = 2)).unwrap();
    assert!(s.check().unwrap().is_empty());
    assert_eq!(s.get(&key(1)).unwrap().unwrap(), b"x".to_vec());
}
