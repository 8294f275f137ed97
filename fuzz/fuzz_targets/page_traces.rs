//! Every page-reference decoder (buffer-sim traces) on arbitrary bytes: references or an
//! error, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    workload::cache_trace::fuzz_decode(data, 100_000);
});
