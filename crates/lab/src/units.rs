//! Parsing of human sizes ("4GiB", "256MB", "4096") and volumes ("5x").

/// Parse a byte size: a number with an optional unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB,
/// K/M/G/T meaning binary). Returns a message naming what was wrong.
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| {
        format!("`{s}` is not a size: expected a number with an optional unit, e.g. 4GiB")
    })?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        other => {
            return Err(format!(
                "`{s}`: unknown size unit `{other}` (use B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)"
            ))
        }
    };
    let bytes = value * mult as f64;
    if !(1.0..1.8e19).contains(&bytes) {
        return Err(format!("`{s}` is out of range"));
    }
    Ok(bytes.round() as u64)
}

/// Parse a volume in multiples of the logical capacity: "5x", "0.5x" or "5".
pub fn parse_multiple(s: &str) -> Result<f64, String> {
    let t = s.trim().trim_end_matches(['x', 'X']);
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!(
            "`{s}` is not a multiple of the capacity: expected e.g. 5x or 0.5x"
        )),
    }
}

/// A byte count for people: "512 B", "1.5 KiB", "34.0 GiB" (binary units, one decimal).
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts_print_compactly() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(1536), "1.5 KiB");
        assert_eq!(format_bytes(34 << 30), "34.0 GiB");
        assert_eq!(format_bytes(u64::MAX), "16.0 EiB");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("4GiB").unwrap(), 4 << 30);
        assert_eq!(parse_bytes("4096").unwrap(), 4096);
        assert_eq!(parse_bytes("256MB").unwrap(), 256_000_000);
        assert_eq!(parse_bytes("16TiB").unwrap(), 16 << 40);
        assert_eq!(parse_bytes("1.5k").unwrap(), 1536);
        assert!(parse_bytes("4 parsecs").unwrap_err().contains("unit"));
        assert!(parse_bytes("").is_err());
    }

    #[test]
    fn multiples() {
        assert_eq!(parse_multiple("5x").unwrap(), 5.0);
        assert_eq!(parse_multiple("0.5").unwrap(), 0.5);
        assert!(parse_multiple("-1x").is_err());
    }
}
