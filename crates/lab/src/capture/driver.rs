//! The TPC-C driver: terminals that each run the five transactions in the standard mix
//! (TPC-C 5.11 clause 5.2.3 minimums, as BenchmarkSQL weights them: New-Order 45 %,
//! Payment 43 %, Order-Status, Delivery and Stock-Level 4 % each), with the clause 2.x input
//! generation (NURand for customers and items, 1 % remote order lines, 15 % remote payments,
//! 60 % by last name, 1 % New-Order rollbacks), and no keying or think time (as P3's
//! BenchmarkSQL runs: the trace is the database's reference stream, not the terminals' pace).
//!
//! Each terminal is one `psql` process fed one `SELECT tpcc_...(...)` per transaction; the
//! transaction profiles are PL/pgSQL functions (`tpcc_procs.sql`) that always answer with
//! one row. Why psql and not a Rust client crate: the capture already needs the PostgreSQL
//! client tools (initdb, pg_ctl), psql is the protocol implementation PostgreSQL ships and
//! tests, and it adds no crate (and no async runtime) to every flashlab build; one call per
//! transaction keeps its cost to one round trip, the same as a prepared statement.

use super::CaptureError;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The run-time constants C of NURand (clause 2.1.6; 2.1.6.1 asks C_LAST's run value to
/// differ from the load's 157 within a range, which 223 does).
const C_LAST_RUN: u32 = 223;
const C_ID: u32 = 259;
const OL_I_ID: u32 = 7911;

/// One terminal's transaction counts.
#[derive(Clone, Copy, Debug, Default)]
pub struct TerminalCounts {
    pub transactions: u64,
    pub new_orders: u64,
    pub rollbacks: u64,
    pub errors: u64,
}

fn nurand(rng: &mut ChaCha8Rng, a: u32, x: u32, y: u32, c: u32) -> u32 {
    (((rng.gen_range(0..=a) | rng.gen_range(x..=y)) + c) % (y - x + 1)) + x
}

fn last_name(n: u32) -> String {
    const S: [&str; 10] = [
        "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
    ];
    format!(
        "{}{}{}",
        S[(n / 100) as usize],
        S[(n / 10 % 10) as usize],
        S[(n % 10) as usize]
    )
}

/// A customer by id (40 %) or by last name (60 %): `(c_id, 'LAST' or NULL)`.
fn customer(rng: &mut ChaCha8Rng) -> (u32, String) {
    if rng.gen_range(0..100) < 60 {
        let last = last_name(nurand(rng, 255, 0, 999, C_LAST_RUN));
        (0, format!("'{last}'"))
    } else {
        (nurand(rng, 1023, 1, 3000, C_ID), "NULL".into())
    }
}

/// Another warehouse than `w` (or `w` when there is one).
fn other_warehouse(rng: &mut ChaCha8Rng, w: u32, warehouses: u32) -> u32 {
    if warehouses == 1 {
        return w;
    }
    let o = rng.gen_range(1..warehouses);
    if o >= w {
        o + 1
    } else {
        o
    }
}

/// The SQL of the next transaction of a terminal whose home warehouse is `w`.
pub fn next_transaction(rng: &mut ChaCha8Rng, w: u32, warehouses: u32) -> String {
    let d = rng.gen_range(1..=10u32);
    match rng.gen_range(0..100u32) {
        0..=44 => new_order(rng, w, d, warehouses),
        45..=87 => {
            let (cw, cd) = if rng.gen_range(0..100) < 85 {
                (w, d)
            } else {
                (other_warehouse(rng, w, warehouses), rng.gen_range(1..=10))
            };
            let (c, last) = customer(rng);
            let amount = rng.gen_range(100..=500_000u32) as f64 / 100.0;
            format!("SELECT tpcc_payment({w},{d},{cw},{cd},{c},{last},{amount:.2});\n")
        }
        88..=91 => {
            let (c, last) = customer(rng);
            format!("SELECT tpcc_order_status({w},{d},{c},{last});\n")
        }
        92..=95 => format!("SELECT tpcc_delivery({w},{});\n", rng.gen_range(1..=10)),
        _ => format!(
            "SELECT tpcc_stock_level({w},{d},{});\n",
            rng.gen_range(10..=20)
        ),
    }
}

fn new_order(rng: &mut ChaCha8Rng, w: u32, d: u32, warehouses: u32) -> String {
    let c = nurand(rng, 1023, 1, 3000, C_ID);
    let n = rng.gen_range(5..=15usize);
    let rollback = rng.gen_range(0..100) == 0;
    let mut lines: Vec<(u32, u32, u32)> = (0..n)
        .map(|_| {
            let supply = if rng.gen_range(0..100) == 0 {
                other_warehouse(rng, w, warehouses)
            } else {
                w
            };
            (
                nurand(rng, 8191, 1, 100_000, OL_I_ID),
                supply,
                rng.gen_range(1..=10),
            )
        })
        .collect();
    lines.sort_unstable();
    if rollback {
        lines[n - 1].0 = 100_001; // 2.4.1.5: the last item is unused
    }
    let list = |f: fn(&(u32, u32, u32)) -> u32| {
        lines
            .iter()
            .map(|l| f(l).to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    format!(
        "SELECT tpcc_new_order({w},{d},{c},ARRAY[{}],ARRAY[{}],ARRAY[{}]);\n",
        list(|l| l.0),
        list(|l| l.1),
        list(|l| l.2)
    )
}

/// Run one terminal on `psql` for `duration`: one transaction at a time, each answer read
/// before the next is sent.
pub fn run_terminal(
    mut psql: Command,
    seed: u64,
    w: u32,
    warehouses: u32,
    duration: Duration,
) -> Result<TerminalCounts, CaptureError> {
    assert!((1..=warehouses).contains(&w));
    let mut child = psql
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|source| CaptureError::Spawn {
            program: "psql".into(),
            source,
        })?;
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(CaptureError::Cluster("psql without pipes".into()));
    };
    let mut answers = BufReader::new(stdout).lines();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut counts = TerminalCounts::default();
    let start = Instant::now();
    while start.elapsed() < duration {
        let tx = next_transaction(&mut rng, w, warehouses);
        let lost = |e| CaptureError::Io {
            what: "a psql terminal".into(),
            source: e,
        };
        stdin.write_all(tx.as_bytes()).map_err(lost)?;
        stdin.flush().map_err(lost)?;
        let answer = match answers.next() {
            Some(a) => a.map_err(lost)?,
            None => return Err(CaptureError::Cluster("a psql terminal ended early".into())),
        };
        counts.transactions += 1;
        counts.new_orders += tx.contains("tpcc_new_order") as u64;
        counts.rollbacks += (answer == "rollback") as u64;
        counts.errors += answer.starts_with("error") as u64;
    }
    drop(stdin);
    let _ = child.wait();
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mix_and_inputs_follow_the_specification() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let txs: Vec<String> = (0..20_000)
            .map(|_| next_transaction(&mut rng, 2, 3))
            .collect();
        let share =
            |name: &str| txs.iter().filter(|t| t.contains(name)).count() as f64 / txs.len() as f64;
        assert!((share("new_order") - 0.45).abs() < 0.015);
        assert!((share("payment") - 0.43).abs() < 0.015);
        for name in ["order_status", "delivery", "stock_level"] {
            assert!((share(name) - 0.04).abs() < 0.006, "{name}");
        }
        let rollbacks = txs.iter().filter(|t| t.contains("100001")).count() as f64;
        assert!((rollbacks / (share("new_order") * 20_000.0) - 0.01).abs() < 0.005);
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        for _ in 0..1000 {
            assert!((1..=3000).contains(&nurand(&mut rng, 1023, 1, 3000, C_ID)));
            assert_ne!(other_warehouse(&mut rng, 2, 3), 2);
        }
    }
}
