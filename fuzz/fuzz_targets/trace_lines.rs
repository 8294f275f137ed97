//! Every trace parser on arbitrary bytes: never a panic; records map inside the device.
#![no_main]
use libfuzzer_sys::fuzz_target;
use workload::trace::{map_record, parse_line, Mapped};
use workload::{LbaMapping, Target, TraceFormat};

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let format = TraceFormat::ALL[sel as usize % TraceFormat::ALL.len()];
    for line in text.lines() {
        if let Ok(Some(r)) = parse_line(format, line) {
            let t = Target {
                logical_pages: 4096,
                page_bytes: 4096,
            };
            for m in [LbaMapping::Wrap, LbaMapping::Scale { max_byte: 1 << 40 }] {
                let Mapped { lpn, pages, .. } = map_record(&r, t, m);
                assert!(pages >= 1 && lpn + pages as u64 <= 4096);
            }
        }
    }
});
