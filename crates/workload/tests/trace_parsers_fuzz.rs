//! Fuzzing the trace parsers with proptest: arbitrary text and mutations of valid lines never
//! panic; every line either parses to a record with sane fields, is skipped, or is an error
//! with a reason. (A libFuzzer target over the same entry point lives in `fuzz/`.)

use proptest::prelude::*;
use workload::trace::{map_record, parse_line};
use workload::{LbaMapping, Target, TraceFormat};

const VALID: [(TraceFormat, &str); 6] = [
    (
        TraceFormat::Msr,
        "128166385295514663,hm,0,Write,9056014336,2048,2833",
    ),
    (TraceFormat::Spc, "0,20941264,8192,W,0.551706"),
    (TraceFormat::Disksim, "938513000 4 264719034 16 0"),
    (
        TraceFormat::Systor,
        "1456095145.133076000,0.000806000,R,0,899056122368,131072",
    ),
    (TraceFormat::Tencent, "1538323200,4247200,128,1,1058"),
    (
        TraceFormat::Blkparse,
        "39949 D write 299008 4096 0.000000000 0 False",
    ),
];

fn check(format: TraceFormat, line: &str) {
    if let Ok(Some(r)) = parse_line(format, line) {
        assert!(r.size_bytes > 0);
        for mapping in [LbaMapping::Wrap, LbaMapping::Scale { max_byte: 1 << 40 }] {
            let t = Target {
                logical_pages: 1000,
                page_bytes: 4096,
            };
            let m = map_record(&r, t, mapping);
            assert!(m.pages >= 1 && m.lpn + m.pages as u64 <= 1000);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_text_never_panics(line in ".{0,120}", f in 0usize..6) {
        check(TraceFormat::ALL[f], &line);
    }

    #[test]
    fn mutated_valid_lines_never_panic(
        which in 0usize..6,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<char>()), 1..6),
    ) {
        let (format, line) = VALID[which];
        let mut chars: Vec<char> = line.chars().collect();
        for (i, c) in edits {
            let at = i.index(chars.len());
            chars[at] = c;
        }
        check(format, &chars.into_iter().collect::<String>());
    }

    #[test]
    fn huge_numbers_are_errors_or_records_not_overflows(off in any::<u64>(), size in any::<u64>()) {
        check(TraceFormat::Msr, &format!("1,hm,0,Write,{off},{size},1"));
        check(TraceFormat::Tencent, &format!("1,{off},{size},1,1"));
        check(TraceFormat::Disksim, &format!("1 0 {off} {size} 0"));
    }
}
