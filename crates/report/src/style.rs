//! One look per name across every figure: a policy, scheme, mode or variant is drawn in the
//! same colour and with the same marker shape in every chart of every experiment (and in
//! `sim --plot`), so a reader learns it once. [`style_of`] is the only place a chart gets a
//! series' look.
//!
//! The rule, in order: a name in the registry ([`KNOWN`]) has its fixed look; a name that
//! starts with a registered name followed by a variant (`dftl, spare = preset`,
//! `per-type (gc separate)`, `as16`) has that name's colour and a marker of its own, picked
//! from the variant (a number by its log₂, words by a hash); any other name gets a
//! deterministic slot from a hash of its text. Case, surrounding blanks, `_` for `-` and an
//! `ours: ` / `paper: ` prefix do not change the look, so ours and the paper's line of one
//! scheme match (the paper's is drawn hollow and dashed on top of that).

/// A marker shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    Circle,
    Square,
    TriangleUp,
    Diamond,
    TriangleDown,
    Cross,
    Plus,
}

/// Every shape, in slot order.
pub const SHAPES: [Shape; 7] = [
    Shape::Circle,
    Shape::Square,
    Shape::TriangleUp,
    Shape::Diamond,
    Shape::TriangleDown,
    Shape::Cross,
    Shape::Plus,
];

/// The colours, in slot order (Tableau-like, distinguishable in print and for most readers).
pub const COLORS: [(u8, u8, u8); 12] = [
    (31, 119, 180),  // blue
    (255, 127, 14),  // orange
    (44, 160, 44),   // green
    (214, 39, 40),   // red
    (148, 103, 189), // purple
    (140, 86, 75),   // brown
    (227, 119, 194), // pink
    (23, 190, 207),  // cyan
    (188, 189, 34),  // olive
    (31, 60, 110),   // navy
    (0, 128, 128),   // teal
    (200, 150, 0),   // gold
];

/// How one series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Style {
    pub color: (u8, u8, u8),
    pub shape: Shape,
}

/// The registry: each known name (and its aliases) with its colour slot and shape slot. No
/// two entries share both; names that appear in one experiment differ in colour.
pub const KNOWN: &[(&[&str], usize, usize)] = &[
    // buffer policies (P3)
    (&["lru"], 0, 0),
    (&["2q"], 1, 1),
    (&["lru-ext"], 2, 2),
    (&["2q-ext"], 3, 3),
    (&["2q-flash"], 4, 4),
    (&["dram"], 5, 5),
    // FTL schemes (P4, sim)
    (&["page"], 5, 1),
    (&["dftl"], 0, 3),
    (&["bast"], 3, 0),
    (&["fast"], 2, 1),
    (&["ioa"], 4, 2),
    (&["block"], 8, 4),
    // stream policies (P5)
    (&["none"], 9, 0),
    (&["per-type"], 1, 2),
    (&["merge-similar"], 2, 3),
    (&["merge-different"], 3, 4),
    (&["per-file"], 4, 1),
    (&["auto"], 7, 5),
    (&["oracle"], 11, 6),
    (&["sepbit"], 10, 3),
    // scan modes (P2)
    (&["sync"], 9, 1),
    (&["batched"], 0, 1),
    (&["sorted"], 1, 3),
    (&["adaptive"], 2, 4),
    // trees (P1)
    (&["btree", "b-tree", "in-place", "in-place b-tree"], 9, 2),
    (&["bftl"], 3, 1),
    (&["as", "as-btree", "as b-tree"], 0, 4),
    // data types (P5 lifetimes)
    (&["superblock"], 3, 5),
    (&["header"], 1, 0),
    (&["index"], 4, 3),
    (&["data"], 2, 5),
    // statistics over time (sim)
    (&["mean"], 0, 2),
    (&["p99"], 1, 6),
    (&["p99.9"], 3, 2),
    (&["max"], 9, 5),
    (&["waf cumulative"], 0, 5),
    (&["waf per interval"], 1, 4),
];

/// The name a look is keyed by: `ours: 2Q_Ext ` -> `2q-ext`.
pub fn normalize(name: &str) -> String {
    let mut n = name.trim().to_lowercase().replace('_', "-");
    for prefix in ["ours:", "paper:"] {
        if let Some(rest) = n.strip_prefix(prefix) {
            n = rest.trim().to_string();
        }
    }
    n
}

