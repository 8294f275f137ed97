//! `HostPort::write_pages` (a run of one-page writes in one call: the fast path `flashlab sim`
//! takes for single-page writes) against the general path, `HostPort::submit` of one
//! `Command::Write` per page: random op mixes (runs, multi-page writes, reads, trims, pages
//! past the end, a stream the device lacks) on every FTL scheme, timed and untimed, at queue
//! depth 1 and 4. Both ports must give the same results and errors op by op, and end with
//! the same counters, clock, per-stream counts, latencies and tags on every page (timed:
//! with and without a host link, an acknowledgement time and a write cache; at depth 1
//! without link or cache a timed run takes its closed-loop clock).

mod common;

use proptest::prelude::*;
use ssd::host::{Command, HostPort};
use ssd::{DataMode, FtlKind, GcPolicy, GcVictimScope, Lpn, ReadPage, Ssd, StreamId};

#[derive(Clone, Debug)]
enum Op {
    /// One-page writes at these pages, on one stream.
    Run {
        lpns: Vec<u64>,
        stream: u16,
    },
    Write {
        lpn: u64,
        pages: u32,
        stream: u16,
    },
    Read {
        lpn: u64,
        pages: u32,
    },
    Trim {
        lpn: u64,
        pages: u32,
    },
}

/// Pages a little past the device's end, so that some requests fail their range check.
fn op_strategy(logical: u64) -> impl Strategy<Value = Op> {
    let lpn = 0..logical + 2;
    // Stream 2 does not exist (the devices have 2): its writes fail.
    let stream = prop_oneof![8 => 0u16..2, 1 => Just(2u16)];
    prop_oneof![
        6 => (prop::collection::vec(lpn.clone(), 0..40), stream.clone())
            .prop_map(|(lpns, stream)| Op::Run { lpns, stream }),
        2 => (lpn.clone(), 1u32..4, stream).prop_map(|(lpn, pages, stream)| Op::Write { lpn, pages, stream }),
        1 => (lpn.clone(), 1u32..4).prop_map(|(lpn, pages)| Op::Read { lpn, pages }),
        1 => (lpn, 1u32..3).prop_map(|(lpn, pages)| Op::Trim { lpn, pages }),
    ]
}

/// How a timed device's host interface is set up: a write cache of `cache` pages, a link
/// (600 MB/s, 2 us a command) or none, and an acknowledgement time; with `fine_ns`, flash
/// operations of a few hundred ns, so that most latencies fall in the histogram's 1 ns
/// buckets (below 2,048 ns) and a latency off by a few ns changes the counts.
#[derive(Clone, Copy, Debug)]
struct Iface {
    cache: u32,
    link: bool,
    ack_ns: u64,
    fine_ns: bool,
}

fn iface() -> impl Strategy<Value = Iface> {
    (
        prop::sample::select(vec![0u32, 3]),
        any::<bool>(),
        prop::sample::select(vec![0u64, 301]),
        any::<bool>(),
    )
        .prop_map(|(cache, link, ack_ns, fine_ns)| Iface {
            cache,
            link,
            ack_ns,
            fine_ns,
        })
}

/// A device of scheme `kind` with GC `policy`; the page FTL's two streams take their GC
/// victims per stream when `victims_per_stream` (the victim index's grouped page loop).
fn port(
    kind: FtlKind,
    (policy, victims_per_stream): (GcPolicy, bool),
    timing: bool,
    qd: u32,
    iface: Iface,
) -> HostPort {
    let mut cfg = common::tiny(kind);
    cfg.ftl.check_invariants = false; // else every run takes the general path
    cfg.ftl.data = DataMode::Tags;
    cfg.ftl.gc_policy = policy;
    cfg.ftl.streams = if kind == FtlKind::Page { 2 } else { 1 };
    if kind == FtlKind::Page && victims_per_stream {
        cfg.ftl.gc_victim = GcVictimScope::Stream;
    }
    cfg.timing.enabled = timing;
    // A write cache (timed): requests complete at their pages' slots, which free as pages
    // program.
    cfg.timing.write_cache_pages = iface.cache;
    (cfg.timing.host_mb_per_s, cfg.timing.t_cmd_ns) = match iface.link {
        true => (600.0, 2_000),
        false => (0.0, 0),
    };
    cfg.timing.t_write_ack_ns = iface.ack_ns;
    if iface.fine_ns {
        // 512 B pages at 1,000 MB/s: 512 ns on the channel.
        (
            cfg.timing.t_read_ns,
            cfg.timing.t_prog_ns,
            cfg.timing.t_erase_ns,
        ) = (37, 211, 1_013);
        cfg.timing.channel_mb_per_s = 1_000.0;
    }
    HostPort::new(Ssd::new(cfg).expect("a tiny device"), qd)
}

