//! A test whose shared data (`../shared/traces`, outside the repository) is absent must show
//! up as ignored in the suite's summary, not as passed: every test file of the workspace that
//! reads `shared/traces` marks such tests `#[ignore = "needs ../shared/traces"]` instead of
//! returning early, and `.ci/run` runs the README's one test command,
//! `cargo test --workspace --release && bash .ci/more-tests`, whose second part runs them
//! (`-- --ignored`) with the command docs/testing.md gives.

use std::path::{Path, PathBuf};

const IGNORE: &str = "#[ignore = \"needs ../shared/traces\"]";
const IGNORED_COMMAND: &str = "cargo test --workspace --release -- --ignored";
/// The README's test command: the Rust suites, then the rest of the suite.
const TEST_COMMAND: &str = "cargo test --workspace --release && bash .ci/more-tests";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file under `crates/*/tests`.
fn test_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for krate in std::fs::read_dir(workspace().join("crates")).unwrap() {
        let Ok(dir) = std::fs::read_dir(krate.unwrap().path().join("tests")) else {
            continue;
        };
        for f in dir {
            let p = f.unwrap().path();
            if p.extension().is_some_and(|e| e == "rs") {
                files.push(p);
            }
        }
    }
    assert!(files.len() > 5, "found the test files: {files:?}");
    files
}

#[test]
fn tests_that_read_shared_traces_are_ignored_not_silently_passed() {
    let me = file!().rsplit('/').next().unwrap();
    let mut users = 0;
    for f in test_files() {
        if f.ends_with(me) {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        if !text.contains("shared/traces") {
            continue;
        }
        users += 1;
        assert!(text.contains(IGNORE), "{}: no {IGNORE}", f.display());
        for quiet_skip in ["skipping:", "skipped:", "else { return }"] {
            assert!(
                !text.contains(quiet_skip),
                "{}: returns early (`{quiet_skip}`) instead of being ignored",
                f.display()
            );
        }
    }
    assert!(users >= 3, "the trace tests were found ({users})");
}

#[test]
fn ci_runs_the_ignored_tests_with_the_readmes_command() {
    // `.ci/run` runs the README's test command (the Rust suites, then `.ci/more-tests`).
    let run = std::fs::read_to_string(workspace().join(".ci/run")).unwrap();
    let more = std::fs::read_to_string(workspace().join(".ci/more-tests")).unwrap();
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    // The README's test command, as a line of its own in both.
    let is_test_command = |l: &str| l.split('#').next().unwrap().trim() == TEST_COMMAND;
    assert!(
        run.lines().any(is_test_command),
        ".ci/run runs `{TEST_COMMAND}`"
    );
    assert!(
        readme.lines().any(is_test_command),
        "the README gives `{TEST_COMMAND}`"
    );
    // The README's only test command in a code block is that one.
    let in_blocks: Vec<&str> = readme
        .split("```")
        .skip(1)
        .step_by(2)
        .flat_map(|b| b.lines().skip(1))
        .filter(|l| l.contains("test"))
        .collect();
    assert_eq!(in_blocks, [TEST_COMMAND], "the README's test commands");
    // `.ci/more-tests` runs the ignored ones when the traces are there; the testing doc gives
    // both commands.
    let testing = std::fs::read_to_string(workspace().join("docs/testing.md")).unwrap();
    assert!(more.contains(IGNORED_COMMAND) && more.contains("[ -d ../shared/traces ]"));
    for cmd in [TEST_COMMAND, IGNORED_COMMAND] {
        assert!(testing.contains(cmd), "docs/testing.md gives {cmd}");
    }
    // `-- --ignored` runs only these: no other test may be ignored.
    for f in test_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        for line in text
            .lines()
            .filter(|l| l.trim_start().starts_with("#[ignore"))
        {
            assert_eq!(line.trim(), IGNORE, "{}: another ignored test", f.display());
        }
    }
}
