//! The engine's page decoder on arbitrary bytes: an error or a header that fits the page.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(h) = engine::page::open(data, 0) {
        assert!(engine::page::HEADER_BYTES + h.len as usize <= data.len());
        let _ = engine::page::payload(data, &h);
    }
});
