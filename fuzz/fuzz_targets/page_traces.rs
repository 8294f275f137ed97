//! Every page-reference decoder (buffer-sim traces) on arbitrary bytes: references or an
//! error, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use workload::cache_trace::{PageRefs, PageTraceFormat};
use workload::TraceFormat;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let mut formats = vec![
        PageTraceFormat::Text,
        PageTraceFormat::Arc,
        PageTraceFormat::Lirs,
        PageTraceFormat::U32Be,
        PageTraceFormat::U32Le,
        PageTraceFormat::U64Be,
    ];
    formats.extend(TraceFormat::ALL.map(PageTraceFormat::Block));
    let format = formats[sel as usize % formats.len()];
    let input = Box::new(std::io::Cursor::new(rest.to_vec()));
    // An ARC line may reference up to 2^32 blocks: a bounded prefix of the stream is enough.
    for r in PageRefs::from_reader(Path::new("fuzz"), input, format, 4096).take(100_000) {
        if r.is_err() {
            break;
        }
    }
});
