//! A TPC-C-like page-reference generator (seeded, streaming, constant memory): the logical page
//! reads and writes a database's buffer manager would see running the TPC-C mix — what P3
//! traced in PostgreSQL's `ReadBuffer()`.
//!
//! How it follows the TPC-C specification (rev. 5.11):
//! - the nine tables with their initial cardinalities per warehouse (clause 1.2 and 4.3):
//!   WAREHOUSE 1, DISTRICT 10, CUSTOMER 30 000, HISTORY 30 000, ORDER 30 000, NEW-ORDER 9 000
//!   (orders 2101..3000 of each district), ORDER-LINE ~300 000 (5..15 per order), STOCK
//!   100 000, and ITEM 100 000 (shared); row sizes from clause 1.3 plus PostgreSQL's 28 bytes
//!   of tuple overhead, packed in 4 KiB pages with a 24-byte page header;
//! - a primary-key B+-tree per table (HISTORY has none), plus CUSTOMER's (w, d, last name)
//!   index and ORDER's (w, d, customer) index; every row access walks root -> leaf, then
//!   touches the heap page;
//! - the five transactions in the standard mix — New-Order 45 %, Payment 43 %, Order-Status,
//!   Delivery and Stock-Level 4 % each — with their reads, updates (writes) and inserts
//!   (writes to the heap page and the index leaf) as in clauses 2.4 to 2.8;
//! - NURand skew (clause 2.1.6): customer ids NURand(1023, 1, 3000), item ids
//!   NURand(8191, 1, 100000), last names NURand(255, 0, 999), with per-run constants C;
//!   remote warehouses for 1 % of order lines and 15 % of payments;
//! - growing tables: ORDER, NEW-ORDER and ORDER-LINE grow at each district's end, HISTORY at
//!   its heap's end; Delivery removes each district's oldest NEW-ORDER.
//!
//! What it simplifies (so that memory stays O(warehouses)):
//! - tables growing per district are clustered by primary key (each district's rows in its own
//!   reserved range of pages; PostgreSQL appends to one heap end), and ORDER-LINE reserves 15
//!   slots per order (the maximum), so its pages are ~2/3 full;
//! - an order's attributes (customer, line count, items, supply warehouses) are a hash of
//!   (seed, warehouse, district, order), so later transactions see the same order without it
//!   being stored;
//! - a last name maps to customers `n+1`, `n+1001`, `n+2001` of the district (3 per name, the
//!   middle one is chosen); Order-Status reads a recent order of the district rather than the
//!   customer's own latest; B+-tree nodes never split (growth extends the leaf level, the upper
//!   levels keep the initial height);
//! - no rollbacks, no think times, no log or undo pages (data and index pages only).
//!
//! Page ids: `(object << 40) | page`, object = table or index (index levels `<< 36` apart).

use crate::cache_trace::PageRef;
use std::collections::VecDeque;

const PAGE_BYTES: u64 = 4096;
const PAGE_USABLE: u64 = PAGE_BYTES - 24;
const TUPLE_OVERHEAD: u64 = 28;
/// Index entry: key (<= 16 bytes) + item pointer and tuple header.
const INDEX_ENTRY_BYTES: u64 = 24;
const FANOUT: u64 = PAGE_USABLE / INDEX_ENTRY_BYTES;
const DISTRICTS: u64 = 10;
const CUSTOMERS: u64 = 3000;
const ITEMS: u64 = 100_000;
const INITIAL_ORDERS: u64 = 3000;
const FIRST_NEW_ORDER: u64 = 2101;
const LINES_MAX: u64 = 15;

