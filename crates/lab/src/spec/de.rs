//! Lenient field deserializers for run specs: a number where text is expected reads as its
//! decimal text, and text where a number is expected is parsed, so `op = "0.28"` and
//! `op = 0.28` (or `capacity = 65536`) are the same option, as on the command line. A value
//! that does not parse fails with the parser's message (`invalid float literal`).

use serde::de::{Deserialize, Deserializer, Error};
use serde_json::Value;
use std::fmt::Display;
use std::str::FromStr;

/// A value as command-line text: strings as they are, numbers and booleans as their text.
fn string_of(v: Value) -> Result<String, String> {
    match v {
        Value::String(s) => Ok(s),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        other => Err(format!(
            "expected a string, a number or a boolean, got {other}"
        )),
    }
}

fn parse<T: FromStr>(v: Value) -> Result<T, String>
where
    T::Err: Display,
{
    string_of(v)?.parse::<T>().map_err(|e| e.to_string())
}

/// A number or any `FromStr` value (or its text).
pub fn parsed<'de, D: Deserializer<'de>, T: FromStr>(d: D) -> Result<T, D::Error>
where
    T::Err: Display,
{
    parse(Value::deserialize(d)?).map_err(D::Error::custom)
}

/// An optional `FromStr` value (or its text); null: none.
pub fn opt_parsed<'de, D: Deserializer<'de>, T: FromStr>(d: D) -> Result<Option<T>, D::Error>
where
    T::Err: Display,
{
    match Value::deserialize(d)? {
        Value::Null => Ok(None),
        v => parse(v).map(Some).map_err(D::Error::custom),
    }
}

/// Text (a number reads as its decimal text).
pub fn string<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    string_of(Value::deserialize(d)?).map_err(D::Error::custom)
}

/// Optional text; null: none.
pub fn opt_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    match Value::deserialize(d)? {
        Value::Null => Ok(None),
        v => string_of(v).map(Some).map_err(D::Error::custom),
    }
}

/// A flag: a boolean, or its text `true` / `false`.
pub fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    match Value::deserialize(d)? {
        Value::Bool(b) => Ok(b),
        v => parse(v).map_err(D::Error::custom),
    }
}
