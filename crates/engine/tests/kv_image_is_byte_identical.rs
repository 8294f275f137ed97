//! A whole store image, byte for byte: a fixed run of puts, deletes, commits and a compaction
//! pass on a memory device hashes to the value the format had when this test was written.

use blockdev::MemDevice;
use engine::kv::{Options, Store};

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    })
}

#[test]
fn a_fixed_run_writes_the_same_image() {
    let opts = Options {
        cache_pages: 64,
        compact_min_bytes: 4096,
        compact_threshold: 0.3,
        ..Options::default()
    };
    let mut s = Store::open(Box::new(MemDevice::new(4096, 512)), opts).unwrap();
    let mut x = 7u64;
    for c in 0..40u64 {
        for _ in 0..50 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let k = format!("key{:05}", (x >> 33) % 700);
            if (x >> 20).is_multiple_of(7) {
                s.delete(k.as_bytes()).unwrap();
            } else {
                let v = vec![(x >> 40) as u8; 20 + ((x >> 12) % 900) as usize];
                s.put(k.as_bytes(), &v).unwrap();
            }
        }
        if c == 30 {
            s.compact().unwrap();
        }
        s.commit().unwrap();
    }
    let mut dev = s.close().unwrap();
    let mut img = vec![0u8; 512 * 4096];
    dev.read(0, &mut img).unwrap();
    assert_eq!(
        fnv(&img),
        0x2a602de3603cf0c6,
        "the store image changed: a format change?"
    );
}