/// Run `op` on `p`, a run through `write_pages` when `fast`, else page by page.
fn apply(p: &mut HostPort, op: &Op, fast: bool) -> Result<(), String> {
    let cmd = |c: Command<'_>, p: &mut HostPort| p.submit(c, None).map(|_| ());
    let r = match op {
        Op::Run { lpns, stream } if fast => p.write_pages(lpns, StreamId(*stream)),
        Op::Run { lpns, stream } => lpns.iter().try_for_each(|&lpn| {
            let pages = 1;
            let stream = StreamId(*stream);
            cmd(
                Command::Write {
                    lpn: Lpn(lpn),
                    pages,
                    stream,
                },
                p,
            )
        }),
        &Op::Write { lpn, pages, stream } => {
            let stream = StreamId(stream);
            cmd(
                Command::Write {
                    lpn: Lpn(lpn),
                    pages,
                    stream,
                },
                p,
            )
        }
        &Op::Read { lpn, pages } => cmd(
            Command::Read {
                lpn: Lpn(lpn),
                pages,
            },
            p,
        ),
        &Op::Trim { lpn, pages } => cmd(
            Command::Trim {
                lpn: Lpn(lpn),
                pages,
            },
            p,
        ),
    };
    r.map_err(|e| format!("{e:?}"))
}

fn tags(p: &mut HostPort) -> Vec<ReadPage> {
    let mut out = vec![ReadPage::Unwritten; p.ssd().logical_pages() as usize];
    let read = Command::ReadTags {
        lpn: Lpn(0),
        out: &mut out,
    };
    p.submit(read, None).expect("a read of the whole device");
    out
}

fn scheme() -> impl Strategy<Value = FtlKind> {
    prop::sample::select(FtlKind::ALL.to_vec())
}

/// A GC policy, and whether victims are taken per stream.
fn policy() -> impl Strategy<Value = (GcPolicy, bool)> {
    let policy = prop::sample::select(vec![
        GcPolicy::Greedy,
        GcPolicy::Fifo,
        GcPolicy::CostBenefit,
    ]);
    (policy, any::<bool>())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_run_of_page_writes_is_the_same_as_its_requests_one_by_one(
        kind in scheme(),
        policy in policy(),
        timing in any::<bool>(),
        qd in prop::sample::select(vec![1u32, 4]),
        iface in iface(),
        ops in prop::collection::vec(op_strategy(358), 1..60),
    ) {
        let (mut fast, mut slow) = (port(kind, policy, timing, qd, iface), port(kind, policy, timing, qd, iface));
        prop_assert!(fast.ssd().logical_pages() < 360, "some pages past the end");
        for (i, op) in ops.iter().enumerate() {
            let (a, b) = (apply(&mut fast, op, true), apply(&mut slow, op, false));
            prop_assert_eq!(&a, &b, "op {} {:?}", i, op);
            prop_assert_eq!(fast.ssd().stats(), slow.ssd().stats(), "op {} {:?}", i, op);
            prop_assert_eq!(fast.last_done(), slow.last_done(), "op {}", i);
            if a.is_err() && a.as_ref().err().is_some_and(|e| !e.contains("OutOfRange") && !e.contains("NoSuchStream")) {
                break; // the device refused (full): both stop here
            }
        }
        prop_assert_eq!(
            fast.ssd().host_pages_written_by_stream(),
            slow.ssd().host_pages_written_by_stream()
        );
        prop_assert_eq!(tags(&mut fast), tags(&mut slow));
        prop_assert_eq!(fast.ssd().stats(), slow.ssd().stats());
        prop_assert_eq!(fast.last_done(), slow.last_done());
        // Every request's latency (timed runs complete each request through the run's clock).
        prop_assert!(fast.ssd().latency_ns() == slow.ssd().latency_ns(), "latencies");
        fast.ssd().verify().expect("the fast port's FTL invariants");
    }
}