/// The generator's knobs. `warehouses`, `transactions` and `seed` size and seed the run; `mix`,
/// `item_a` and `customer_a` change what it references (docs/p3-generator.md shows which of P3's
/// claims turn on which): the defaults are TPC-C's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TpccConfig {
    pub warehouses: u32,
    /// Transactions to generate (None: endless).
    pub transactions: Option<u64>,
    pub seed: u64,
    /// Weights of New-Order, Payment, Order-Status, Delivery and Stock-Level (clause 5.2.3's
    /// minimum mix: 45:43:4:4:4). Order-Status and Stock-Level are read-only, so their share
    /// sets the dirty share of the references.
    pub mix: [u8; 5],
    /// NURand's A for item ids (clause 2.1.6: 8191): the hot set of ITEM and STOCK. 0 makes the
    /// choice uniform; a smaller A (a power of two minus one) gives a weaker hot set.
    pub item_a: u32,
    /// NURand's A for customer ids (clause 2.1.6: 1023), as `item_a` for CUSTOMER.
    pub customer_a: u32,
}

impl Default for TpccConfig {
    /// 13 warehouses: an initial database of about 1.5 GB (P3's), see [`Tpcc::database_pages`].
    fn default() -> Self {
        TpccConfig {
            warehouses: 13,
            transactions: Some(1_000_000),
            seed: 1,
            mix: TpccConfig::STANDARD_MIX,
            item_a: 8191,
            customer_a: 1023,
        }
    }
}

impl TpccConfig {
    /// TPC-C's mix (clause 5.2.3): New-Order 45, Payment 43, the other three 4 each.
    pub const STANDARD_MIX: [u8; 5] = [45, 43, 4, 4, 4];
    /// The keys [`TpccConfig::parse`] takes.
    pub const KEYS: &'static str = "warehouses, transactions, seed, mix, item_a, customer_a";

    /// `warehouses=16,transactions=100000,seed=1,mix=45:43:4:4:4,item_a=8191,customer_a=1023`
    /// (any subset, any order; `-` or empty: the defaults; `transactions=0` means endless).
    pub fn parse(s: &str) -> Result<TpccConfig, String> {
        let mut c = TpccConfig::default();
        for part in s
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty() && *p != "-")
        {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("tpcc `{part}`: expected key=value"))?;
            if k.trim() == "mix" {
                c.mix = parse_mix(v.trim())?;
                continue;
            }
            let n: u64 = v
                .trim()
                .parse()
                .map_err(|_| format!("tpcc {k}=`{v}` is not an unsigned integer"))?;
            match k.trim() {
                "warehouses" | "w" => {
                    if n == 0 || n > 100_000 {
                        return Err(format!("tpcc warehouses={n}: expected 1..=100000"));
                    }
                    c.warehouses = n as u32;
                }
                "transactions" | "tx" => c.transactions = (n > 0).then_some(n),
                "seed" => c.seed = n,
                "item_a" => c.item_a = nurand_a("item_a", n, ITEMS)?,
                "customer_a" => c.customer_a = nurand_a("customer_a", n, CUSTOMERS)?,
                other => {
                    return Err(format!(
                        "tpcc: unknown key `{other}` ({})",
                        TpccConfig::KEYS
                    ))
                }
            }
        }
        Ok(c)
    }

    /// Share of read-only transactions (Order-Status and Stock-Level) in the mix.
    pub fn read_only_share(&self) -> f64 {
        let total: u32 = self.mix.iter().map(|&w| w as u32).sum();
        (self.mix[2] as u32 + self.mix[4] as u32) as f64 / total as f64
    }
}

/// `45:43:4:4:4`: five weights (0..=100 each, not all zero).
fn parse_mix(v: &str) -> Result<[u8; 5], String> {
    let parts: Vec<&str> = v.split(':').collect();
    if parts.len() != 5 {
        return Err(format!(
            "tpcc mix=`{v}`: expected five weights N:N:N:N:N (New-Order, Payment, Order-Status, Delivery, Stock-Level), e.g. 45:43:4:4:4"
        ));
    }
    let mut mix = [0u8; 5];
    for (slot, p) in mix.iter_mut().zip(&parts) {
        *slot = p
            .trim()
            .parse::<u8>()
            .ok()
            .filter(|w| *w <= 100)
            .ok_or_else(|| format!("tpcc mix=`{v}`: weight `{p}` is not 0..=100"))?;
    }
    if mix.iter().all(|&w| w == 0) {
        return Err(format!("tpcc mix=`{v}`: at least one weight must be > 0"));
    }
    Ok(mix)
}