/// FNV-1a: stable across runs, platforms and Rust versions (std's hasher is not).
fn fnv1a(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn registered(n: &str) -> Option<(usize, usize)> {
    KNOWN
        .iter()
        .find(|(names, _, _)| names.contains(&n))
        .map(|&(_, c, s)| (c, s))
}

/// The longest registered name that `n` starts with, followed by a variant; and the variant.
fn base_of(n: &str) -> Option<((usize, usize), &str)> {
    let mut best: Option<(&str, (usize, usize))> = None;
    for (names, c, s) in KNOWN {
        for base in *names {
            let Some(rest) = n.strip_prefix(base) else {
                continue;
            };
            let boundary = rest.starts_with([',', ' ', '(', '[', '=', ':']) // a suffix in words
                || rest.starts_with(|ch: char| ch.is_ascii_digit()); // as16
            if boundary && best.is_none_or(|(b, _)| base.len() > b.len()) {
                best = Some((base, (*c, *s)));
            }
        }
    }
    best.map(|(base, slots)| (slots, &n[base.len()..]))
}

/// The marker slot of a variant: a number by its log₂ (powers of two differ), words by hash;
/// never the base's own marker.
fn variant_shape(variant: &str, base_shape: usize) -> usize {
    let digits: String = variant
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let k = match digits.parse::<f64>() {
        Ok(v) if v > 0.0 && variant.trim_start_matches([' ', ',', '=']).len() <= 12 => {
            v.log2().round().abs() as u64
        }
        _ => fnv1a(variant.trim()),
    };
    let others = SHAPES.len() as u64 - 1;
    (base_shape + 1 + (k % others) as usize) % SHAPES.len()
}

/// How series `name` is drawn, in every figure.
pub fn style_of(name: &str) -> Style {
    let n = normalize(name);
    let (color, shape) = match (registered(&n), base_of(&n)) {
        (Some(slots), _) => slots,
        (None, Some(((c, s), variant))) => (c, variant_shape(variant, s)),
        (None, None) => {
            let h = fnv1a(&n);
            (
                (h % COLORS.len() as u64) as usize,
                ((h >> 32) % SHAPES.len() as u64) as usize,
            )
        }
    };
    Style {
        color: COLORS[color],
        shape: SHAPES[shape],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_names_have_distinct_looks() {
        let mut seen = std::collections::HashMap::new();
        for (names, c, s) in KNOWN {
            assert!(*c < COLORS.len() && *s < SHAPES.len(), "{names:?}");
            if let Some(other) = seen.insert((*c, *s), names) {
                panic!("{names:?} and {other:?} share a look");
            }
        }
    }

    #[test]
    fn one_name_one_look_whatever_its_prefix_or_case() {
        assert_eq!(style_of("ours: 2Q_Ext"), style_of("2q-ext"));
        assert_eq!(style_of("paper: dftl"), style_of("dftl"));
        assert_eq!(style_of("in_place"), style_of("btree"));
        assert_ne!(style_of("2q"), style_of("2q-ext"));
    }

    #[test]
    fn variants_keep_the_colour_and_take_another_marker() {
        let base = style_of("dftl");
        let v = style_of("dftl, spare = preset");
        assert_eq!(v.color, base.color);
        assert_ne!(v.shape, base.shape);
        let sizes: Vec<Shape> = [16, 32, 64, 128]
            .iter()
            .map(|n| style_of(&format!("as{n}")).shape)
            .collect();
        for (i, a) in sizes.iter().enumerate() {
            assert!(!sizes[i + 1..].contains(a), "{sizes:?}");
        }
        assert_eq!(
            style_of("per-type (gc separate)").color,
            style_of("per-type").color
        );
    }

    #[test]
    fn unknown_names_get_a_stable_slot() {
        assert_eq!(style_of("flash-cache"), style_of("Flash-Cache"));
        // FNV-1a is fixed, so this slot is the same on every machine and every release.
        assert_eq!(fnv1a("a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn the_series_of_one_chart_look_apart() {
        // Series drawn together: P4's schemes and DFTL variants, FDP's placements.
        for group in [
            &[
                "dftl, spare = log_space",
                "dftl, spare = one pool",
                "dftl, spare = preset",
                "bast",
                "ioa",
                "fast",
                "page",
            ][..],
            &[
                "no placement",
                "per-engine handles",
                "oracle (death times known)",
            ][..],
        ] {
            let looks: Vec<Style> = group.iter().map(|n| style_of(n)).collect();
            for (i, a) in looks.iter().enumerate() {
                for (j, b) in looks.iter().enumerate().skip(i + 1) {
                    assert!(
                        a.color != b.color || a.shape != b.shape,
                        "{} and {} look alike",
                        group[i],
                        group[j]
                    );
                }
            }
        }
    }
}
