//! Damage to a committed KV store, page by page: a flipped or torn page of every type is
//! detected (never returned as data), a flipped byte in the newest commit's header is an error
//! naming its page and offset (damage to a durable commit, not a torn write), a torn tail
//! write rolls back to the previous commit, a flipped document names its page.

mod common;

use blockdev::MemDevice;
use common::{key, mem, small_opts};
use engine::kv::{Options, Store};

fn image(commits: u32) -> Vec<u8> {
    let mut s = Store::open(mem(256), small_opts()).unwrap();
    for k in 0..300u32 {
        s.put(&key(k), &[k as u8; 100]).unwrap();
    }
    s.commit().unwrap();
    for _ in 1..commits {
        s.put(&key(1), b"x").unwrap();
        s.commit().unwrap();
    }
    let mut dev = s.into_device();
    let mut img = vec![0u8; 256 * 4096];
    dev.read(0, &mut img).unwrap();
    img
}

/// Flip a byte in, or tear, each page of each type of a committed store: opening falls back
/// to the previous commit, or `check` reports the page, or reading fails — never wrong data.
#[test]
fn a_flipped_or_torn_page_of_every_type_is_detected() {
    let img = image(1);
    let kind_of = |p: usize| img[p * 4096 + 4];
    for (kind, name) in [
        (0x10u8, "superblock"),
        (0x11, "header"),
        (0x12, "index"),
        (0x13, "data"),
    ] {
        let pages: Vec<usize> = (0..256).filter(|&p| kind_of(p) == kind).collect();
        assert!(!pages.is_empty(), "{name}");
        for tear in [false, true] {
            for &p in &pages {
                let mut bad = img.clone();
                if tear {
                    bad[p * 4096 + 2048..(p + 1) * 4096].fill(0xA5);
                } else {
                    bad[p * 4096 + 32 + 20] ^= 0x10;
                }
                let dev = Box::new(MemDevice::from_bytes(4096, bad));
                let detected = match Store::open(dev, small_opts()) {
                    Err(_) => true,
                    Ok(mut s) => {
                        let fell_back = s.stat().commit_seq < 1;
                        let damage = s.check().unwrap();
                        let reads_fail = (0..300).any(|k| s.get(&key(k)).is_err());
                        if !fell_back && damage.is_empty() {
                            // Every value still reads right: the damage must have been seen.
                            for k in 0..300u32 {
                                if let Ok(Some(v)) = s.get(&key(k)) {
                                    assert_eq!(
                                        v,
                                        vec![k as u8; 100],
                                        "{name} page {p}: wrong data"
                                    );
                                }
                            }
                        }
                        fell_back || !damage.is_empty() || reads_fail
                    }
                };
                assert!(detected, "{name} page {p} tear {tear}");
            }
        }
    }
}

/// The page of the newest DB header in `img`.
fn newest_header_page(img: &[u8]) -> usize {
    let kind_of = |p: usize| img[p * 4096 + 4];
    let seq = |p: usize| u64::from_le_bytes(img[p * 4096 + 40..p * 4096 + 48].try_into().unwrap());
    let hp: Vec<usize> = (0..256).filter(|&p| kind_of(p) == 0x11).collect();
    *hp.iter().max_by_key(|&&p| seq(p)).unwrap()
}

/// One flipped byte in the newest commit's header, whose superblock is intact: damage to a
/// durable commit. Opening fails naming the page and its byte offset (never a silent
/// rollback to the previous commit), for a byte in the header's fields and past them.
#[test]
fn a_flipped_byte_in_the_newest_header_is_an_error_naming_page_and_offset() {
    let img = image(2);
    let newest = newest_header_page(&img);
    for at in [32 + 20, 3000] {
        let mut bad = img.clone();
        bad[newest * 4096 + at] ^= 1;
        let dev = Box::new(MemDevice::from_bytes(4096, bad));
        let e = match Store::open(
            dev,
            Options {
                create: false,
                ..small_opts()
            },
        ) {
            Err(e) => {
                // The byte offset is structured too: the seal's page, or the damaged field.
                let off = e.offset().expect("damage names its offset");
                assert_eq!(off / 4096, newest as u64, "{e}");
                e.to_string()
            }
            Ok(s) => panic!(
                "opened at commit {} with a damaged newest header",
                s.stat().commit_seq
            ),
        };
        assert!(
            e.contains(&format!("at page {newest} (byte {})", newest * 4096)),
            "{e}"
        );
        assert!(
            e.contains("commit 2") && e.contains("not a torn write"),
            "{e}"
        );
    }
}

/// A torn tail write (the newest header torn before its superblock slot was written, or the
/// slot write itself torn) rolls back to the previous commit without an error.
#[test]
fn a_torn_tail_write_rolls_back_to_the_previous_commit() {
    let (one, two) = (image(1), image(2));
    let newest = newest_header_page(&two);
    // Header torn, slot 0 still as commit 1 left it (commit 2 writes slot 0).
    let mut torn = two.clone();
    torn[newest * 4096 + 2048..(newest + 1) * 4096].fill(0xA5);
    torn[..4096].copy_from_slice(&one[..4096]);
    // The slot write itself torn inside the superblock (its tail as commit 0 left it).
    let mut torn_slot = two.clone();
    torn_slot[48..4096].copy_from_slice(&one[48..4096]);
    for img in [torn, torn_slot] {
        let mut s = Store::open(Box::new(MemDevice::from_bytes(4096, img)), small_opts()).unwrap();
        assert_eq!(s.stat().commit_seq, 1);
        assert_eq!(s.get(&key(1)).unwrap().unwrap(), vec![1u8; 100]);
    }
}

#[test]
fn a_flipped_document_names_its_page() {
    let img = image(2);
    let kind_of = |p: usize| img[p * 4096 + 4];
    // A flipped data byte is an error naming the page, never data.
    let dp: Vec<usize> = (0..256).filter(|&p| kind_of(p) == 0x13).collect();
    let mut bad = img.clone();
    bad[dp[0] * 4096 + 100] ^= 4;
    let mut s = Store::open(Box::new(MemDevice::from_bytes(4096, bad)), small_opts()).unwrap();
    let errs: Vec<String> = (0..300)
        .filter_map(|k| s.get(&key(k)).err().map(|e| e.to_string()))
        .collect();
    assert!(!errs.is_empty());
    assert!(errs[0].contains(&format!("page {}", dp[0])), "{}", errs[0]);
    let damage = s.check().unwrap();
    assert!(
        damage.iter().any(|d| d.offset / 4096 == dp[0] as u64),
        "{damage:?}"
    );
}