/// NURand's A: below the id range it picks from (TPC-C uses 2^k - 1; any value is accepted).
fn nurand_a(key: &str, n: u64, range: u64) -> Result<u32, String> {
    if n >= range {
        return Err(format!(
            "tpcc {key}={n}: expected 0..{range} (0: uniform ids, no hot set)"
        ));
    }
    Ok(n as u32)
}

/// A table's heap and B+-tree shape.
#[derive(Clone, Copy)]
struct Table {
    heap: u64,
    index: u64,
    rows_per_page: u64,
    height: u32,
}

impl Table {
    fn new(object: u64, row_bytes: u64, initial_rows: u64) -> Table {
        let rows_per_page = PAGE_USABLE / (row_bytes + TUPLE_OVERHEAD);
        let mut height = 1;
        let mut pages = initial_rows.div_ceil(FANOUT);
        while pages > 1 {
            pages = pages.div_ceil(FANOUT);
            height += 1;
        }
        Table {
            heap: object << 40,
            index: (object + 100) << 40,
            rows_per_page,
            height,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    Read,
    Update,
    Insert,
    Delete,
}

/// Per district: the next order id and the oldest undelivered one.
#[derive(Clone, Copy)]
struct District {
    next_order: u64,
    oldest_new_order: u64,
}

/// The generator; see the module docs.
pub struct Tpcc {
    config: TpccConfig,
    rng: SplitMix,
    c_last: u64,
    c_id: u64,
    ol_i_id: u64,
    districts: Vec<District>,
    history_rows: u64,
    /// Orders reserved per district (ranks), so districts never overlap.
    order_cap: u64,
    t: Tables,
    queue: VecDeque<PageRef>,
    done: u64,
    /// Transactions generated, by kind (order of [`Tpcc::KINDS`]).
    by_kind: [u64; 5],
}

struct Tables {
    warehouse: Table,
    district: Table,
    customer: Table,
    customer_name: Table,
    history: Table,
    new_order: Table,
    order: Table,
    order_customer: Table,
    order_line: Table,
    item: Table,
    stock: Table,
}

impl Tables {
    fn new(w: u64) -> Tables {
        let orders = w * DISTRICTS * INITIAL_ORDERS;
        Tables {
            warehouse: Table::new(1, 89, w),
            district: Table::new(2, 95, w * DISTRICTS),
            customer: Table::new(3, 655, w * DISTRICTS * CUSTOMERS),
            customer_name: Table::new(4, 0, w * DISTRICTS * CUSTOMERS),
            history: Table::new(5, 46, w * DISTRICTS * CUSTOMERS),
            new_order: Table::new(6, 8, w * DISTRICTS * (INITIAL_ORDERS - FIRST_NEW_ORDER + 1)),
            order: Table::new(7, 24, orders),
            order_customer: Table::new(8, 0, orders),
            order_line: Table::new(9, 54, orders * 10),
            item: Table::new(10, 82, ITEMS),
            stock: Table::new(11, 306, w * ITEMS),
        }
    }
}

impl Tpcc {
    pub fn new(config: TpccConfig) -> Tpcc {
        let w = config.warehouses.max(1) as u64;
        let mut rng = SplitMix(config.seed ^ 0x7bcc_7bcc);
        let growth = config
            .transactions
            .map(|t| t / (w * DISTRICTS) + 1000)
            .unwrap_or(1 << 24);
        Tpcc {
            c_last: rng.below(256),
            c_id: rng.below(1024),
            ol_i_id: rng.below(8192),
            rng,
            districts: vec![
                District {
                    next_order: INITIAL_ORDERS + 1,
                    oldest_new_order: FIRST_NEW_ORDER,
                };
                (w * DISTRICTS) as usize
            ],
            history_rows: w * DISTRICTS * CUSTOMERS,
            order_cap: INITIAL_ORDERS + growth,
            t: Tables::new(w),
            queue: VecDeque::with_capacity(1024),
            done: 0,
            by_kind: [0; 5],
            config,
        }
    }

    /// Pages of the initial database (heaps and index leaves), 4 KiB each.
    pub fn database_pages(&self) -> u64 {
        let w = self.config.warehouses as u64;
        let t = &self.t;
        let customers = w * DISTRICTS * CUSTOMERS;
        let orders = w * DISTRICTS * INITIAL_ORDERS;
        let new_orders = w * DISTRICTS * (INITIAL_ORDERS - FIRST_NEW_ORDER + 1);
        let heaps = [
            (t.warehouse, w),
            (t.district, w * DISTRICTS),
            (t.customer, customers),
            (t.history, customers),
            (t.new_order, new_orders),
            (t.order, orders),
            (t.order_line, orders * LINES_MAX),
            (t.item, ITEMS),
            (t.stock, w * ITEMS),
        ];
        let heap_pages: u64 = heaps
            .iter()
            .map(|(t, rows)| rows.div_ceil(t.rows_per_page))
            .sum();
        // Index entries: every table's primary key but HISTORY's, plus the two secondary ones.
        let entries = [
            w,
            w * DISTRICTS,
            customers,
            customers,
            new_orders,
            orders,
            orders,
            orders * LINES_MAX,
            ITEMS,
            w * ITEMS,
        ];
        heap_pages + entries.iter().map(|e| e.div_ceil(FANOUT)).sum::<u64>()
    }

    pub fn config(&self) -> TpccConfig {
        self.config
    }

    /// The transaction kinds, in the order of [`Tpcc::transactions_by_kind`].
    pub const KINDS: [&'static str; 5] = [
        "new_order",
        "payment",
        "order_status",
        "delivery",
        "stock_level",
    ];

    /// Transactions generated so far, by kind.
    pub fn transactions_by_kind(&self) -> [u64; 5] {
        self.by_kind
    }

    fn nurand(&mut self, a: u64, x: u64, y: u64, c: u64) -> u64 {
        let r = self.rng.below(a + 1) | (x + self.rng.below(y - x + 1));
        ((r + c) % (y - x + 1)) + x
    }

    /// Touch row `rank` of `t`: the index path root -> leaf, then its heap page `row`.
    fn row(&mut self, t: Table, rank: u64, row: u64, access: Access) {
        for level in (0..t.height).rev() {
            let page = index_page(t, level, rank);
            let write = level == 0 && matches!(access, Access::Insert | Access::Delete);
            self.queue.push_back(PageRef { page, write });
        }
        self.heap(t, row, access);
    }

    fn heap(&mut self, t: Table, row: u64, access: Access) {
        self.queue.push_back(PageRef {
            page: t.heap | (row / t.rows_per_page),
            write: access != Access::Read,
        });
    }

    fn district_index(&self, w: u64, d: u64) -> usize {
        (w * DISTRICTS + d) as usize
    }

    fn order_rank(&self, w: u64, d: u64, o: u64) -> u64 {
        (w * DISTRICTS + d) * self.order_cap + o.min(self.order_cap - 1)
    }

    fn customer_rank(w: u64, d: u64, c: u64) -> u64 {
        (w * DISTRICTS + d) * CUSTOMERS + (c - 1)
    }

    fn random_other_warehouse(&mut self, w: u64) -> u64 {
        let n = self.config.warehouses as u64;
        if n == 1 {
            return w;
        }
        (w + 1 + self.rng.below(n - 1)) % n
    }

    /// A customer chosen by id (40 %) or by last name (60 %, through the name index).
    fn customer(&mut self, w: u64, d: u64, access: Access) -> u64 {
        let c = if self.rng.below(100) < 60 {
            let name = self.nurand(255, 0, 999, self.c_last);
            let t = self.t.customer_name;
            let rank = ((w * DISTRICTS + d) * 1000 + name) * 3 + 1;
            for level in (0..t.height).rev() {
                let page = index_page(t, level, rank);
                self.queue.push_back(PageRef { page, write: false });
            }
            name + 1001
        } else {
            self.nurand(self.config.customer_a as u64, 1, CUSTOMERS, self.c_id)
        };
        let rank = Tpcc::customer_rank(w, d, c);
        self.row(self.t.customer, rank, rank, access);
        c
    }

    /// The item of an order line from its hash `h`: NURand(item_a, 1, ITEMS) (clause 2.1.6).
    fn item(&self, h: u64) -> u64 {
        let a = self.config.item_a as u64;
        let i = ((((h >> 20) % (a + 1)) | (1 + h % ITEMS)) + self.ol_i_id) % ITEMS + 1;
        debug_assert!((1..=ITEMS).contains(&i));
        i
    }

    fn order_attr(&self, w: u64, d: u64, o: u64, salt: u64) -> u64 {
        mix(self.config.seed ^ mix((w << 48) ^ (d << 40) ^ o ^ (salt << 56)))
    }

    fn lines(&self, w: u64, d: u64, o: u64) -> u64 {
        5 + self.order_attr(w, d, o, 1) % 11
    }

    fn new_order(&mut self, w: u64, d: u64) {
        self.row(self.t.warehouse, w, w, Access::Read);
        let di = self.district_index(w, d);
        self.row(self.t.district, di as u64, di as u64, Access::Update);
        let o = self.districts[di].next_order;
        self.districts[di].next_order += 1;
        self.customer(w, d, Access::Read);
        let rank = self.order_rank(w, d, o);
        self.row(self.t.order, rank, rank, Access::Insert);
        self.row(self.t.order_customer, rank, rank, Access::Insert);
        self.row(self.t.new_order, rank, rank, Access::Insert);
        for ol in 0..self.lines(w, d, o) {
            let h = self.order_attr(w, d, o, 2 + ol);
            let i = self.item(h);
            let supply = if (h >> 40).is_multiple_of(100) {
                self.random_other_warehouse(w)
            } else {
                w
            };
            self.row(self.t.item, i - 1, i - 1, Access::Read);
            let s = supply * ITEMS + (i - 1);
            self.row(self.t.stock, s, s, Access::Update);
            let lr = rank * LINES_MAX + ol;
            self.row(self.t.order_line, lr, lr, Access::Insert);
        }
    }

    fn payment(&mut self, w: u64, d: u64) {
        self.row(self.t.warehouse, w, w, Access::Update);
        let di = self.district_index(w, d) as u64;
        self.row(self.t.district, di, di, Access::Update);
        let (cw, cd) = if self.rng.below(100) < 85 {
            (w, d)
        } else {
            (self.random_other_warehouse(w), self.rng.below(DISTRICTS))
        };
        self.customer(cw, cd, Access::Update);
        let h = self.history_rows;
        self.history_rows += 1;
        self.heap(self.t.history, h, Access::Insert);
    }

    fn order_status(&mut self, w: u64, d: u64) {
        self.customer(w, d, Access::Read);
        let di = self.district_index(w, d);
        let next = self.districts[di].next_order;
        let o = next - 1 - self.rng.below(10.min(next - 1));
        let rank = self.order_rank(w, d, o);
        self.row(self.t.order_customer, rank, rank, Access::Read);
        self.row(self.t.order, rank, rank, Access::Read);
        for ol in 0..self.lines(w, d, o) {
            let lr = rank * LINES_MAX + ol;
            self.row(self.t.order_line, lr, lr, Access::Read);
        }
    }

    fn delivery(&mut self, w: u64) {
        for d in 0..DISTRICTS {
            let di = self.district_index(w, d);
            let District {
                next_order,
                oldest_new_order: o,
            } = self.districts[di];
            if o >= next_order {
                continue; // nothing to deliver in this district
            }
            self.districts[di].oldest_new_order += 1;
            let rank = self.order_rank(w, d, o);
            self.row(self.t.new_order, rank, rank, Access::Delete);
            self.row(self.t.order, rank, rank, Access::Update);
            for ol in 0..self.lines(w, d, o) {
                let lr = rank * LINES_MAX + ol;
                self.row(self.t.order_line, lr, lr, Access::Update);
            }
            let c = 1 + self.order_attr(w, d, o, 0) % CUSTOMERS;
            let cr = Tpcc::customer_rank(w, d, c);
            self.row(self.t.customer, cr, cr, Access::Update);
        }
    }

    fn stock_level(&mut self, w: u64, d: u64) {
        let di = self.district_index(w, d);
        self.row(self.t.district, di as u64, di as u64, Access::Read);
        let next = self.districts[di].next_order;
        for o in next.saturating_sub(20).max(1)..next {
            let rank = self.order_rank(w, d, o);
            for ol in 0..self.lines(w, d, o) {
                let lr = rank * LINES_MAX + ol;
                self.row(self.t.order_line, lr, lr, Access::Read);
                let h = self.order_attr(w, d, o, 2 + ol);
                let i = self.item(h);
                let s = w * ITEMS + (i - 1);
                self.row(self.t.stock, s, s, Access::Read);
            }
        }
    }

    /// The next transaction's kind, drawn by the mix's weights (one draw below their sum).
    fn kind(&mut self) -> usize {
        let total: u64 = self.config.mix.iter().map(|&w| w as u64).sum();
        assert!(total > 0, "a TPC-C mix has a weight > 0");
        let mut x = self.rng.below(total);
        for (kind, &w) in self.config.mix.iter().enumerate() {
            if x < w as u64 {
                return kind;
            }
            x -= w as u64;
        }
        unreachable!("x < total")
    }

    /// Generate the next transaction's references into the queue.
    fn transaction(&mut self) {
        let w = self.rng.below(self.config.warehouses as u64);
        let d = self.rng.below(DISTRICTS);
        let kind = self.kind();
        match kind {
            0 => self.new_order(w, d),
            1 => self.payment(w, d),
            2 => self.order_status(w, d),
            3 => self.delivery(w),
            _ => self.stock_level(w, d),
        }
        self.by_kind[kind] += 1;
        self.done += 1;
    }
}

impl Iterator for Tpcc {
    type Item = PageRef;

    fn next(&mut self) -> Option<PageRef> {
        while self.queue.is_empty() {
            if self.config.transactions.is_some_and(|t| self.done >= t) {
                return None;
            }
            self.transaction();
        }
        self.queue.pop_front()
    }
}

/// The page of `t`'s index at `level` (0: leaves) on the path to entry `rank`.
fn index_page(t: Table, level: u32, rank: u64) -> u64 {
    t.index | ((level as u64) << 36) | (rank / FANOUT.saturating_pow(level + 1))
}

/// SplitMix64 (Steele et al.): a tiny, seedable, well-mixed generator; the per-order hashes use
/// its finalizer.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }
    /// Uniform in `0..n` (n >= 1; the modulo bias is below 2^-40 for these n).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn same_seed_same_stream_and_the_mix_holds() {
        let c = TpccConfig {
            warehouses: 2,
            transactions: Some(2000),
            seed: 7,
            ..TpccConfig::default()
        };
        let a: Vec<PageRef> = Tpcc::new(c).collect();
        let b: Vec<PageRef> = Tpcc::new(c).collect();
        assert_eq!(a, b);
        assert!(a.iter().any(|r| r.write) && a.iter().any(|r| !r.write));
        // Every object is referenced; ITEM and STOCK (new-order lines) dominate.
        let mut per_object: HashMap<u64, usize> = HashMap::new();
        for r in &a {
            *per_object.entry(r.page >> 40).or_default() += 1;
        }
        for obj in [1, 2, 3, 5, 6, 7, 9, 10, 11] {
            assert!(per_object.contains_key(&obj), "table {obj} never touched");
        }
    }

