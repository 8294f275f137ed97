//! Every repository path that README.md and docs/*.md name in backticks (`crates/...`,
//! `docs/...`, `.ci/...`) exists, so a moved or renamed file cannot leave the docs behind.
//! A path the docs must keep naming while it is gone can be listed in [`STALE`]; the test
//! fails as soon as one of them is no longer named (so the list only shrinks).

use std::path::{Path, PathBuf};

/// `(doc, path)` that the docs name and that no longer exist, until the docs are rewritten.
const STALE: &[(&str, &str)] = &[];

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The backticked spans of `text` that start with a repository directory.
fn named_paths(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| {
            ["crates/", "docs/", ".ci/"]
                .iter()
                .any(|p| s.starts_with(p))
        })
        .filter(|s| !s.contains(' ') && !s.contains('*') && !s.contains('<'))
        .map(|s| s.trim_end_matches([':', ',', '.']).to_string())
        .collect()
}

fn docs() -> Vec<PathBuf> {
    let root = repo_root();
    let mut files = vec![root.join("README.md")];
    if let Ok(dir) = std::fs::read_dir(root.join("docs")) {
        let mut md: Vec<PathBuf> = dir
            .filter_map(|e| Some(e.ok()?.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect();
        md.sort();
        files.extend(md);
    }
    files
}

#[test]
fn every_path_the_docs_name_exists() {
    let root = repo_root();
    let mut missing = Vec::new();
    let mut stale_named = Vec::new();
    for doc in docs() {
        let text = std::fs::read_to_string(&doc).expect("a doc file is readable");
        let name = doc
            .strip_prefix(&root)
            .unwrap_or(&doc)
            .display()
            .to_string();
        for p in named_paths(&text) {
            if root.join(&p).exists() {
                continue;
            }
            match STALE.contains(&(name.as_str(), p.as_str())) {
                true => stale_named.push((name.clone(), p)),
                false => missing.push(format!("{name}: `{p}`")),
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs name missing paths:\n{}",
        missing.join("\n")
    );
    for (doc, p) in STALE {
        assert!(
            stale_named.iter().any(|(d, q)| d == doc && q == p),
            "{doc} no longer names `{p}`: drop it from STALE"
        );
    }
}

#[test]
fn paths_are_found_in_backticks_only() {
    let text = "see `crates/lab/src/claim.rs`, `cargo test`, crates/x and `docs/design.md`.";
    assert_eq!(
        named_paths(text),
        ["crates/lab/src/claim.rs", "docs/design.md"]
    );
    assert!(repo_root().join("crates/lab/src/claim.rs").exists());
    assert!(
        !repo_root().join("crates/lab/papers/p3.toml").exists(),
        "moved: the check can fail"
    );
}
