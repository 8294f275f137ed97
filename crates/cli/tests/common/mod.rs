//! Helpers shared by the CLI integration tests (`mod common;` in each test file).
#![allow(dead_code)] // each test file uses part of it

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// Run the built `flashlab` binary with `args` and wait for it.
pub fn flashlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(args)
        .output()
        .expect("run flashlab")
}

/// The run succeeded and printed one JSON object: that object.
pub fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// The run's standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `p` as a command-line argument.
pub fn path_str(p: &Path) -> String {
    p.display().to_string()
}