    #[test]
    fn the_mix_is_45_43_4_4_4_and_customers_are_skewed() {
        let c = TpccConfig {
            warehouses: 1,
            transactions: Some(40_000),
            seed: 3,
            ..TpccConfig::default()
        };
        let mut g = Tpcc::new(c);
        let mut customer_heap: HashMap<u64, u64> = HashMap::new();
        for r in g.by_ref() {
            if r.page >> 40 == 3 {
                *customer_heap.entry(r.page).or_default() += 1;
            }
        }
        let n = g.transactions_by_kind();
        assert_eq!(n.iter().sum::<u64>(), 40_000);
        for (got, want) in n.iter().zip([45.0, 43.0, 4.0, 4.0, 4.0]) {
            let pct = *got as f64 / 400.0;
            assert!((pct - want).abs() < 1.0, "{n:?}");
        }
        // NURand: the hottest tenth of CUSTOMER pages gets well over a tenth of the references.
        let mut counts: Vec<u64> = customer_heap.into_values().collect();
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let top: u64 = counts[..counts.len() / 10].iter().sum();
        let share = top as f64 / counts.iter().sum::<u64>() as f64;
        assert!(share > 0.15, "top 10 % of customer pages: {share}");
    }

    #[test]
    fn default_database_is_about_p3s_size() {
        let t = Tpcc::new(TpccConfig::default());
        let gb = t.database_pages() as f64 * 4096.0 / 1e9;
        eprintln!(
            "default TPC-C database: {} pages, {gb:.3} GB",
            t.database_pages()
        );
        assert!((1.4..1.7).contains(&gb), "{gb} GB");
    }

