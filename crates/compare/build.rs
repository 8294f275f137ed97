//! Links RocksDB's C API from the system library when the `rocksdb` feature is on.
//!
//! Why the system library and not the `rocksdb` crate: that crate compiles RocksDB's C++
//! from source (minutes on a 2-core machine) and needs libclang for its bindings; Debian
//! ships the library built (`librocksdb-dev`), and the few C functions the adapter calls are
//! declared by hand in `src/rocks.rs`.
//!
//! Where the library is looked for, in order: `ROCKSDB_LIB_DIR`, `pkg-config --libs rocksdb`,
//! then the standard library directories. Absent everywhere, the build stops and names the
//! package to install.

use std::path::Path;
use std::process::Command;

const STANDARD_DIRS: [&str; 4] = [
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib",
    "/usr/local/lib",
];

fn main() {
    println!("cargo:rerun-if-env-changed=ROCKSDB_LIB_DIR");
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_FEATURE_ROCKSDB").is_none() {
        return;
    }
    match find() {
        Some(Found::Dir(dir)) => println!("cargo:rustc-link-search=native={dir}"),
        Some(Found::PkgConfig(flags)) => {
            for dir in flags
                .split_whitespace()
                .filter_map(|f| f.strip_prefix("-L"))
            {
                println!("cargo:rustc-link-search=native={dir}");
            }
        }
        None => panic!(
            "the `rocksdb` feature links the system RocksDB library (librocksdb.so), which was \
             not found in ROCKSDB_LIB_DIR, by `pkg-config rocksdb`, or in {STANDARD_DIRS:?}. \
             Install it with `apt-get install librocksdb-dev` (or run scripts/setup-rocksdb), \
             or build without `--features rocksdb`."
        ),
    }
    println!("cargo:rustc-link-lib=dylib=rocksdb");
}

enum Found {
    Dir(String),
    PkgConfig(String),
}

fn has_lib(dir: &str) -> bool {
    Path::new(dir).join("librocksdb.so").exists()
}

fn find() -> Option<Found> {
    if let Ok(dir) = std::env::var("ROCKSDB_LIB_DIR") {
        return has_lib(&dir).then_some(Found::Dir(dir));
    }
    let pkg = Command::new("pkg-config")
        .args(["--libs", "rocksdb"])
        .output()
        .ok()
        .filter(|o| o.status.success());
    if let Some(o) = pkg {
        return Some(Found::PkgConfig(
            String::from_utf8_lossy(&o.stdout).into_owned(),
        ));
    }
    STANDARD_DIRS
        .iter()
        .find(|d| has_lib(d))
        .map(|d| Found::Dir((*d).to_string()))
}