    #[test]
    fn config_parses_and_rejects() {
        let c = TpccConfig::parse("w=3, transactions=10,seed=9").unwrap();
        assert_eq!((c.warehouses, c.transactions, c.seed), (3, Some(10), 9));
        assert_eq!(TpccConfig::parse("-").unwrap(), TpccConfig::default());
        assert!(TpccConfig::parse("warehouses=0").is_err());
        assert!(TpccConfig::parse("color=blue").is_err());
        let k = TpccConfig::parse("mix=0:50:50:0:0,item_a=0,customer_a=255").unwrap();
        assert_eq!((k.mix, k.item_a, k.customer_a), ([0, 50, 50, 0, 0], 0, 255));
        assert!((k.read_only_share() - 0.5).abs() < 1e-12);
        for bad in [
            "mix=1:2:3",
            "mix=0:0:0:0:0",
            "mix=1:2:3:4:x",
            "item_a=100000",
        ] {
            assert!(TpccConfig::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_knobs_move_the_dirty_share_and_the_hot_set() {
        let base = TpccConfig {
            warehouses: 1,
            transactions: Some(5_000),
            seed: 5,
            ..TpccConfig::default()
        };
        let dirty = |c: TpccConfig| {
            let refs: Vec<PageRef> = Tpcc::new(c).collect();
            refs.iter().filter(|r| r.write).count() as f64 / refs.len() as f64
        };
        let read_mostly = TpccConfig {
            mix: [10, 10, 40, 0, 40],
            ..base
        };
        assert!(dirty(read_mostly) < 0.5 * dirty(base));
        // Distinct STOCK pages: uniform item ids touch more of them than NURand's hot set.
        let stock_pages = |c: TpccConfig| {
            let mut seen = std::collections::HashSet::new();
            for r in Tpcc::new(c).filter(|r| r.page >> 40 == 11) {
                seen.insert(r.page);
            }
            seen.len()
        };
        let small = TpccConfig {
            transactions: Some(300),
            ..base
        };
        let uniform = TpccConfig { item_a: 0, ..small };
        assert!(stock_pages(uniform) > stock_pages(small));
    }
}
